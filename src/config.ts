/**
 * Configuration: flags > HERMES_SIDECAR_* environment variables > YAML config file > defaults,
 * validated once at start-up into a frozen typed object. A bad value stops the start with one
 * sentence naming the setting, where it came from and what it must be; the config file is read
 * strictly (configFile.ts), so a misspelt key is an error too.
 *
 * One table (OPTIONS) drives the flags, the environment names, the file keys and `--help`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readConfigFile, show, type ConfigFile } from './configFile.js';
import { describe, isLoopback, KINDS, type Kind, type ListenAddress, type Sourced } from './configValues.js';
import { ConfigError } from './errors.js';
import type { LogFormat } from './log.js';
import { DEFAULT_LABEL_CAPS, OPEN_LABELS, type LabelRule, type LabelRules } from './metrics/labels.js';
import { closest } from './suggest.js';
import type { PriceEntry } from './correlate/recorders/pricing.js';
import { DEFAULT_MAX_TABLE_BYTES } from './correlate/assemble.js';
import type { ListenerSettings } from './net/listener.js';
import { LISTENER_OPTIONS, listenerSettings } from './net/options.js';
import { DEFAULT_BUCKETS, type BucketSets } from './metrics/declare.js';
import { DEFAULT_BUCKET_FACTOR, DEFAULT_ZERO_THRESHOLD, MAX_NATIVE_BUCKETS, schemaForFactor, type NativeHistogramSettings } from './metrics/native.js';
import { DEFAULT_MAX_SERIES_BYTES } from './metrics/seriesBudget.js';

export { ConfigError } from './errors.js';
export { parseListenAddress, type ListenAddress } from './configValues.js';


interface OptionSpec {
  /** Flag name without dashes, also the dotted key of the config file. */
  readonly flag: string;
  readonly kind: Kind;
  readonly default: string | number | undefined;
  readonly help: string;
  /** False for options that make no sense in the config file itself. */
  readonly inFile?: boolean;
}

