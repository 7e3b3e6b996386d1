/**
 * The config file read strictly: option values by flag with their key as written, the sections
 * only the file holds (labels, buckets, prices) validated, and every mistake an error that names
 * the key, says what was expected and, for a near miss, the key meant.
 */
import { describe, expect, it } from 'vitest';
import { oneOf, readConfigFile, show } from '../src/configFile.js';
import { ConfigError } from '../src/errors.js';

const FLAGS = ['ingest.queue-capacity', 'ingest.max-id-bytes', 'web.listen-address', 'metrics.series-ttl'];
const PATH = '/etc/sidecar.yaml';
const NAMED = '--config.file=/etc/sidecar.yaml (from the command line)';

const read = (text: string) => readConfigFile(text, PATH, NAMED, FLAGS);

function failure(text: string): string {
  try {
    read(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('read without an error');
}

describe('readConfigFile', () => {
  it('reads option values by flag, with the key as the file wrote it (dashes or underscores)', () => {
    const file = read('ingest:\n  queue_capacity: 2048\n  max-id-bytes: "512"\nweb:\n  listen_address: ":9400"\nmetrics:\n');
    expect([...file.settings]).toEqual([
      ['ingest.queue-capacity', { value: 2048, key: 'ingest.queue_capacity' }],
      ['ingest.max-id-bytes', { value: '512', key: 'ingest.max-id-bytes' }],
      ['web.listen-address', { value: ':9400', key: 'web.listen_address' }],
    ]);
    expect(file).toMatchObject({ path: PATH, labels: {}, buckets: {}, prices: [] });
  });

  it('reads an empty file, and empty values, as nothing set', () => {
    expect(read('').settings.size).toBe(0);
    expect(read('ingest:\n  queue_capacity:\n').settings.size).toBe(0);
  });

  it('reads label rules, bucket overrides and prices', () => {
    const file = read(
      [
        'labels:',
        '  model: {cap: 32, allow: [a, b], rewrite: {"gpt4": "gpt-4", "__proto__": "x"}}',
        '  tool:',
        'buckets:',
        '  tool_seconds: [0.1, 1, 10]',
        'prices:',
        '  openrouter:',
        '    acme/model-a: {input: 3, output: "15", cache_read: 0.3}',
      ].join('\n'),
    );
    expect(file.labels.model).toEqual({ cap: 32, allow: ['a', 'b'], rewrite: { gpt4: 'gpt-4', ['__proto__']: 'x' } });
    expect(Object.keys(file.labels.model?.rewrite ?? {})).toEqual(['gpt4', '__proto__']);
    expect(file.labels.tool).toEqual({});
    expect(file.buckets).toEqual({ tool_seconds: [0.1, 1, 10] });
    expect(file.prices).toEqual([{ provider: 'openrouter', model: 'acme/model-a', input: 3, output: 15, cacheRead: 0.3, cacheWrite: undefined }]);
  });

  it.each([
    ['ingest:\n  queue_capacty: 1\n', 'ingest.queue_capacty in the config file /etc/sidecar.yaml is not a known key: did you mean ingest.queue_capacity?'],
    ['listen_address: ":1"\n', 'listen_address in the config file /etc/sidecar.yaml is not a known key: did you mean web.listen_address?'],
    ['ingest:\n  zzz: 1\n', 'ingest.zzz in the config file /etc/sidecar.yaml is not a known key: expected one of queue_capacity or max_id_bytes.'],
    ['ingest: 5\n', 'ingest in the config file /etc/sidecar.yaml is 5 but must be a mapping of queue_capacity or max_id_bytes.'],
    ['ingest:\n  queue_capacity: 1\n  queue-capacity: 2\n', 'ingest.queue-capacity in the config file /etc/sidecar.yaml sets the same option as ingest.queue_capacity: keep one of them.'],
    ['labels:\n  colour: {cap: 1}\n', 'labels.colour in the config file /etc/sidecar.yaml is not a known key: expected one of'],
    ['labels:\n  model: {cap: 0}\n', 'labels.model.cap: 0 in the config file /etc/sidecar.yaml must be a positive whole number.'],
    ['labels:\n  model: {rewrite: {a: 1}}\n', 'labels.model.rewrite: {"a":1} in the config file /etc/sidecar.yaml must be a mapping from label values to label values (strings).'],
    ['buckets:\n  tool_seconds: [1, 1]\n', 'buckets.tool_seconds: [1,1] in the config file /etc/sidecar.yaml must be a non-empty list of finite numbers in strictly increasing order.'],
    ['prices:\n  p:\n    m: {input: 1}\n', 'prices.p.m.output in the config file /etc/sidecar.yaml is missing: a price needs input and output (USD per million tokens).'],
    ['prices:\n  p:\n    m: {input: -1, output: 1}\n', 'prices.p.m.input: -1 in the config file /etc/sidecar.yaml must be a price in USD per million tokens, from 0 to 1000000.'],
    ['prices:\n  "":\n    m: {input: 1, output: 1}\n', 'prices. in the config file /etc/sidecar.yaml has an empty provider name: expected a provider such as openrouter.'],
    ['prices:\n  p: [1]\n', 'prices.p in the config file /etc/sidecar.yaml is a list but must be a mapping of models to prices.'],
  ])('refuses %j with a message naming the key', (text, message) => {
    expect(failure(text)).toContain(message);
  });

  it('refuses a file that is not YAML, or not a mapping, naming how the file was given', () => {
    expect(failure('ingest: [1,\n')).toMatch(/^--config\.file=\/etc\/sidecar\.yaml \(from the command line\) names a file that is not valid YAML: .*\(line \d+, column \d+\)\.$/);
    expect(failure('- a\n- b\n')).toBe(`${NAMED} names a file that holds a list, but it must hold a mapping of settings such as "ingest: {queue_capacity: 2048}".`);
  });
});

describe('show and oneOf', () => {
  it('show prints plain text as it is, anything else as JSON, at most 64 characters', () => {
    expect(show('plain')).toBe('plain');
    expect(show(' padded')).toBe('" padded"');
    expect(show('line\nbreak')).toBe('"line\\nbreak"');
    expect(show(['a', 1])).toBe('["a",1]');
    expect(show(undefined)).toBe('undefined');
    expect(show('x'.repeat(100))).toBe(`${'x'.repeat(63)}…`);
  });

  it('oneOf joins names as a sentence', () => {
    expect(oneOf([])).toBe('');
    expect(oneOf(['a'])).toBe('a');
    expect(oneOf(['a', 'b', 'c'])).toBe('a, b or c');
  });
});
