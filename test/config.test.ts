import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, envName, helpText, loadConfig, OPTIONS, parseListenAddress } from '../src/config.js';
import { DEFAULT_BUCKETS } from '../src/metrics/catalogue.js';

const tempFile = (name: string, text: string): string => {
  const file = join(mkdtempSync(join(tmpdir(), 'sidecar-config-')), name);
  writeFileSync(file, text);
  return file;
};

describe('defaults', () => {
  it('are the documented ones', () => {
    const config = loadConfig({ argv: [], env: {} });
    expect(config.web).toEqual({ listen: { host: '0.0.0.0', port: 9478 }, telemetryPath: '/metrics' });
    expect(config.ingest).toEqual({
      listen: { host: '127.0.0.1', port: 9479 },
      token: undefined,
      maxBodyBytes: 16 * 1024 * 1024,
      maxEventsPerRequest: 10_000,
      maxLineBytes: 64 * 1024,
      maxJsonBytes: 1024 * 1024,
      maxInflightBytes: 64 * 1024 * 1024,
      bodyTimeoutSeconds: 10,
      queueCapacity: 1024,
      queueMaxEvents: 100_000,
      retryAfterSeconds: 1,
    });
    expect(config.memory).toEqual({ liveLimitBytes: 512 * 1024 * 1024, rssLimitBytes: 0, heapLimitBytes: 0 });
    expect(config.sequence).toEqual({ instanceTtlSeconds: 3600, maxInstances: 10_000, window: 100_000, reorderSeconds: 30 });
    expect(config.labels.model).toEqual({ cap: 256 });
    expect(config.buckets).toEqual(DEFAULT_BUCKETS);
    expect(Object.isFrozen(config.ingest)).toBe(true);
  });
});

describe('precedence: flag > environment > config file > default', () => {
  const file = tempFile('config.yaml', 'ingest:\n  queue_capacity: 30\n  max-events-per-request: 40\nweb:\n  telemetry-path: /from-file\n');

  it('takes each value from the highest source that sets it', () => {
    const config = loadConfig({
      argv: ['--config.file', file, '--ingest.queue-capacity=10'],
      env: { HERMES_SIDECAR_INGEST_QUEUE_CAPACITY: '20', HERMES_SIDECAR_INGEST_MAX_EVENTS_PER_REQUEST: '50' },
    });
    expect(config.ingest.queueCapacity).toBe(10);
    expect(config.ingest.maxEventsPerRequest).toBe(50);
    expect(config.web.telemetryPath).toBe('/from-file');
    expect(config.ingest.maxBodyBytes).toBe(16 * 1024 * 1024);
  });

  it('reads the config file named by the environment', () => {
    expect(loadConfig({ argv: [], env: { HERMES_SIDECAR_CONFIG_FILE: file } }).ingest.queueCapacity).toBe(30);
  });
});

