import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { OPTIONS } from '../src/configOptions.js';
import { DEFAULT_BUCKETS } from '../src/metrics/declare.js';
import { OPEN_LABELS } from '../src/metrics/labels.js';
import { scratchDir } from './support/scratch.js';

const tempFile = (name: string, text: string): string => {
  const file = join(scratchDir('sidecar-config-'), name);
  writeFileSync(file, text);
  return file;
};

/** The message of the ConfigError loadConfig throws (fails the test when it throws anything else or nothing). */
function configError(argv: readonly string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    loadConfig({ argv, env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(argv)} ${JSON.stringify(env)}`);
}

const fileError = (text: string): { file: string; message: string } => {
  const file = tempFile('config.yaml', text);
  return { file, message: configError(['--config.file', file]) };
};

const LEVELS = 'one of fatal, error, warn, info, debug, trace or silent';
const ADDRESS = 'host:port, [ipv6 address]:port or :port, with a port from 0 to 65535';
const BYTES = 'a size in bytes: a whole number, or a number and a unit (KiB or Ki, MiB or Mi, GiB or Gi, TiB or Ti: powers of 1024; kB or k, MB or M, GB or G, TB or T: powers of 1000), such as 192Mi';

describe('defaults', () => {
  it('are the documented ones', () => {
    const config = loadConfig({ argv: [], env: {} });
    expect(config.web).toEqual({ listen: { host: '0.0.0.0', port: 9478 }, telemetryPath: '/metrics', minRenderIntervalSeconds: 0.1 });
    expect(config.ingest).toEqual({
      listen: { host: '127.0.0.1', port: 9479 },
      token: undefined,
      maxBodyBytes: 16 * 1024 * 1024,
      maxEventsPerRequest: 10_000,
      maxLineBytes: 64 * 1024,
      maxJsonBytes: 1024 * 1024,
      maxIdBytes: 256,
      maxLabelValueBytes: 1024,
      maxInflightBytes: 64 * 1024 * 1024,
      bodyTimeoutSeconds: 10,
      queueCapacity: 1024,
      queueMaxEvents: 100_000,
      retryAfterSeconds: 1,
    });
    expect(config.memory).toEqual({ liveLimitBytes: 512 * 1024 * 1024, rssLimitBytes: 0, heapLimitBytes: 0 });
    expect(config.sequence).toEqual({ instanceTtlSeconds: 3600, maxInstances: 10_000, window: 100_000, reorderSeconds: 30, maxBytes: 64 * 1024 * 1024 });
    expect(config.labels.model).toEqual({ cap: 256 });
    expect(config.buckets).toEqual(DEFAULT_BUCKETS);
    expect(config.nativeHistograms).toEqual({ schema: 3, zeroThreshold: 2 ** -128, maxBuckets: 160 });
    expect(Object.isFrozen(config.ingest)).toBe(true);
  });

  it('maps the native histogram bucket factor to its schema and takes the zero threshold and bucket limit', () => {
    const config = loadConfig({
      argv: ['--metrics.native-histogram-bucket-factor=2', '--metrics.native-histogram-zero-threshold=1e-9', '--metrics.native-histogram-max-buckets=20'],
      env: {},
    });
    expect(config.nativeHistograms).toEqual({ schema: 0, zeroThreshold: 1e-9, maxBuckets: 20 });
  });

  it('keeps classic buckets only with --metrics.native-histograms=false, from the flag or the environment', () => {
    expect(loadConfig({ argv: ['--metrics.native-histograms=false'], env: {} }).nativeHistograms).toBe(false);
    expect(loadConfig({ argv: [], env: { HERMES_SIDECAR_METRICS_NATIVE_HISTOGRAMS: 'false' } }).nativeHistograms).toBe(false);
    expect(loadConfig({ argv: ['--metrics.native-histograms=true'], env: {} }).nativeHistograms).toEqual({ schema: 3, zeroThreshold: 2 ** -128, maxBuckets: 160 });
  });
});

describe('byte sizes', () => {
  it('are read alike from a flag, the environment or the config file (configValues.test.ts has the spellings)', () => {
    expect(loadConfig({ argv: ['--memory.rss-limit-bytes=192Mi'], env: {} }).memory.rssLimitBytes).toBe(192 * 2 ** 20);
    expect(loadConfig({ argv: [], env: { HERMES_SIDECAR_MEMORY_RSS_LIMIT_BYTES: '192Mi' } }).memory.rssLimitBytes).toBe(192 * 2 ** 20);
    const file = tempFile('config.yaml', 'memory:\n  rss_limit_bytes: "192Mi"\n');
    expect(loadConfig({ argv: [`--config.file=${file}`], env: {} }).memory.rssLimitBytes).toBe(192 * 2 ** 20);
  });

  it('apply to every byte-valued option', () => {
    const byteOptions = OPTIONS.filter((option) => option.flag.endsWith('bytes'));
    expect(byteOptions.map((option) => option.kind).every((kind) => kind === 'bytes' || kind === 'bytesOrZero')).toBe(true);
    const config = loadConfig({ argv: byteOptions.map((option) => `--${option.flag}=2Ki`), env: {} });
    expect([config.ingest.maxBodyBytes, config.ingest.maxInflightBytes, config.webhook.maxBodyBytes, config.sequence.maxBytes, config.memory.liveLimitBytes]).toEqual([2048, 2048, 2048, 2048, 2048]);
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

describe('invalid values stop the start with one sentence naming the setting, its source and what it must be', () => {
  it.each([
    [['--ingest.queue-capacity=0'], {}, '--ingest.queue-capacity=0 (from the command line) must be a positive whole number.'],
    [['--ingest.queue-capacity=many'], {}, '--ingest.queue-capacity=many (from the command line) must be a positive whole number.'],
    [['--ingest.queue-capacity=true'], {}, '--ingest.queue-capacity=true (from the command line) must be a positive whole number.'],
    [['--ingest.queue-capacity=2.5'], {}, '--ingest.queue-capacity=2.5 (from the command line) must be a positive whole number.'],
    [['--ingest.queue-capacity=1e30'], {}, '--ingest.queue-capacity=1e30 (from the command line) must be a positive whole number no larger than 9007199254740991.'],
    [[], { HERMES_SIDECAR_INGEST_QUEUE_CAPACITY: 'many' }, 'HERMES_SIDECAR_INGEST_QUEUE_CAPACITY=many (from the environment, for --ingest.queue-capacity) must be a positive whole number.'],
    [['--memory.heap-limit-bytes=-1'], {}, `--memory.heap-limit-bytes=-1 (from the command line) must be ${BYTES}; 0 disables.`],
    [[], { HERMES_SIDECAR_MEMORY_RSS_LIMIT_BYTES: '192 megs' }, `HERMES_SIDECAR_MEMORY_RSS_LIMIT_BYTES=192 megs (from the environment, for --memory.rss-limit-bytes) must be ${BYTES}; 0 disables.`],
    [['--ingest.max-body-bytes=0'], {}, `--ingest.max-body-bytes=0 (from the command line) must be ${BYTES}, above 0.`],
    [['--ingest.max-body-bytes=1.5'], {}, `--ingest.max-body-bytes=1.5 (from the command line) must be ${BYTES}, above 0.`],
    [['--sequence.max-bytes=1Pi'], {}, `--sequence.max-bytes=1Pi (from the command line) must be ${BYTES}, above 0.`],
    [['--correlator.span-ttl=soon'], {}, '--correlator.span-ttl=soon (from the command line) must be a positive number of seconds.'],
    [[], { HERMES_SIDECAR_WEB_LISTEN_ADDRESS: 'nowhere' }, `HERMES_SIDECAR_WEB_LISTEN_ADDRESS=nowhere (from the environment, for --web.listen-address) must be ${ADDRESS}.`],
    [['--web.listen-address=:70000'], {}, `--web.listen-address=:70000 (from the command line) must be ${ADDRESS}.`],
    [['--web.telemetry-path=metrics'], {}, '--web.telemetry-path=metrics (from the command line) must be a URL path starting with / (letters, digits and _ . / - only).'],
    [['--log.level=loud'], {}, `--log.level=loud (from the command line) must be ${LEVELS}.`],
    [['--log.format=xml'], {}, '--log.format=xml (from the command line) must be json or logfmt.'],
    [['--metrics.semconv=yes'], {}, '--metrics.semconv=yes (from the command line) must be true or false.'],
    [['--metrics.native-histogram-bucket-factor=1'], {}, '--metrics.native-histogram-bucket-factor=1 (from the command line) must be a number above 1 (the growth factor from one native histogram bucket to the next).'],
    [['--metrics.native-histogram-zero-threshold=0'], {}, '--metrics.native-histogram-zero-threshold=0 (from the command line) must be a positive number.'],
    [['--metrics.native-histogram-max-buckets=161'], {}, '--metrics.native-histogram-max-buckets=161 (from the command line) must be a whole number from 1 to 160.'],
    [['--metrics.native-histogram-max-buckets=0'], {}, '--metrics.native-histogram-max-buckets=0 (from the command line) must be a whole number from 1 to 160.'],
    [['--no-such-flag=1'], {}, '--no-such-flag (from the command line) is not an option (see --help).'],
    [['--ingest.queue-capacty=1'], {}, '--ingest.queue-capacty (from the command line) is not an option: did you mean --ingest.queue-capacity? (see --help)'],
    [['--hepl'], {}, '--hepl (from the command line) is not an option: did you mean --help? (see --help)'],
    [['--verison'], {}, '--verison (from the command line) is not an option: did you mean --version? (see --help)'],
    [['--version=1'], {}, '--version (from the command line) takes no value: write --version alone.'],
    [['--ingest.queue-capacity'], {}, '--ingest.queue-capacity (from the command line) needs a value: write --ingest.queue-capacity=VALUE (see --help).'],
    [['stray'], {}, 'stray (from the command line) is not an option: options are written --name=VALUE (see --help).'],
    [
      ['--ingest.token-file=/nonexistent/token'],
      {},
      '--ingest.token-file=/nonexistent/token (from the command line) names a file that cannot be read (no such file, ENOENT): expected a readable file holding the ingest bearer token.',
    ],
    [
      [],
      { HERMES_SIDECAR_CONFIG_FILE: '/nonexistent/config.yaml' },
      'HERMES_SIDECAR_CONFIG_FILE=/nonexistent/config.yaml (from the environment, for --config.file) names a file that cannot be read (no such file, ENOENT): expected a readable YAML file.',
    ],
  ])('%j %j', (argv, env, message) => {
    expect(configError(argv, env)).toBe(message);
  });

  it('says an empty secret file is empty', () => {
    const file = tempFile('token', ' \n');
    expect(configError([`--webhook.secret-file=${file}`])).toBe(
      `--webhook.secret-file=${file} (from the command line) names an empty file: expected a file holding the webhook secret.`,
    );
  });

  it('names the config file key at fault, as written', () => {
    const negative = fileError('ingest:\n  queue_capacity: -3\n');
    expect(negative.message).toBe(`ingest.queue_capacity: -3 in the config file ${negative.file} must be a positive whole number.`);
    const words = fileError('ingest:\n  queue-capacity: many\n');
    expect(words.message).toBe(`ingest.queue-capacity: many in the config file ${words.file} must be a positive whole number.`);
    const yes = fileError('ingest:\n  queue_capacity: true\n');
    expect(yes.message).toBe(`ingest.queue_capacity: true in the config file ${yes.file} must be a positive whole number.`);
    const buckets = fileError('buckets:\n  api_seconds: [1, 0.5]\n');
    expect(buckets.message).toBe(
      `buckets.api_seconds: [1,0.5] in the config file ${buckets.file} must be a non-empty list of finite numbers in strictly increasing order.`,
    );
    const cap = fileError('labels:\n  model: {cap: lots}\n');
    expect(cap.message).toBe(`labels.model.cap: lots in the config file ${cap.file} must be a positive whole number.`);
    const allow = fileError('labels:\n  tool: {allow: terminal}\n');
    expect(allow.message).toBe(`labels.tool.allow: terminal in the config file ${allow.file} must be a list of label values (strings).`);
    const section = fileError('log: 5\n');
    expect(section.message).toBe(`log in the config file ${section.file} is 5 but must be a mapping of level or format.`);
  });

  it('names a file that is not YAML, or not a mapping, without a dangling source excerpt', () => {
    const yaml = fileError('a: [\n');
    expect(yaml.message).toBe(
      `--config.file=${yaml.file} (from the command line) names a file that is not valid YAML: flow sequence in block collection must be sufficiently indented and end with a ] (line 2, column 1).`,
    );
    const duplicate = fileError('log:\n  level: info\nlog:\n  level: debug\n');
    expect(duplicate.message).toBe(
      `--config.file=${duplicate.file} (from the command line) names a file that is not valid YAML: map keys must be unique (line 3, column 1).`,
    );
    const text = fileError('just some text\n');
    expect(text.message).toBe(
      `--config.file=${text.file} (from the command line) names a file that holds "just some text", but it must hold a mapping of settings such as "ingest: {queue_capacity: 2048}".`,
    );
  });
});

describe('unknown keys anywhere in the config file are errors', () => {
  const TOP = 'web, ingest, webhook, correlator, sequence, metrics, memory, log, labels, buckets or prices';

  it.each([
    ['ingest:\n  quee_capacity: 5\n', 'ingest.quee_capacity', 'is not a known key: did you mean ingest.queue_capacity?'],
    ['lables:\n  model: {cap: 3}\n', 'lables', 'is not a known key: did you mean labels?'],
    ['foo: 1\n', 'foo', `is not a known key: expected one of ${TOP}.`],
    ['queue_capacity: 5\n', 'queue_capacity', 'is not a known key: did you mean ingest.queue_capacity?'],
    ['web:\n  queue_capacity: 5\n', 'web.queue_capacity', 'is not a known key: did you mean ingest.queue_capacity?'],
    ['web:\n  config:\n    fille: web.yml\n', 'web.config.fille', 'is not a known key: did you mean web.config.file?'],
    ['labels:\n  model: {cap: 3, alow: [a]}\n', 'labels.model.alow', 'is not a known key: did you mean labels.model.allow?'],
    ['labels:\n  session_id: {cap: 5}\n', 'labels.session_id', `is not a known key: expected one of ${OPEN_LABELS.slice(0, -1).join(', ')} or ${OPEN_LABELS.at(-1)}.`],
    ['buckets:\n  api_second: [1, 2]\n', 'buckets.api_second', 'is not a known key: did you mean buckets.api_seconds?'],
    ['config:\n  file: other.yaml\n', 'config', `is not a known key: expected one of ${TOP}.`],
    ['prices:\n  openrouter:\n    m: {input: 1, output: 2, cache_reed: 1}\n', 'prices.openrouter.m.cache_reed', 'is not a known key: did you mean prices.openrouter.m.cache_read?'],
    ['prices:\n  openrouter:\n    m: {input: 1}\n', 'prices.openrouter.m.output', 'is missing: a price needs input and output (USD per million tokens).'],
    ['prices:\n  openrouter:\n    m: {input: cheap, output: 2}\n', 'prices.openrouter.m.input: cheap', 'must be a price in USD per million tokens, from 0 to 1000000.'],
    ['ingest:\n  queue_capacity: 5\n  queue-capacity: 6\n', 'ingest.queue-capacity', 'sets the same option as ingest.queue_capacity: keep one of them.'],
  ])('%j', (text, key, rest) => {
    const { file, message } = fileError(text);
    expect(message).toBe(`${key} in the config file ${file} ${rest}`);
  });

  it('accepts every documented key, with dashes or underscores, and empty sections', () => {
    const file = tempFile(
      'full.yaml',
      [
        'web: {listen_address: "127.0.0.1:0", telemetry-path: /m, config: {file: null}}',
        'ingest: {listen_address: "127.0.0.1:0", max_body_bytes: 100, max_events_per_request: 10, queue_capacity: "12", retry_after_seconds: 2}',
        'webhook: {dedupe_window: 5}',
        'correlator: {span_ttl: 1.5, session_ttl: 10, max_spans: 10, sweep_interval: 1}',
        'sequence: {instance_ttl: 10, max_instances: 10}',
        'metrics: {max_series: 10}',
        'memory: {rss_limit_bytes: 0, heap_limit_bytes: 0}',
        'log: {level: debug, format: logfmt}',
        'labels: {model: {cap: 2, allow: [a], rewrite: {b: a}}, tool: null}',
        'prices: {openrouter: {acme/model-a: {input: 2, output: 8, cache_read: 0.5}}}',
        'buckets:',
        '',
      ].join('\n'),
    );
    const config = loadConfig({ argv: [`--config.file=${file}`], env: {} });
    expect(config.ingest.queueCapacity).toBe(12);
    expect(config.correlator.spanTtlSeconds).toBe(1.5);
    expect(config.web.telemetryPath).toBe('/m');
    expect(config.logLevel).toBe('debug');
    expect(config.logFormat).toBe('logfmt');
    expect(config.labels.model).toEqual({ cap: 2, allow: ['a'], rewrite: { b: 'a' } });
    expect(config.buckets).toEqual(DEFAULT_BUCKETS);
    expect(config.prices).toEqual([{ provider: 'openrouter', model: 'acme/model-a', input: 2, output: 8, cacheRead: 0.5, cacheWrite: undefined }]);
  });

  it('every message is one sentence: no line breaks, no checker jargon, ends with . or ?', () => {
    const messages = [
      configError(['--ingest.queue-capacity=many']),
      configError(['--nope']),
      configError([], { HERMES_SIDECAR_LOG_LEVEL: 'chatty' }),
      fileError('a: [\n').message,
      fileError('ingest:\n  quee_capacity: 5\n').message,
      fileError('buckets:\n  count: []\n').message,
      fileError('labels:\n  model: {rewrite: {a: 1}}\n').message,
    ];
    for (const message of messages) {
      expect(message).toMatch(/^\S.*[.?]$/);
      expect(message).not.toMatch(/\n|NaN|received|Invalid|Unrecognized|:$/);
    }
  });
});

describe('--log.format', () => {
  it('is json by default, and logfmt from a flag or the environment', () => {
    expect(loadConfig({ argv: [], env: {} }).logFormat).toBe('json');
    expect(loadConfig({ argv: ['--log.format=logfmt'], env: {} }).logFormat).toBe('logfmt');
    expect(loadConfig({ argv: [], env: { HERMES_SIDECAR_LOG_FORMAT: 'logfmt' } }).logFormat).toBe('logfmt');
  });
});

describe('ingest security', () => {
  it('refuses a non-loopback ingest address without a token', () => {
    expect(() => loadConfig({ argv: ['--ingest.listen-address=0.0.0.0:9479'], env: {} })).toThrow(
      'is not a loopback address: set --ingest.token-file or HERMES_SIDECAR_INGEST_TOKEN',
    );
    expect(configError(['--ingest.listen-address=0.0.0.0:9479'])).toBe(
      '--ingest.listen-address=0.0.0.0:9479 (from the command line) is not a loopback address: set --ingest.token-file or HERMES_SIDECAR_INGEST_TOKEN so ingest requires a bearer token.',
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