export const OPTIONS = [
  { flag: 'web.listen-address', kind: 'address', default: '0.0.0.0:9478', help: 'Address of the web listener (/metrics, /-/healthy, /-/ready).' },
  { flag: 'web.telemetry-path', kind: 'path', default: '/metrics', help: 'Path under which metrics are exposed.' },
  { flag: 'web.config.file', kind: 'file', default: undefined, help: 'Exporter-toolkit web config for the web listener: TLS, client certificates, basic auth (docs/web-config.md); re-read when it changes.' },
  { flag: 'ingest.listen-address', kind: 'address', default: '127.0.0.1:9479', help: 'Address of the ingest listener (/v1/events, /v1/hooks). A non-loopback address requires a token.' },
  { flag: 'ingest.token-file', kind: 'file', default: undefined, help: 'File holding the bearer token ingest requires (or set HERMES_SIDECAR_INGEST_TOKEN).' },
  { flag: 'ingest.max-body-bytes', kind: 'bytes', default: 16 * 1024 * 1024, help: 'Largest request body accepted, counted after decompression (413 above).' },
  { flag: 'ingest.max-events-per-request', kind: 'positiveInt', default: 10_000, help: 'Most events (lines) in one request (413 above).' },
  { flag: 'ingest.max-line-bytes', kind: 'bytes', default: 64 * 1024, help: 'Longest NDJSON line; a longer one is refused unread (line_too_large) and the other lines still count.' },
  { flag: 'ingest.max-json-bytes', kind: 'bytes', default: 1024 * 1024, help: 'Largest application/json body (one document, parsed at once; 413 above). NDJSON bodies are decoded line by line instead.' },
  { flag: 'ingest.max-id-bytes', kind: 'bytes', default: 256, help: 'Longest id (session, turn, request, tool call, subagent session, approval session key, plugin instance, webhook delivery) in UTF-8 bytes; a longer one counts as absent (hermes_sidecar_values_rejected_total{field}), a longer plugin instance rejects its line.' },
  { flag: 'ingest.max-label-value-bytes', kind: 'bytes', default: 1024, help: 'Longest name that becomes a label value (provider, model, tool, reason, ...) in UTF-8 bytes, before the label guard cuts it to 128 characters; a longer one counts as absent (hermes_sidecar_values_rejected_total{field}).' },
  { flag: 'ingest.max-inflight-bytes', kind: 'bytes', default: 64 * 1024 * 1024, help: 'Most bytes of request bodies read or held at once on the ingest listener; past it, 503 + Retry-After (inflight_limit).' },
  { flag: 'ingest.body-timeout', kind: 'seconds', default: 10, help: 'Seconds a request body may take to arrive (408 after).' },
  { flag: 'ingest.queue-capacity', kind: 'positiveInt', default: 1024, help: 'Most batches waiting to be applied (429 + Retry-After above).' },
  { flag: 'ingest.queue-max-events', kind: 'positiveInt', default: 100_000, help: 'Most events in the batches waiting to be applied (429 + Retry-After above).' },
  { flag: 'ingest.retry-after-seconds', kind: 'positiveInt', default: 1, help: 'Retry-After value sent with 429 and 503 answers.' },
  { flag: 'webhook.secret-file', kind: 'file', default: undefined, help: 'File holding the HMAC secret of Hermes outbound webhooks (or set HERMES_SIDECAR_WEBHOOK_SECRET); /v1/hooks answers 404 without one.' },
  { flag: 'webhook.max-body-bytes', kind: 'bytes', default: 64 * 1024, help: 'Largest webhook delivery, on the wire and after gzip inflation (413 above); read before the signature can be checked, so small.' },
  { flag: 'webhook.dedupe-window', kind: 'positiveInt', default: 10_000, help: 'How many recent webhook delivery_ids are remembered to drop replays.' },
  { flag: 'correlator.span-ttl', kind: 'seconds', default: 3600, help: 'Seconds an open span (API attempt, tool call, turn, approval, subagent) waits for its end before it counts as orphaned.' },
  { flag: 'correlator.session-ttl', kind: 'seconds', default: 86_400, help: 'Seconds an idle session stays active.' },
  { flag: 'correlator.max-spans', kind: 'positiveInt', default: 100_000, help: 'Most open entries per correlation table (oldest evicted and counted).' },
  { flag: 'correlator.sweep-interval', kind: 'seconds', default: 10, help: 'Seconds between TTL sweeps.' },
  { flag: 'correlator.max-table-bytes', kind: 'bytes', default: DEFAULT_MAX_TABLE_BYTES, help: 'Most bytes the correlation tables hold together (ids and a fixed 256 B per entry): sessions get a third, the five span tables the rest evenly; past its share a table evicts its oldest entries, counted in hermes_sidecar_state_evictions_total.' },
  { flag: 'sequence.instance-ttl', kind: 'seconds', default: 3600, help: 'Seconds an idle bridge-plugin instance is remembered for sequence tracking.' },
  { flag: 'sequence.window', kind: 'positiveInt', default: 100_000, help: 'Largest plausible jump of a plugin sequence number (or acked_seq); a larger one starts a new epoch (hermes_sidecar_sequence_resets_total).' },
  { flag: 'sequence.reorder-seconds', kind: 'seconds', default: 30, help: 'Seconds a sequence gap waits for late events before they count as lost (a heartbeat of the instance settles it at once).' },
  { flag: 'sequence.max-instances', kind: 'positiveInt', default: 10_000, help: 'Most plugin instances remembered (least recently seen evicted and counted).' },
  { flag: 'sequence.max-bytes', kind: 'bytes', default: 64 * 1024 * 1024, help: 'Bytes the plugin instance table may hold (ids and sequence state; least recently seen evicted and counted); evicted instances\' tombstones get a quarter of it more.' },
  { flag: 'metrics.max-series', kind: 'positiveInt', default: 10_000, help: 'Global cap on live label sets across agent metrics; new ones past it fold into overflow series (open labels as "other").' },
  { flag: 'metrics.native-histograms', kind: 'boolean', default: 'true', help: 'Keep native (exponential) buckets beside the classic ones in every histogram, sent in the protobuf exposition (true or false). false keeps classic buckets only: for a fleet whose Prometheus does not ingest native histograms, each histogram series then holds about a sixth of the bytes and each observation costs less; the --metrics.native-histogram-* settings are then unused.' },
  { flag: 'metrics.native-histogram-bucket-factor', kind: 'bucketFactor', default: DEFAULT_BUCKET_FACTOR, help: 'Growth factor from one native histogram bucket to the next, as client_golang\'s NativeHistogramBucketFactor: the schema used is the coarsest whose factor 2^(2^-schema) is no larger (1.1 gives schema 3, buckets 9% wide; 2 gives schema 0; at most schema 8, at least -4). Native buckets are sent in the protobuf exposition only, beside the classic ones.' },
  { flag: 'metrics.native-histogram-zero-threshold', kind: 'positiveNumber', default: DEFAULT_ZERO_THRESHOLD, help: 'Observations at or below this count in the native histograms\' zero bucket (default 2^-128, client_golang\'s). Positive, so Prometheus reads every histogram as native, even before its first observation.' },
  { flag: 'metrics.native-histogram-max-buckets', kind: 'nativeBuckets', default: MAX_NATIVE_BUCKETS, help: 'Most populated native buckets per histogram series (1 to 160); past it the series halves its resolution (schema minus 1) until it fits. 160, client_golang\'s recommendation and OpenTelemetry\'s default, spans a range of a million at schema 3; more only adds bytes to every sample.' },
  { flag: 'metrics.max-series-bytes', kind: 'bytesOrZero', default: DEFAULT_MAX_SERIES_BYTES, help: 'Byte budget of the live agent series (labels, numbers, classic and native buckets, cached renderings; hermes_sidecar_series_bytes); a new label set that would pass it folds into its overflow series like one past --metrics.max-series (hermes_sidecar_series_bytes_refused_total). 0 disables.' },
  { flag: 'metrics.series-ttl', kind: 'nonNegativeInt', default: 7 * 86_400, help: 'Seconds an agent series may go without a write before it is removed (hermes_sidecar_series_expired_total), giving its slot and bytes back to --metrics.max-series and --metrics.max-series-bytes and its open label values back to their caps; gauges of what is open (in flight, active, pending) expire only once at 0. 0 keeps every series until restart. The default, a week, outlasts a weekend or holiday of idleness and every range the shipped rules and dashboards query.' },
  { flag: 'metrics.semconv', kind: 'boolean', default: 'false', help: 'Also export the OpenTelemetry GenAI families gen_ai_client_operation_duration_seconds and gen_ai_client_token_usage (true or false). Off by default: they repeat the API call data under a second set of names and spend the series budget.' },
  { flag: 'memory.limit-bytes', kind: 'bytesOrZero', default: 512 * 1024 * 1024, help: 'Live memory (V8 heap used + Buffers) above which, while request bodies in flight are the cause, ingest answers 503 + Retry-After and /-/ready 503, until it is 10% below; memory held by stored series is not refused (/-/ready says so; the longest-idle series are expired early). 0 disables.' },
  { flag: 'memory.rss-limit-bytes', kind: 'bytesOrZero', default: 0, help: 'Resident memory above which ingest answers 503 + Retry-After, while live memory is at least half of it (0 disables).' },
  { flag: 'memory.heap-limit-bytes', kind: 'bytesOrZero', default: 0, help: 'Used V8 heap above which ingest answers 503 + Retry-After until it falls again (0 disables).' },
  { flag: 'log.level', kind: 'logLevel', default: 'info', help: 'Log level: fatal, error, warn, info, debug, trace or silent. At debug, every refused or rejected ingest request is logged with its code, route and counts.' },
  { flag: 'log.format', kind: 'logFormat', default: 'json', help: 'Log line format: json (one JSON object per line) or logfmt (key=value pairs).' },
  ...LISTENER_OPTIONS,
  { flag: 'web.min-render-interval', kind: 'seconds', default: 0.1, help: 'Least seconds between the starts of two renders of /metrics; a scrape that arrives sooner waits for the next render and shares it with every scrape waiting (hermes_sidecar_scrapes_paced_total). A render also waits as long as the previous one took, so rendering takes at most half the time however many scrapers come.' },
  { flag: 'config.file', kind: 'file', default: undefined, help: 'YAML file with any option above plus labels: (caps, allow-lists, rewrites), buckets: and prices: (USD per million tokens per provider/model).', inFile: false },
] as const satisfies readonly OptionSpec[];

