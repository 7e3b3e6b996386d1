/**
 * How a component declares the families it writes: the spec builders, label kinds and bucket
 * sets. Each component exports its declarations next to the code that writes them (a recorder,
 * the ingest stages, the web listener, the label guard, the registry); the composition root
 * gathers them into the catalogue (src/catalogue.ts) that feeds the registry, docs/metrics.md, the
 * dashboards' and rules' name checks and the series budget. Input never creates a metric name.
 *
 * A label is either a closed set of values the sidecar chooses, an open label whose values come
 * from Hermes and pass the cardinality guard (src/metrics/labels.ts), or an info label set once
 * at start. The closed sets pre-initialise the pipeline's own series at 0 (the registry does it),
 * validate values through closedLabel, fill `{label}` placeholders of HELP texts and are listed
 * in docs/metrics.md.
 */

/** Bucket sets; each can be overridden in the config file (`buckets:`). */
export const DEFAULT_BUCKETS = {
  api_seconds: [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84,
    327.68,
  ],
  tool_seconds: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
  turn_seconds: [
    0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6, 819.2, 1800, 3600,
  ],
  tokens: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304],
  count: [1, 2, 3, 5, 8, 13, 21, 34, 55, 89],
  batch_events: [1, 5, 10, 50, 100, 500, 1000, 5000],
  // The OpenTelemetry GenAI semantic conventions' advice for gen_ai.client.operation.duration
  // (0.01 s doubling to 81.92 s) and gen_ai.client.token.usage (powers of 4 up to 67108864).
  genai_seconds: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  genai_tokens: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  /** A share of a whole (0–1), finer near full, where a context window starts to compress or fail. */
  ratio: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1],
  /**
   * USD per session: from a fraction of a cent (one short turn on a cheap model) to tens of
   * dollars (hours of agentic work on a frontier model), in 1–2.5–5 steps so a quantile read
   * between two bounds is off by at most 2.5×.
   */
  session_usd: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100],
  /**
   * Tokens per session, powers of 4 from 1024: a single turn already sends a system prompt of a
   * few thousand tokens, and a long session re-sends its context on every call (hundreds of
   * millions in total).
   */
  session_tokens: [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456],
  /**
   * Session length, first turn to finalization: a one-shot CLI run takes seconds, a gateway
   * conversation can stay open for days (up to the 7-day bound of any duration).
   */
  session_seconds: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 86400, 259200, 604800],
  /**
   * Output tokens per second of a streamed call: hosted models decode at 20–200 tokens/s, so the
   * bounds are finest there (the p50 on-call reads); specialised hardware reaches thousands.
   */
  tokens_per_second: [2.5, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200, 300, 500, 1000, 2000],
} as const satisfies Record<string, readonly number[]>;

export type BucketSetName = keyof typeof DEFAULT_BUCKETS;
export type BucketSets = Record<BucketSetName, readonly number[]>;

/** A label whose values come from Hermes: sanitized and capped by the label guard. */
export const OPEN = 'open';
/** A label of an info metric: one value, known at start. */
export const INFO = 'info';
/** A closed set computed from the whole catalogue (the names of metrics). */
export interface DerivedValues {
  readonly derived: (catalogue: readonly MetricSpec[]) => readonly string[];
  /** What the values are, for docs/metrics.md. */
  readonly description: string;
}
/**
 * An open label under another name: it carries the guarded values of `sameAs` (the
 * OpenTelemetry names of provider, model and reason), capped and folded as that label is.
 */
interface SameValues {
  /** An open label of the guard (the registry refuses any other). */
  readonly sameAs: string;
}
export type LabelValues = readonly string[] | typeof OPEN | typeof INFO | DerivedValues | SameValues;
export type LabelDeclarations = Readonly<Record<string, LabelValues>>;

/**
 * `agent` metrics describe Hermes and count towards the global series figures;
 * `delivery` and `self` metrics describe the pipeline and are never capped.
 */
type MetricScope = 'agent' | 'delivery' | 'self';
type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricSpec {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly labels: LabelDeclarations;
  /** The label names in exposition order (the keys of `labels`). */
  readonly labelNames: readonly string[];
  readonly buckets?: BucketSetName;
  readonly scope: MetricScope;
  /**
   * Whether the series of every combination of closed values exist at 0 from the start, so
   * rate() sees the first increment. Only for pipeline metrics whose labels are all closed; agent
   * series appear with their first event, since they spend the series budget.
   */
  readonly preinit: boolean;
  /** Exported only when chosen: `semconv` families need --metrics.semconv. */
  readonly optIn?: 'semconv';
  /**
   * A gauge of what is open (spans in flight, active sessions), moved as entries open and close:
   * its series expire (--metrics.series-ttl) only once at 0, as a removed one above 0 would lose
   * the count it carries.
   */
  readonly computed?: boolean;
}

