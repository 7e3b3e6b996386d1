/**
 * The registry factory: builds the storage of every catalogue family (src/metrics/families.ts),
 * creates the series of every closed label combination the catalogue pre-initialises, and hands
 * the families to the exposition stage (src/exposition/) as plain views, followed by the process
 * and Node.js runtime metrics (runtime.ts).
 *
 * Families take labels as objects typed by their declaration (closed labels take their declared
 * values, `unknown` or `other`), always complete; they refuse non-finite (and, for counters and
 * histograms, negative) values, counted here, and agent families share the global series budget,
 * whose figures (live series, limit, folds) this module declares and writes. The registry is
 * built from the catalogue the composition root gathers (src/catalogue.ts); each component takes
 * the families of its own declaration object (`Families<typeof ITS_FAMILIES>`) and is handed its
 * stage's, so writing a family it did not declare does not type-check.
 */
import {
  closedValues,
  counter,
  gauge,
  guardedLabel,
  type BucketSets,
  type Declarations,
  type DerivedValues,
  type LabelsOf,
  type MetricSpec,
} from './declare.js';
import { fed } from './fedBy.js';
import {
  CounterStorage,
  GaugeStorage,
  HistogramStorage,
  SeriesBudget,
  type CounterHandle,
  type Exemplar,
  type Expiry,
  type Family,
  type FamilyOptions,
  type FamilyView,
  type HistogramHandle,
} from './families.js';
import { defaultLabelRules, LABEL_GUARD_FAMILIES, LabelGuard, OPEN_LABELS, type LabelRules } from './labels.js';
import { DEFAULT_MAX_RAW_LABEL_BYTES, OTHER } from '../wireText.js';
import { DEFAULT_NATIVE_SETTINGS, type NativeHistogramSettings } from './native.js';
import { runtimeMetrics } from './runtime.js';
import { stepsInTurn } from '../slices.js';

export type { CounterHandle, Exemplar, FamilyView, HistogramHandle, HistogramSeries, ScalarSeries } from './families.js';

export interface CounterFamily<S extends MetricSpec> {
  inc(labels: LabelsOf<S>, amount?: number): void;
  /** The series of these labels, resolved once (see CounterStorage.handle). */
  handle(labels: LabelsOf<S>): CounterHandle;
}

export interface GaugeFamily<S extends MetricSpec> {
  set(labels: LabelsOf<S>, value: number): void;
  inc(labels: LabelsOf<S>, amount?: number): void;
  dec(labels: LabelsOf<S>, amount?: number): void;
}

export interface HistogramFamily<S extends MetricSpec> {
  observe(labels: LabelsOf<S>, value: number, exemplar?: Exemplar): void;
  handle(labels: LabelsOf<S>): HistogramHandle;
}

type FamilyOf<S extends MetricSpec> = S['type'] extends 'counter'
  ? CounterFamily<S>
  : S['type'] extends 'gauge'
    ? GaugeFamily<S>
    : HistogramFamily<S>;

/** The handles of the families a declaration object declares: all its holder can write. */
export type Families<D extends Declarations> = { readonly [K in keyof D]: FamilyOf<D[K]> };

/**
 * The handles of `declarations`, picked from the families of a catalogue that includes them (the
 * same spec objects, so the label types are the declaration's own).
 */
export function familiesFor<D extends Declarations>(metrics: Families<D>, declarations: D): Families<D> {
  return Object.fromEntries(Object.keys(declarations).map((key) => [key, metrics[key]])) as Families<D>;
}

/** The names of agent metrics: the values of `metric` on the series overflow counter. */
const agentMetricNames: DerivedValues = {
  description: 'the name of an agent metric',
  derived: (catalogue) => catalogue.filter((spec) => spec.scope === 'agent').map((spec) => spec.name),
};