type OptionFlag = (typeof OPTIONS)[number]['flag'];

export const envName = (flag: string): string =>
  `HERMES_SIDECAR_${flag.replace(/[.-]/g, '_').toUpperCase()}`;

/** Environment variables that carry a secret itself rather than a file. */
const SECRET_ENV = {
  ingestToken: 'HERMES_SIDECAR_INGEST_TOKEN',
  webhookSecret: 'HERMES_SIDECAR_WEBHOOK_SECRET',
} as const;

export interface Config {
  readonly web: { readonly listen: ListenAddress; readonly telemetryPath: string; readonly configFile: string | undefined; readonly minRenderIntervalSeconds: number };
  readonly ingest: {
    readonly listen: ListenAddress;
    readonly token: string | undefined;
    readonly maxBodyBytes: number;
    readonly maxEventsPerRequest: number;
    readonly maxLineBytes: number;
    readonly maxJsonBytes: number;
    readonly maxIdBytes: number;
    readonly maxLabelValueBytes: number;
    readonly maxInflightBytes: number;
    readonly bodyTimeoutSeconds: number;
    readonly queueCapacity: number;
    readonly queueMaxEvents: number;
    readonly retryAfterSeconds: number;
  };
  readonly webhook: { readonly secret: string | undefined; readonly dedupeWindow: number; readonly maxBodyBytes: number };
  readonly correlator: {
    readonly spanTtlSeconds: number;
    readonly sessionTtlSeconds: number;
    readonly maxSpans: number;
    readonly sweepIntervalSeconds: number;
    readonly maxTableBytes: number;
  };
  readonly sequence: { readonly instanceTtlSeconds: number; readonly maxInstances: number; readonly window: number; readonly reorderSeconds: number; readonly maxBytes: number };
  readonly maxAgentSeries: number;
  /** Byte budget of the live agent series; 0: none. */
  readonly maxSeriesBytes: number;
  /** Seconds without a write after which an agent series is removed; 0: never. */
  readonly seriesTtlSeconds: number;
  /** Export the OpenTelemetry GenAI semantic-convention families too. */
  readonly semconv: boolean;
  /** Native buckets kept beside every histogram's classic ones (sent in the protobuf exposition); false: classic buckets only. */
  readonly nativeHistograms: NativeHistogramSettings | false;
  readonly memory: { readonly liveLimitBytes: number; readonly rssLimitBytes: number; readonly heapLimitBytes: number };
  readonly labels: LabelRules;
  readonly buckets: BucketSets;
  /** USD per million tokens per provider/model, for calls Hermes did not price (`prices:` in the config file). */
  readonly prices: readonly PriceEntry[];
  readonly logLevel: string;
  readonly logFormat: LogFormat;
  readonly listeners: { readonly web: ListenerSettings; readonly ingest: ListenerSettings };
}

