/** The kinds of value a setting takes: listen addresses, byte sizes, the checks and the sentence that names a bad value. */
import { describe as suite, expect, it } from 'vitest';
import { describe, isLoopback, KINDS, parseByteSize, parseListenAddress } from '../src/configValues.js';

suite('listen addresses', () => {
  it.each([
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    [':9478', { host: '0.0.0.0', port: 9478 }],
    ['[::1]:80', { host: '::1', port: 80 }],
    ['localhost:8080', { host: 'localhost', port: 8080 }],
  ])('%s', (text, expected) => {
    expect(parseListenAddress(text)).toEqual(expected);
  });

  it.each(['127.0.0.1', '127.0.0.1:65536', 'host:port', '[::1:80', ''])('refuses %j', (text) => {
    expect(() => parseListenAddress(text)).toThrow('expected host:port, [ipv6]:port or :port with a port from 0 to 65535');
  });

  it('knows the loopback hosts', () => {
    expect(['localhost', '::1', '127.0.0.1', '127.1.2.3'].map(isLoopback)).toEqual([true, true, true, true]);
    expect(['0.0.0.0', '10.0.0.1', '::', '128.0.0.1', 'localhost.example'].map(isLoopback)).toEqual([false, false, false, false, false]);
  });
});

suite('byte sizes', () => {
  it.each([
    ['201326592', 201_326_592],
    ['192Mi', 192 * 2 ** 20],
    ['192MiB', 192 * 2 ** 20],
    ['192 mib', 192 * 2 ** 20],
    ['256MB', 256e6],
    ['256M', 256e6],
    ['1GiB', 2 ** 30],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['64k', 64_000],
    ['64KiB', 65_536],
    ['0', 0],
  ])('%s is %d bytes', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });

  it('takes whole numbers of bytes, and refuses fractions of a byte, negative sizes and unknown units', () => {
    expect(parseByteSize(4096)).toBe(4096);
    expect([1.5, -1, Number.NaN, 2 ** 53].map(parseByteSize)).toEqual([undefined, undefined, undefined, undefined]);
    expect(['192 megs', '-1', '1.5.2Mi', 'Mi', '', true].map(parseByteSize)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
    expect(parseByteSize('0.5k')).toBe(500);
    expect(parseByteSize('0.3')).toBeUndefined();
  });
});

suite('kinds', () => {
  it('check values and say what a bad one must be', () => {
    expect(KINDS.bytes.schema.safeParse('0').success).toBe(false);
    expect(KINDS.bytesOrZero.schema.safeParse('0').data).toBe(0);
    expect(KINDS.positiveInt.schema.safeParse('12').data).toBe(12);
    expect(KINDS.boolean.schema.safeParse('true').data).toBe(true);
    expect(KINDS.boolean.schema.safeParse('yes').success).toBe(false);
    expect(KINDS.address.schema.safeParse(':9478').data).toEqual({ host: '0.0.0.0', port: 9478 });
    expect(KINDS.path.schema.safeParse('metrics').success).toBe(false);
    expect(KINDS.nativeBuckets.expected).toBe('a whole number from 1 to 160');
    expect(KINDS.logFormat.expected).toBe('json or logfmt');
  });
});

suite('the subject of an error sentence', () => {
  it('names the setting, its value and where it came from', () => {
    expect(describe({ flag: 'ingest.queue-capacity', value: 'many', origin: { from: 'flag' } })).toBe('--ingest.queue-capacity=many (from the command line)');
    expect(describe({ flag: 'ingest.queue-capacity', value: 'many', origin: { from: 'env', name: 'HERMES_SIDECAR_INGEST_QUEUE_CAPACITY' } })).toBe(
      'HERMES_SIDECAR_INGEST_QUEUE_CAPACITY=many (from the environment, for --ingest.queue-capacity)',
    );
    expect(describe({ flag: 'ingest.queue-capacity', value: 0, origin: { from: 'file', key: 'ingest.queue_capacity', path: '/etc/s.yaml' } })).toBe(
      'ingest.queue_capacity: 0 in the config file /etc/s.yaml',
    );
    expect(describe({ flag: 'web.listen-address', value: '0.0.0.0:9478', origin: { from: 'default' } })).toBe('the default of --web.listen-address (0.0.0.0:9478)');
  });
});