/** The series budget's figures and the storage's refusals, written by the registry itself. */
export const REGISTRY_FAMILIES = {
  liveSeries: fed(gauge('hermes_sidecar_series', {}, 'self',
    'Live label sets across agent metrics (a histogram label set counts once).'),
    'sidecar', 'series storage'),
  seriesLimit: fed(gauge('hermes_sidecar_series_limit', {}, 'self',
    'The global cap on live label sets across agent metrics.'),
    'sidecar', 'configuration'),
  seriesBytes: fed(gauge('hermes_sidecar_series_bytes', {}, 'self',
    'Bytes charged for the live agent series (labels, numbers, classic and native buckets, cached renderings), against --metrics.max-series-bytes.'),
    'sidecar', 'series storage'),
  seriesBytesLimit: fed(gauge('hermes_sidecar_series_bytes_limit', {}, 'self',
    'The byte budget of live agent series (--metrics.max-series-bytes; 0: none).'),
    'sidecar', 'configuration'),
  seriesOverflow: fed(counter('hermes_sidecar_series_overflow_total', { metric: agentMetricNames }, 'self',
    'New label sets folded into their overflow series (open labels as "other") because the global series cap was reached.'),
    'sidecar', 'series storage'),
  seriesBytesRefused: fed(counter('hermes_sidecar_series_bytes_refused_total', { metric: agentMetricNames }, 'self',
    'New label sets refused a series of their own because it would have taken the live agent series past --metrics.max-series-bytes; each is then written to its overflow series (counted in hermes_sidecar_series_overflow_total).'),
    'sidecar', 'series storage'),
  seriesExpired: fed(counter('hermes_sidecar_series_expired_total', { metric: agentMetricNames }, 'self',
    'Agent series removed because nothing wrote them for --metrics.series-ttl; each gave its slot and bytes back to the series budget and its open label values back to their label caps.'),
    'sidecar', 'the expiry sweep (`--metrics.series-ttl`, every `--correlator.sweep-interval`)'),
  invalidValues: fed(counter('hermes_sidecar_invalid_values_total', {}, 'self',
    'Values refused by the metric storage, each a bug in the sidecar: a number not finite, or negative for a counter or histogram (never stored), or a closed label value its declaration does not list (written as "other").'),
    'sidecar', 'series storage: numbers refused as not finite or negative, closed label values not declared'),
  nativeHalvings: fed(counter('hermes_sidecar_native_resolution_reductions_total', {}, 'self',
    'Times a histogram series halved the resolution of its native buckets (schema minus 1) to stay within --metrics.native-histogram-max-buckets.'),
    'sidecar', 'series storage: native histogram buckets past --metrics.native-histogram-max-buckets'),
} as const satisfies Declarations;

/** The declared values of a closed label (a derived set resolved against the catalogue); undefined for the others. */
function closedValuesOf(spec: MetricSpec, name: string, catalogue: readonly MetricSpec[]): readonly string[] | undefined {
  const declared = spec.labels[name];
  return declared === undefined ? undefined : closedValues(declared, catalogue);
}

/** Every combination of a metric's closed label values: the series that exist from the start. */
export function initialLabelSets(spec: MetricSpec, catalogue: readonly MetricSpec[]): Record<string, string>[] {
  if (!spec.preinit) return [];
  let sets: Record<string, string>[] = [{}];
  for (const name of spec.labelNames) {
    const values = closedValuesOf(spec, name, catalogue);
    if (values === undefined) return [];
    sets = sets.flatMap((set) => values.map((value) => ({ ...set, [name]: value })));
  }
  return sets;
}

export interface MetricsRegistry<M = unknown> {
  readonly metrics: M;
  /**
   * The cardinality guard of the open labels, built on this registry: the storage hands it the
   * references of its series, and its sweep is the last step of each expiry sweep.
   */
  readonly labels: LabelGuard;
  /** Live series across agent-scope families. */
  agentSeries(): number;
  /** Bytes charged for the live agent series (src/metrics/seriesBudget.ts). */
  seriesBytes(): number;
  /** Every exported family, catalogue order first, then the runtime metrics; rejects when one cannot be read. */
  collect(): Promise<readonly FamilyView[]>;
  /**
   * The steps of one expiry sweep at `now` (epoch seconds): series of expiring families not
   * written for `idleSeconds` (the series TTL unless the memory guard sheds early) leave
   * (computed gauges once at 0), then the guard forgets what they released. Each step is bounded
   * (at most one chunk of one family); nothing to do when the TTL is 0.
   */
  expirySteps(now: number, idleSeconds?: number): () => boolean;
}