export interface ConfigInputs {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly readFile?: (path: string) => string;
}

const FLAGS: readonly string[] = OPTIONS.map((option) => option.flag);
/** Every environment variable the sidecar reads: one per option, and the two that carry a secret. */
export const ENVIRONMENT_NAMES: readonly string[] = [...FLAGS.map(envName), ...Object.values(SECRET_ENV)];

/** The binary's own switches: handled before options are parsed, offered as suggestions like them. */
const SWITCHES: readonly string[] = ['help', 'version'];

/** parseArgs' own messages name the option but not what to do; these say both, in one sentence. */
function flagError(error: unknown): ConfigError {
  const { code, message } = error as { code?: string; message: string };
  const named = /'(-[^' ]*)/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const bare = named.replace(/^-+/, '');
    // `--version=1` reaches here as option `--version` with a value: it exists, it takes none.
    if (SWITCHES.includes(bare)) return new ConfigError(`${named} (from the command line) takes no value: write ${named} alone.`);
    const near = closest(bare, [...FLAGS, ...SWITCHES]);
    return new ConfigError(
      near === undefined
        ? `${named} (from the command line) is not an option (see --help).`
        : `${named} (from the command line) is not an option: did you mean --${near}? (see --help)`,
    );
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return new ConfigError(`${named} (from the command line) needs a value: write ${named}=VALUE (see --help).`);
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const argument = /'([^']*)'/.exec(message)?.[1] ?? '';
    return new ConfigError(`${show(argument)} (from the command line) is not an option: options are written --name=VALUE (see --help).`);
  }
  return new ConfigError(`The command line cannot be read (${message}) (see --help).`);
}

function parseFlags(argv: readonly string[]): Record<string, string | undefined> {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: Object.fromEntries(OPTIONS.map((option) => [option.flag, { type: 'string' as const }])),
      strict: true, allowPositionals: false,
    });
    return values;
  } catch (error) {
    throw flagError(error);
  }
}

const READ_PROBLEMS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a directory',
};

function readText(readFile: (path: string) => string, source: Sourced, expected: string): string {
  try {
    return readFile(String(source.value));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const problem = Object.hasOwn(READ_PROBLEMS, code) ? `${READ_PROBLEMS[code]}, ${code}` : code;
    throw new ConfigError(`${describe(source)} names a file that cannot be read (${problem}): expected ${expected}.`);
  }
}

const EMPTY_FILE: ConfigFile = { path: '', settings: new Map(), labels: {}, buckets: {}, prices: [] };

