/**
 * What can be set: one table (OPTIONS) drives the flags, the environment names, the config-file
 * keys and `--help`; config.ts reads the values from those sources.
 */
import type { Kind } from './configValues.js';
import { DEFAULT_MAX_TABLE_BYTES } from './correlate/assemble.js';
import { LISTENER_OPTIONS } from './net/options.js';
import { DEFAULT_BUCKET_FACTOR, DEFAULT_ZERO_THRESHOLD, MAX_NATIVE_BUCKETS } from './metrics/native.js';
import { DEFAULT_MAX_SERIES_BYTES } from './metrics/seriesBudget.js';

export interface OptionSpec {
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

export type OptionFlag = (typeof OPTIONS)[number]['flag'];

export const envName = (flag: string): string =>
  `HERMES_SIDECAR_${flag.replace(/[.-]/g, '_').toUpperCase()}`;

/** Environment variables that carry a secret itself rather than a file. */
export const SECRET_ENV = {
  ingestToken: 'HERMES_SIDECAR_INGEST_TOKEN',
  webhookSecret: 'HERMES_SIDECAR_WEBHOOK_SECRET',
} as const;

export const FLAGS: readonly string[] = OPTIONS.map((option) => option.flag);
/** Every environment variable the sidecar reads: one per option, and the two that carry a secret. */
export const ENVIRONMENT_NAMES: readonly string[] = [...FLAGS.map(envName), ...Object.values(SECRET_ENV)];

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
