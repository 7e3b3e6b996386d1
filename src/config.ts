/**
 * Configuration: flags > HERMES_SIDECAR_* environment variables > YAML config file > defaults,
 * validated once at start-up into a frozen typed object. A bad value stops the start with a
 * message naming the setting and where it came from.
 *
 * One table (OPTIONS) drives the flags, the environment names, the file keys and `--help`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { DEFAULT_BUCKETS, type BucketSetName, type BucketSets } from './metrics/catalogue.js';
import { DEFAULT_LABEL_CAPS, OPEN_LABELS, type LabelRule, type LabelRules, type OpenLabel } from './metrics/labels.js';
import type { PriceEntry } from './correlate/recorders/pricing.js';

export { ConfigError } from './errors.js';

type Kind = 'address' | 'path' | 'file' | 'positiveInt' | 'nonNegativeInt' | 'seconds' | 'logLevel' | 'boolean';

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
  { flag: 'ingest.max-body-bytes', kind: 'positiveInt', default: 16 * 1024 * 1024, help: 'Largest request body accepted, counted after decompression (413 above).' },
  { flag: 'ingest.max-events-per-request', kind: 'positiveInt', default: 10_000, help: 'Most events (lines) in one request (413 above).' },
  { flag: 'ingest.max-line-bytes', kind: 'positiveInt', default: 64 * 1024, help: 'Longest NDJSON line; a longer one is refused unread (line_too_large) and the other lines still count.' },
  { flag: 'ingest.max-json-bytes', kind: 'positiveInt', default: 1024 * 1024, help: 'Largest application/json body (one document, parsed at once; 413 above). NDJSON bodies are decoded line by line instead.' },
  { flag: 'ingest.max-inflight-bytes', kind: 'positiveInt', default: 64 * 1024 * 1024, help: 'Most bytes of request bodies read or held at once on the ingest listener; past it, 503 + Retry-After (inflight_limit).' },
  { flag: 'ingest.body-timeout', kind: 'seconds', default: 10, help: 'Seconds a request body may take to arrive (408 after).' },
  { flag: 'ingest.queue-capacity', kind: 'positiveInt', default: 1024, help: 'Most batches waiting to be applied (429 + Retry-After above).' },
  { flag: 'ingest.queue-max-events', kind: 'positiveInt', default: 100_000, help: 'Most events in the batches waiting to be applied (429 + Retry-After above).' },
  { flag: 'ingest.retry-after-seconds', kind: 'positiveInt', default: 1, help: 'Retry-After value sent with 429 and 503 answers.' },
  { flag: 'webhook.secret-file', kind: 'file', default: undefined, help: 'File holding the HMAC secret of Hermes outbound webhooks (or set HERMES_SIDECAR_WEBHOOK_SECRET); /v1/hooks answers 404 without one.' },
  { flag: 'webhook.max-body-bytes', kind: 'positiveInt', default: 64 * 1024, help: 'Largest webhook delivery, on the wire and after gzip inflation (413 above); read before the signature can be checked, so small.' },
  { flag: 'webhook.dedupe-window', kind: 'positiveInt', default: 10_000, help: 'How many recent webhook delivery_ids are remembered to drop replays.' },
  { flag: 'correlator.span-ttl', kind: 'seconds', default: 3600, help: 'Seconds an open span (API attempt, tool call, turn, approval, subagent) waits for its end before it counts as orphaned.' },
  { flag: 'correlator.session-ttl', kind: 'seconds', default: 86_400, help: 'Seconds an idle session stays active.' },
  { flag: 'correlator.max-spans', kind: 'positiveInt', default: 100_000, help: 'Most open entries per correlation table (oldest evicted and counted).' },
  { flag: 'correlator.sweep-interval', kind: 'seconds', default: 10, help: 'Seconds between TTL sweeps.' },
  { flag: 'sequence.instance-ttl', kind: 'seconds', default: 3600, help: 'Seconds an idle bridge-plugin instance is remembered for sequence tracking.' },
  { flag: 'sequence.window', kind: 'positiveInt', default: 100_000, help: 'Largest plausible jump of a plugin sequence number (or acked_seq); a larger one starts a new epoch (hermes_sidecar_sequence_resets_total).' },
  { flag: 'sequence.reorder-seconds', kind: 'seconds', default: 30, help: 'Seconds a sequence gap waits for late events before they count as lost (a heartbeat of the instance settles it at once).' },
  { flag: 'sequence.max-instances', kind: 'positiveInt', default: 10_000, help: 'Most plugin instances remembered (least recently seen evicted and counted).' },
  { flag: 'metrics.max-series', kind: 'positiveInt', default: 10_000, help: 'Global cap on live label sets across agent metrics; new ones past it fold into overflow series (open labels as "other").' },
  { flag: 'metrics.semconv', kind: 'boolean', default: 'false', help: 'Also export the OpenTelemetry GenAI families gen_ai_client_operation_duration_seconds and gen_ai_client_token_usage (true or false). Off by default: they repeat the API call data under a second set of names and spend the series budget.' },
  { flag: 'memory.limit-bytes', kind: 'nonNegativeInt', default: 512 * 1024 * 1024, help: 'Live memory (V8 heap used + Buffers) above which ingest answers 503 + Retry-After and /-/ready 503, until it is 10% below (0 disables).' },
  { flag: 'memory.rss-limit-bytes', kind: 'nonNegativeInt', default: 0, help: 'Resident memory above which ingest answers 503 + Retry-After, while live memory is at least half of it (0 disables).' },
  { flag: 'memory.heap-limit-bytes', kind: 'nonNegativeInt', default: 0, help: 'Used V8 heap above which ingest answers 503 + Retry-After until it falls again (0 disables).' },
  { flag: 'log.level', kind: 'logLevel', default: 'info', help: 'Log level: fatal, error, warn, info, debug, trace or silent.' },
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

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

export interface Config {
  readonly web: { readonly listen: ListenAddress; readonly telemetryPath: string; readonly configFile: string | undefined };
  readonly ingest: {
    readonly listen: ListenAddress;
    readonly token: string | undefined;
    readonly maxBodyBytes: number;
    readonly maxEventsPerRequest: number;
    readonly maxLineBytes: number;
    readonly maxJsonBytes: number;
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
  };
  readonly sequence: {
    readonly instanceTtlSeconds: number;
    readonly maxInstances: number;
    readonly window: number;
    readonly reorderSeconds: number;
  };
  readonly maxAgentSeries: number;
  /** Export the OpenTelemetry GenAI semantic-convention families too. */
  readonly semconv: boolean;
  readonly memory: { readonly liveLimitBytes: number; readonly rssLimitBytes: number; readonly heapLimitBytes: number };
  readonly labels: LabelRules;
  readonly buckets: BucketSets;
  /** USD per million tokens per provider/model, for calls Hermes did not price (`prices:` in the config file). */
  readonly prices: readonly PriceEntry[];
  readonly logLevel: string;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** host:port, [v6]:port, or :port (every interface). */