function loadFile(source: Sourced | undefined, readFile: (path: string) => string): ConfigFile {
  if (source === undefined) return EMPTY_FILE;
  const path = String(source.value);
  const text = readText(readFile, source, 'a readable YAML file');
  const fileFlags = OPTIONS.filter((option: OptionSpec) => option.inFile !== false).map((option) => option.flag);
  return readConfigFile(text, path, describe(source), fileFlags);
}

function resolveRaw(
  option: OptionSpec,
  flags: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv,
  file: ConfigFile,
): Sourced | undefined {
  const { flag } = option;
  const fromFlag = flags[flag];
  if (fromFlag !== undefined) return { flag, value: fromFlag, origin: { from: 'flag' } };
  const name = envName(flag);
  const fromEnv = env[name];
  if (fromEnv !== undefined && fromEnv !== '') return { flag, value: fromEnv, origin: { from: 'env', name } };
  const fromFile = option.inFile === false ? undefined : file.settings.get(flag);
  if (fromFile !== undefined) return { flag, value: fromFile.value, origin: { from: 'file', key: fromFile.key, path: file.path } };
  if (option.default !== undefined) return { flag, value: option.default, origin: { from: 'default' } };
  return undefined;
}

function validate(option: OptionSpec, raw: Sourced | undefined): unknown {
  if (raw === undefined) return undefined;
  const kind = KINDS[option.kind];
  const result = kind.schema.safeParse(raw.value);
  if (!result.success) throw new ConfigError(`${describe(raw)} must be ${expectedFor(kind.expected, raw.value)}.`);
  return result.data;
}

/** A whole number past 2^53 is whole but not exact: say so instead of repeating "whole number". */
function expectedFor(expected: string, value: unknown): string {
  const number = typeof value === 'string' ? Number(value) : value;
  const tooLarge = typeof number === 'number' && Number.isInteger(number) && number > Number.MAX_SAFE_INTEGER;
  return tooLarge ? `${expected} no larger than ${Number.MAX_SAFE_INTEGER}` : expected;
}

function secret(
  env: NodeJS.ProcessEnv,
  envVar: string,
  file: Sourced | undefined,
  readFile: (path: string) => string,
  holding: string,
): string | undefined {
  const text = file !== undefined ? readText(readFile, file, `a readable file holding ${holding}`) : env[envVar];
  const value = text?.trim();
  if (value === undefined || value === '') {
    if (file !== undefined) throw new ConfigError(`${describe(file)} names an empty file: expected a file holding ${holding}.`);
    return undefined;
  }
  return value;
}