export interface RegistryOptions {
  readonly buckets: BucketSets;
  /** Global cap on live label sets across agent metrics. */
  readonly maxAgentSeries: number;
  /** Byte budget of the live agent series (--metrics.max-series-bytes); 0 or absent: none. */
  readonly maxSeriesBytes?: number;
  /** The label guard's rules (caps, allow-lists, rewrites); the default caps when absent. */
  readonly labels?: LabelRules;
  /** The raw label-value limit the label guard cuts to (--ingest.max-label-value-bytes). */
  readonly maxLabelValueBytes?: number;
  /** Adds prom-client's process_* and nodejs_* metrics (off in unit tests that compare text). */
  readonly defaultMetrics: boolean;
  /** Exports the OpenTelemetry GenAI families (catalogue entries with `optIn: 'semconv'`). */
  readonly semconv?: boolean;
  /** Native buckets beside the classic ones in every catalogue histogram (DEFAULT_NATIVE_SETTINGS when absent); false: classic only. */
  readonly nativeHistograms?: NativeHistogramSettings | false;
  /** Seconds without a write after which an agent series is removed (--metrics.series-ttl); 0 or absent: never. */
  readonly seriesTtlSeconds?: number;
}

/**
 * Which series of a family leave once idle for the series TTL: agent families written by events,
 * any; computed gauges (open spans, active sessions), those at 0.
 */
export function seriesExpiry(spec: MetricSpec): Expiry {
  if (spec.scope !== 'agent') return 'never';
  return spec.computed === true ? 'idle at zero' : 'idle';
}

function storageFor(spec: MetricSpec, options: FamilyOptions, buckets: BucketSets, native: NativeHistogramSettings | undefined): Family {
  if (spec.type === 'counter') return new CounterStorage(options);
  if (spec.type === 'gauge') return new GaugeStorage(options);
  return new HistogramStorage(options, spec.buckets === undefined ? [] : buckets[spec.buckets], native);
}

type AnyFamily = CounterFamily<MetricSpec> | GaugeFamily<MetricSpec> | HistogramFamily<MetricSpec>;

/** Refuses a catalogue that declares a name twice or carries a label for a guard label that does not exist. */
function checkCatalogue(specs: readonly MetricSpec[], openLabels: ReadonlySet<string>): void {
  const names = new Set<string>();
  for (const spec of specs) {
    if (names.has(spec.name)) throw new Error(`metric ${spec.name} is declared twice`);
    names.add(spec.name);
    for (const label of spec.labelNames) {
      const guarded = guardedLabel(spec, label);
      if (guarded !== undefined && !openLabels.has(guarded)) throw new Error(`${spec.name}{${label}} carries ${guarded}, not an open label`);
    }
  }
}

/**
 * Builds the storage of every family of `catalogue` (the composition root's, src/catalogue.ts),
 * which must include the registry's own declarations.
 */