const isClosed = (values: LabelValues): values is readonly string[] | DerivedValues =>
  values !== OPEN && values !== INFO && !('sameAs' in values);

/** The guard label whose values a label carries: itself when open, its `sameAs` when declared so. */
export function guardedLabel(spec: MetricSpec, name: string): string | undefined {
  const declared = spec.labels[name];
  if (declared === OPEN) return name;
  return declared !== undefined && typeof declared === 'object' && 'sameAs' in declared ? declared.sameAs : undefined;
}

/**
 * The closed values of a label; undefined for open and info labels. A derived set is resolved
 * against the catalogue it is part of, which must then be given.
 */
export function closedValues(values: LabelValues, catalogue?: readonly MetricSpec[]): readonly string[] | undefined {
  if (!isClosed(values)) return undefined;
  if (!('derived' in values)) return values;
  if (catalogue === undefined) throw new Error(`the values of a derived label (${values.description}) need the catalogue`);
  return values.derived(catalogue);
}

/** Replaces `{label}` in a HELP text with that label's closed values, so HELP cannot drift from them. */
function helpText(help: string, labels: LabelDeclarations): string {
  return help.replace(/\{(\w+)\}/g, (_match, label: string) => {
    const declared = labels[label];
    const values = declared === undefined || (typeof declared === 'object' && 'derived' in declared) ? undefined : closedValues(declared);
    if (values === undefined) throw new Error(`HELP placeholder {${label}} names no closed label`);
    return values.join(', ');
  });
}

interface SpecOptions {
  /** Opt out of pre-initialisation (say why where it is used). */
  readonly preinit?: false;
  /** A gauge of what is open, expired only at 0 (MetricSpec.computed). */
  readonly computed?: true;
}

/** Declares a family; `labels` are in exposition order. */
function spec<const T extends MetricType, const L extends LabelDeclarations>(
  type: T,
  name: string,
  labels: L,
  scope: MetricScope,
  help: string,
  options: SpecOptions = {},
) {
  return {
    name,
    help: helpText(help, labels),
    type,
    labels,
    labelNames: Object.keys(labels) as (keyof L & string)[],
    scope,
    preinit: scope !== 'agent' && options.preinit !== false && Object.values(labels).every(isClosed),
    computed: options.computed === true,
  };
}

export const counter = <const L extends LabelDeclarations>(name: string, labels: L, scope: MetricScope, help: string, options?: SpecOptions) =>
  spec('counter', name, labels, scope, help, options);

export const gauge = <const L extends LabelDeclarations>(name: string, labels: L, scope: MetricScope, help: string, options?: SpecOptions) =>
  spec('gauge', name, labels, scope, help, options);

export const histogram = <const L extends LabelDeclarations, const B extends BucketSetName>(
  name: string,
  labels: L,
  buckets: B,
  scope: MetricScope,
  help: string,
) => ({ ...spec('histogram', name, labels, scope, help), buckets });

/** The families one component declares: what it is handed, and all it can write. */
export type Declarations = Readonly<Record<string, MetricSpec>>;

/** The type of one label's value: a closed value, `unknown` or `other`; any string for the rest. */
type ValueType<V> = V extends readonly (infer T extends string)[] ? T | 'unknown' | 'other' : string;
export type LabelsOf<S extends MetricSpec> = { readonly [K in keyof S['labels']]: ValueType<S['labels'][K]> };

type Merged<P extends readonly Declarations[]> = P extends readonly [infer H, ...infer R extends readonly Declarations[]] ? H & Merged<R> : unknown;

/** The declarations of several components as one object; a key declared twice is refused. */
export function mergeDeclarations<const P extends readonly Declarations[]>(...parts: P): Merged<P> {
  const merged: Record<string, MetricSpec> = {};
  for (const part of parts) {
    for (const [key, spec] of Object.entries(part)) {
      if (key in merged) throw new Error(`the family ${key} is declared twice`);
      merged[key] = spec;
    }
  }
  return merged as Merged<P>;
}