function labelRules(file: ConfigFile): LabelRules {
  return Object.fromEntries(
    OPEN_LABELS.map((label) => {
      const fromFile = file.labels[label];
      const rule: LabelRule = {
        cap: fromFile?.cap ?? DEFAULT_LABEL_CAPS[label],
        ...(fromFile?.allow === undefined ? {} : { allow: [...fromFile.allow] }),
        ...(fromFile?.rewrite === undefined ? {} : { rewrite: { ...fromFile.rewrite } }),
      };
      return [label, rule];
    }),
  ) as LabelRules;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Builds the configuration, or throws ConfigError naming the bad setting. */
export function loadConfig(inputs: ConfigInputs): Config {
  const readFile = inputs.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const flags = parseFlags(inputs.argv);
  const configFile = OPTIONS.find((option) => option.flag === 'config.file') as OptionSpec;
  const file = loadFile(resolveRaw(configFile, flags, inputs.env, EMPTY_FILE), readFile);

  const sourced = new Map<string, Sourced | undefined>();
  const values = new Map<string, unknown>();
  for (const option of OPTIONS) {
    const raw = resolveRaw(option, flags, inputs.env, file);
    sourced.set(option.flag, raw);
    values.set(option.flag, validate(option, raw));
  }
  const get = <T>(flag: OptionFlag): T => values.get(flag) as T;

  const ingestListen = get<ListenAddress>('ingest.listen-address');
  const token = secret(inputs.env, SECRET_ENV.ingestToken, sourced.get('ingest.token-file'), readFile, 'the ingest bearer token');
  if (!isLoopback(ingestListen.host) && token === undefined) {
    const listen = sourced.get('ingest.listen-address');
    throw new ConfigError(
      `${listen === undefined ? '--ingest.listen-address' : describe(listen)} is not a loopback address: ` +
        `set --ingest.token-file or ${SECRET_ENV.ingestToken} so ingest requires a bearer token.`,
    );
  }

  return deepFreeze({
    web: { listen: get('web.listen-address'), telemetryPath: get('web.telemetry-path'), configFile: get('web.config.file'), minRenderIntervalSeconds: get('web.min-render-interval') },
    ingest: {
      listen: ingestListen,
      token,
      maxBodyBytes: get('ingest.max-body-bytes'),
      maxEventsPerRequest: get('ingest.max-events-per-request'),
      maxLineBytes: get('ingest.max-line-bytes'),
      maxJsonBytes: get('ingest.max-json-bytes'),
      maxIdBytes: get('ingest.max-id-bytes'),
      maxLabelValueBytes: get('ingest.max-label-value-bytes'),
      maxInflightBytes: get('ingest.max-inflight-bytes'),
      bodyTimeoutSeconds: get('ingest.body-timeout'),
      queueCapacity: get('ingest.queue-capacity'),
      queueMaxEvents: get('ingest.queue-max-events'),
      retryAfterSeconds: get('ingest.retry-after-seconds'),
    },
    webhook: {
      secret: secret(inputs.env, SECRET_ENV.webhookSecret, sourced.get('webhook.secret-file'), readFile, 'the webhook secret'),
      dedupeWindow: get('webhook.dedupe-window'),
      maxBodyBytes: get('webhook.max-body-bytes'),
    },
    correlator: {
      spanTtlSeconds: get('correlator.span-ttl'),
      sessionTtlSeconds: get('correlator.session-ttl'),
      maxSpans: get('correlator.max-spans'),
      sweepIntervalSeconds: get('correlator.sweep-interval'),
      maxTableBytes: get('correlator.max-table-bytes'),
    },
    sequence: {
      instanceTtlSeconds: get('sequence.instance-ttl'),
      maxInstances: get('sequence.max-instances'),
      window: get('sequence.window'),
      reorderSeconds: get('sequence.reorder-seconds'),
      maxBytes: get('sequence.max-bytes'),
    },
    maxAgentSeries: get('metrics.max-series'),
    maxSeriesBytes: get('metrics.max-series-bytes'),
    seriesTtlSeconds: get('metrics.series-ttl'),
    semconv: get('metrics.semconv'),
    nativeHistograms: get<boolean>('metrics.native-histograms') && { schema: schemaForFactor(get('metrics.native-histogram-bucket-factor')), zeroThreshold: get('metrics.native-histogram-zero-threshold'), maxBuckets: get('metrics.native-histogram-max-buckets') },
    memory: {
      liveLimitBytes: get('memory.limit-bytes'),
      rssLimitBytes: get('memory.rss-limit-bytes'),
      heapLimitBytes: get('memory.heap-limit-bytes'),
    },
    labels: labelRules(file),
    buckets: { ...DEFAULT_BUCKETS, ...file.buckets },
    prices: file.prices.map((price): PriceEntry => ({ ...price })),
    logLevel: get('log.level'),
    logFormat: get('log.format'),
    listeners: listenerSettings(get),
  });
}

/** `--help`: every option with its environment variable and default. */
export function helpText(): string {
  const lines = [
    'Usage: hermes-prometheus-sidecar [options]',
    '       hermes-prometheus-sidecar install-plugin [--hermes-home DIR] [--enable] [--create]   (install-plugin --help)',
    '       hermes-prometheus-sidecar backfill [--state-db PATH]... [--from TIME] [--until TIME] [--out DIR]   (backfill --help)',
    '       hermes-prometheus-sidecar ready [--timeout=SECONDS] [options]   (wait until ingest accepts events)',
    '',
    'Options (flag > environment > config file > default):',
  ];
  for (const option of OPTIONS) {
    const fallback = option.default === undefined ? '(none)' : String(option.default);
    lines.push(`  --${option.flag}=VALUE`, `      ${option.help}`, `      env ${envName(option.flag)}; default ${fallback}`);
  }
  lines.push(
    `  ${SECRET_ENV.ingestToken}, ${SECRET_ENV.webhookSecret}`,
    '      Environment variables holding the ingest token and the webhook secret themselves.',
    '  --help     Show this help.',
    '  --version  Show the version.',
  );
  return `${lines.join('\n')}\n`;
}

/** The defaults as a Config, for tests and embedding (no flags, no environment). */
export const defaultConfig = (overrides: Partial<Record<string, string>> = {}): Config =>
  loadConfig({ argv: Object.entries(overrides).map(([flag, value]) => `--${flag}=${value}`), env: {} });