export function createRegistry<D extends Declarations & typeof REGISTRY_FAMILIES & typeof LABEL_GUARD_FAMILIES>(
  catalogue: D,
  options: RegistryOptions,
): MetricsRegistry<Families<D>> {
  const families = new Map<string, Family>();
  const budget = new SeriesBudget(options.maxAgentSeries, options.maxSeriesBytes ?? 0);
  const ttlSeconds = options.seriesTtlSeconds ?? 0;
  // Built before any family, on counters bound below before any write can happen.
  const labels = new LabelGuard(options.labels ?? defaultLabelRules(), {
    labelOverflow: { inc: (labelSet) => guardCounters.labelOverflow.inc(labelSet) },
    labelValuesCut: { inc: (labelSet) => guardCounters.labelValuesCut.inc(labelSet) },
    labelCacheEvictions: { inc: (labelSet) => guardCounters.labelCacheEvictions.inc(labelSet) },
  }, options.maxLabelValueBytes ?? DEFAULT_MAX_RAW_LABEL_BYTES);
  const openLabels: ReadonlySet<string> = new Set(OPEN_LABELS);
  const specs: readonly MetricSpec[] = Object.values(catalogue);
  checkCatalogue(specs, openLabels);
  for (const [key, spec] of Object.entries(catalogue) as [string, MetricSpec][]) {
    const enabled = spec.optIn !== 'semconv' || options.semconv === true;
    const family = storageFor(
      spec,
      {
        spec,
        enabled,
        budget: spec.scope === 'agent' ? budget : undefined,
        foldLabels: spec.labelNames.filter((name) => openLabels.has(guardedLabel(spec, name) ?? '')),
        guards: spec.labelNames.map((name) => guardedLabel(spec, name)),
        closedValues: spec.labelNames.map((name) => closedValuesOf(spec, name, specs)),
        foldValue: OTHER,
        // Bound below, before any write can happen.
        onFold: () => own.seriesOverflow.inc({ metric: spec.name }),
        onInvalid: () => own.invalidValues.inc({}),
        onBytesRefused: () => own.seriesBytesRefused.inc({ metric: spec.name }),
        onNativeHalvings: (halvings) => own.nativeHalvings.inc({}, halvings),
        expiry: seriesExpiry(spec),
        admission: labels,
        onExpire: () => own.seriesExpired.inc({ metric: spec.name }),
      },
      options.buckets,
      options.nativeHistograms === false ? undefined : (options.nativeHistograms ?? DEFAULT_NATIVE_SETTINGS),
    );
    families.set(key, family);
  }
  for (const family of families.values()) {
    for (const labels of initialLabelSets(family.spec, specs)) family.preinit(labels);
  }
  const runtime = options.defaultMetrics ? runtimeMetrics() : undefined;
  const exported = [...families.values()].filter((family) => family.enabled);
  const typed = new Map<string, AnyFamily>(families);
  const agentFamilies = exported.filter((family) => family.scope === 'agent');
  const agentSeries = (): number => agentFamilies.reduce((total, family) => total + family.size, 0);
  // Each entry is the storage class of its spec's type (storageFor), which implements that
  // type's family interface for any labels: the record's per-key label types are asserted once,
  // here.
  const metrics = Object.fromEntries(typed) as Families<D>;
  const own = familiesFor(Object.fromEntries(typed) as Families<typeof REGISTRY_FAMILIES>, REGISTRY_FAMILIES);
  const guardCounters = familiesFor(Object.fromEntries(typed) as Families<typeof LABEL_GUARD_FAMILIES>, LABEL_GUARD_FAMILIES);
  own.seriesLimit.set({}, options.maxAgentSeries);
  own.seriesBytesLimit.set({}, options.maxSeriesBytes ?? 0);

  const expiring = exported.filter((family) => seriesExpiry(family.spec) !== 'never');

  return {
    metrics,
    labels,
    agentSeries,
    seriesBytes: () => budget.bytes,
    expirySteps: (now, idleSeconds = ttlSeconds) => {
      if (ttlSeconds <= 0) return () => false;
      const families = expiring.map((family) => () => family.expirySteps(now, idleSeconds));
      const guardSweep = () => () => {
        labels.sweep(now, idleSeconds);
        return false;
      };
      return stepsInTurn([...families, guardSweep]);
    },
    collect: async () => {
      own.liveSeries.set({}, agentSeries());
      own.seriesBytes.set({}, budget.bytes);
      if (runtime === undefined) return exported;
      return [...exported, ...(await runtime.collect())];
    },
  };
}