export function parseListenAddress(text: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || !Number.isInteger(port) || port > 65_535) {
    throw new Error('expected host:port, [ipv6]:port or :port with a port from 0 to 65535');
  }
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const positiveInt = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const KIND_SCHEMAS: Record<Kind, z.ZodType> = {
  address: z.string().transform((text, ctx) => {
    try {
      return parseListenAddress(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  }),
  path: z.string().regex(/^\/[\w./-]*$/, 'expected a path starting with /'),
  file: z.string().min(1, 'expected a file path'),
  positiveInt,
  nonNegativeInt: z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  seconds: z.coerce.number().positive().finite(),
  logLevel: z.enum(LOG_LEVELS),
  boolean: z.union([z.boolean(), z.enum(['true', 'false'], 'expected true or false').transform((text) => text === 'true')]),
};

const labelRuleSchema = z
  .object({
    cap: positiveInt.optional(),
    allow: z.array(z.string()).optional(),
    rewrite: z.record(z.string(), z.string()).optional(),
  })
  .strict();

const bucketsSchema = z
  .array(z.number().finite())
  .min(1)
  .refine((bounds) => bounds.every((bound, index) => index === 0 || bound > (bounds[index - 1] ?? -Infinity)), {
    message: 'bucket bounds must be strictly increasing',
  });

const usdPerMillion = z.number().finite().nonnegative();

/** prices: {<provider>: {<model>: {input, output, cache_read?, cache_write?}}}, USD per million tokens. */
const pricesSchema = z.record(
  z.string().min(1),
  z.record(
    z.string().min(1),
    z
      .object({ input: usdPerMillion, output: usdPerMillion, cache_read: usdPerMillion.optional(), cache_write: usdPerMillion.optional() })
      .strict(),
  ),
);

const fileSchema = z
  .object({
    prices: pricesSchema.optional(),
    labels: z.partialRecord(z.enum(OPEN_LABELS as [OpenLabel, ...OpenLabel[]]), labelRuleSchema).optional(),
    buckets: z
      .partialRecord(z.enum(Object.keys(DEFAULT_BUCKETS) as [BucketSetName, ...BucketSetName[]]), bucketsSchema)
      .optional(),
  })
  .passthrough();

type FileSettings = z.infer<typeof fileSchema>;

interface Sourced {
  readonly value: unknown;
  readonly source: string;
}

export interface ConfigInputs {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly readFile?: (path: string) => string;
}

function parseFlags(argv: readonly string[]): Record<string, string | undefined> {
  const { values } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(OPTIONS.map((option) => [option.flag, { type: 'string' as const }])),
    strict: true,
    allowPositionals: false,
  });
  return values;
}