describe('invalid values stop the start with a message naming the setting', () => {
  it.each([
    [['--ingest.queue-capacity=0'], {}, 'invalid value for --ingest.queue-capacity'],
    [['--ingest.queue-capacity=many'], {}, 'invalid value for --ingest.queue-capacity'],
    [[], { HERMES_SIDECAR_WEB_LISTEN_ADDRESS: 'nowhere' }, 'invalid value for HERMES_SIDECAR_WEB_LISTEN_ADDRESS (--web.listen-address)'],
    [['--web.listen-address=:70000'], {}, 'invalid value for --web.listen-address'],
    [['--web.telemetry-path=metrics'], {}, 'expected a path starting with /'],
    [['--log.level=loud'], {}, 'invalid value for --log.level'],
    [['--no-such-flag=1'], {}, "Unknown option '--no-such-flag'"],
    [['--ingest.token-file=/nonexistent/token'], {}, '--ingest.token-file: cannot read /nonexistent/token: ENOENT'],
  ])('%j %j', (argv, env, message) => {
    expect(() => loadConfig({ argv, env })).toThrow(ConfigError);
    expect(() => loadConfig({ argv, env })).toThrow(message);
  });

  it('names the config file setting at fault', () => {
    const bad = tempFile('bad.yaml', 'ingest:\n  queue_capacity: -3\n');
    expect(() => loadConfig({ argv: ['--config.file', bad], env: {} })).toThrow('invalid value for ingest.queue-capacity in the config file');
    const buckets = tempFile('buckets.yaml', 'buckets:\n  api_seconds: [1, 0.5]\n');
    expect(() => loadConfig({ argv: ['--config.file', buckets], env: {} })).toThrow('buckets.api_seconds: bucket bounds must be strictly increasing');
    const labels = tempFile('labels.yaml', 'labels:\n  session_id: {cap: 5}\n');
    expect(() => loadConfig({ argv: ['--config.file', labels], env: {} })).toThrow('labels: Unrecognized key: "session_id"');
    const yaml = tempFile('broken.yaml', 'a: [\n');
    expect(() => loadConfig({ argv: ['--config.file', yaml], env: {} })).toThrow('is not valid YAML');
  });
});

describe('ingest security', () => {
  it('refuses a non-loopback ingest address without a token', () => {
    expect(() => loadConfig({ argv: ['--ingest.listen-address=0.0.0.0:9479'], env: {} })).toThrow(
      'is not a loopback address: set --ingest.token-file or HERMES_SIDECAR_INGEST_TOKEN',
    );
  });

  it('accepts it with a token from the environment or a file', () => {
    expect(loadConfig({ argv: ['--ingest.listen-address=0.0.0.0:9479'], env: { HERMES_SIDECAR_INGEST_TOKEN: ' t0k ' } }).ingest.token).toBe('t0k');
    const file = tempFile('token', 'from-file\n');
    expect(loadConfig({ argv: ['--ingest.listen-address=:9479', `--ingest.token-file=${file}`], env: {} }).ingest.token).toBe('from-file');
  });

  it.each(['127.0.0.1:1', '127.8.9.10:1', 'localhost:1', '[::1]:1'])('treats %s as loopback', (address) => {
    expect(() => loadConfig({ argv: [`--ingest.listen-address=${address}`], env: {} })).not.toThrow();
  });
});

describe('label rules and buckets from the config file', () => {
  it('merges caps, allow-lists, rewrites and bucket overrides over the defaults', () => {
    const file = tempFile('rules.yaml', 'labels:\n  model:\n    cap: 5\n    rewrite: {a: b}\n  tool:\n    allow: [terminal]\nbuckets:\n  count: [1, 10, 100]\n');
    const config = loadConfig({ argv: [`--config.file=${file}`], env: {} });
    expect(config.labels.model).toEqual({ cap: 5, rewrite: { a: 'b' } });
    expect(config.labels.tool).toEqual({ cap: 256, allow: ['terminal'] });
    expect(config.labels.provider).toEqual({ cap: 64 });
    expect(config.buckets.count).toEqual([1, 10, 100]);
    expect(config.buckets.api_seconds).toEqual(DEFAULT_BUCKETS.api_seconds);
  });
});

describe('listen addresses', () => {
  it.each([
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    [':9478', { host: '0.0.0.0', port: 9478 }],
    ['[::1]:80', { host: '::1', port: 80 }],
    ['localhost:8080', { host: 'localhost', port: 8080 }],
  ])('%s', (text, expected) => {
    expect(parseListenAddress(text)).toEqual(expected);
  });
});

describe('--help', () => {
  it('lists every option with its environment variable and default', () => {
    const help = helpText();
    for (const option of OPTIONS) {
      expect(help).toContain(`--${option.flag}=VALUE`);
      expect(help).toContain(`env ${envName(option.flag)}; default ${option.default ?? '(none)'}`);
    }
  });
});
