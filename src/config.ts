/**
 * Configuration: flags > HERMES_SIDECAR_* environment variables > YAML config file > defaults,
 * validated once at start-up into a frozen typed object. A bad value stops the start with one
 * sentence naming the setting, where it came from and what it must be; the config file is read
 * strictly (configFile.ts), so a misspelt key is an error too. What can be set, and under which
 * names, is the table of configOptions.ts.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readConfigFile, show, type ConfigFile } from './configFile.js';
import { describe, isLoopback, KINDS, type ListenAddress, type Sourced } from './configValues.js';
import { envName, FLAGS, OPTIONS, SECRET_ENV, type OptionFlag, type OptionSpec } from './configOptions.js';
import { ConfigError } from './errors.js';
import type { LogFormat } from './log.js';
import { DEFAULT_LABEL_CAPS, OPEN_LABELS, type LabelRule, type LabelRules } from './metrics/labels.js';
import { closest } from './suggest.js';
import type { PriceEntry } from './correlate/recorders/pricing.js';
import type { ListenerSettings } from './net/listener.js';
import { listenerSettings } from './net/options.js';
import { DEFAULT_BUCKETS, type BucketSets } from './metrics/declare.js';
import { schemaForFactor, type NativeHistogramSettings } from './metrics/native.js';

export { ConfigError } from './errors.js';
export { parseListenAddress, type ListenAddress } from './configValues.js';

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

/** The defaults as a Config, for tests and embedding (no flags, no environment). */
export const defaultConfig = (overrides: Partial<Record<string, string>> = {}): Config =>
  loadConfig({ argv: Object.entries(overrides).map(([flag, value]) => `--${flag}=${value}`), env: {} });