/** The value of a dotted key (`ingest.max-body-bytes`) in the parsed file; dashes may be underscores. */
function fileValue(file: Record<string, unknown>, flag: string): unknown {
  let node: unknown = file;
  for (const part of flag.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    const record = node as Record<string, unknown>;
    node = record[part] ?? record[part.replaceAll('-', '_')];
  }
  return node;
}

function readText(readFile: (path: string) => string, path: string, what: string): string {
  try {
    return readFile(path);
  } catch (error) {
    throw new ConfigError(`${what}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function loadFile(path: string | undefined, readFile: (path: string) => string): FileSettings & Record<string, unknown> {
  if (path === undefined) return {};
  let parsed: unknown;
  try {
    parsed = parseYaml(readText(readFile, path, '--config.file'), { logLevel: 'error' });
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`--config.file: ${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const result = fileSchema.safeParse(parsed ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(`--config.file: ${path}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}

function resolveRaw(
  option: OptionSpec,
  flags: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv,
  file: Record<string, unknown>,
): Sourced | undefined {
  const flag = flags[option.flag];
  if (flag !== undefined) return { value: flag, source: `--${option.flag}` };
  const fromEnv = env[envName(option.flag)];
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: `${envName(option.flag)} (--${option.flag})` };
  if (option.inFile !== false) {
    const fromFile = fileValue(file, option.flag);
    if (fromFile !== undefined) return { value: fromFile, source: `${option.flag} in the config file (--${option.flag})` };
  }
  if (option.default !== undefined) return { value: option.default, source: `the default of --${option.flag}` };
  return undefined;
}

function validate(option: OptionSpec, raw: Sourced | undefined): unknown {
  if (raw === undefined) return undefined;
  const result = KIND_SCHEMAS[option.kind].safeParse(raw.value);
  if (!result.success) {
    throw new ConfigError(`invalid value for ${raw.source}: ${result.error.issues[0]?.message ?? 'invalid'}`);
  }
  return result.data;
}

function secret(
  env: NodeJS.ProcessEnv,
  envVar: string,
  file: string | undefined,
  readFile: (path: string) => string,
  flag: string,
): string | undefined {
  const text = file !== undefined ? readText(readFile, file, `--${flag}`) : env[envVar];
  const value = text?.trim();
  if (value === undefined || value === '') {
    if (file !== undefined) throw new ConfigError(`--${flag}: ${file} is empty`);
    return undefined;
  }
  return value;
}

function labelRules(file: FileSettings): LabelRules {
  return Object.fromEntries(
    OPEN_LABELS.map((label) => {
      const fromFile = file.labels?.[label];
      const rule: LabelRule = {
        cap: fromFile?.cap ?? DEFAULT_LABEL_CAPS[label],
        ...(fromFile?.allow === undefined ? {} : { allow: fromFile.allow }),
        ...(fromFile?.rewrite === undefined ? {} : { rewrite: fromFile.rewrite }),
      };
      return [label, rule];
    }),
  ) as LabelRules;
}

function priceEntries(file: FileSettings): PriceEntry[] {
  return Object.entries(file.prices ?? {}).flatMap(([provider, models]) =>
    Object.entries(models).map(([model, price]) => ({
      provider,
      model,
      input: price.input,
      output: price.output,
      cacheRead: price.cache_read,
      cacheWrite: price.cache_write,
    })),
  );
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
  let flags: Record<string, string | undefined>;
  try {
    flags = parseFlags(inputs.argv);
  } catch (error) {
    throw new ConfigError(`${(error as Error).message} (see --help)`);
  }
  const configFile = flags['config.file'] ?? inputs.env[envName('config.file')];
  const file = loadFile(configFile === '' ? undefined : configFile, readFile);

  const values = new Map<string, unknown>();
  for (const option of OPTIONS) values.set(option.flag, validate(option, resolveRaw(option, flags, inputs.env, file)));
  const get = <T>(flag: OptionFlag): T => values.get(flag) as T;

  const ingestListen = get<ListenAddress>('ingest.listen-address');
  const token = secret(inputs.env, SECRET_ENV.ingestToken, get('ingest.token-file'), readFile, 'ingest.token-file');
  if (!isLoopback(ingestListen.host) && token === undefined) {
    throw new ConfigError(
      `--ingest.listen-address ${ingestListen.host}:${ingestListen.port} is not a loopback address: ` +
        `set --ingest.token-file or ${SECRET_ENV.ingestToken} so ingest requires a bearer token`,
    );
  }

  return deepFreeze({
    web: { listen: get('web.listen-address'), telemetryPath: get('web.telemetry-path'), configFile: get('web.config.file') },
    ingest: {
      listen: ingestListen,
      token,
      maxBodyBytes: get('ingest.max-body-bytes'),
      maxEventsPerRequest: get('ingest.max-events-per-request'),
      maxLineBytes: get('ingest.max-line-bytes'),
      maxJsonBytes: get('ingest.max-json-bytes'),
      maxInflightBytes: get('ingest.max-inflight-bytes'),
      bodyTimeoutSeconds: get('ingest.body-timeout'),
      queueCapacity: get('ingest.queue-capacity'),
      queueMaxEvents: get('ingest.queue-max-events'),
      retryAfterSeconds: get('ingest.retry-after-seconds'),
    },
    webhook: {
      secret: secret(inputs.env, SECRET_ENV.webhookSecret, get('webhook.secret-file'), readFile, 'webhook.secret-file'),
      dedupeWindow: get('webhook.dedupe-window'),
      maxBodyBytes: get('webhook.max-body-bytes'),
    },
    correlator: {
      spanTtlSeconds: get('correlator.span-ttl'),
      sessionTtlSeconds: get('correlator.session-ttl'),
      maxSpans: get('correlator.max-spans'),
      sweepIntervalSeconds: get('correlator.sweep-interval'),
    },
    sequence: {
      instanceTtlSeconds: get('sequence.instance-ttl'),
      maxInstances: get('sequence.max-instances'),
      window: get('sequence.window'),
      reorderSeconds: get('sequence.reorder-seconds'),
    },
    maxAgentSeries: get('metrics.max-series'),
    semconv: get('metrics.semconv'),
    memory: {
      liveLimitBytes: get('memory.limit-bytes'),
      rssLimitBytes: get('memory.rss-limit-bytes'),
      heapLimitBytes: get('memory.heap-limit-bytes'),
    },
    labels: labelRules(file),
    buckets: { ...DEFAULT_BUCKETS, ...(file.buckets ?? {}) },
    prices: priceEntries(file),
    logLevel: get('log.level'),
  });
}

/** `--help`: every option with its environment variable and default. */
export function helpText(): string {
  const lines = [
    'Usage: hermes-prometheus-sidecar [options]',
    '       hermes-prometheus-sidecar install-plugin [--hermes-home DIR] [--enable]',
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
