/**
 * The registry factory: builds the storage of every catalogue family (src/metrics/families.ts),
 * creates the series of every closed label combination the catalogue pre-initialises, and hands
 * the families to the exposition stage (src/exposition/) as plain views. It is the only module
 * that imports prom-client, which serves the process and Node.js runtime metrics only (read as
 * data and rendered by the sidecar's own serializer, so they come out the same in both formats),
 * so a move to its successor (@prometheus-io/client) stays a one-file change.
 *
 * Families take labels as objects typed by the catalogue (closed labels take their declared
 * values, `unknown` or `other`), always complete; they refuse non-finite (and, for counters and
 * histograms, negative) values, counted here, and agent families share the global series budget,
 * whose figures (live series, limit, folds) this module owns. Each component is handed only the
 * metrics it owns (metricsOwnedBy).
 */
import client from 'prom-client';
import {
  CATALOGUE,
  closedValues,
  guardedLabel,
  type BucketSets,
  type Catalogue,
  type LabelsOf,
  type MetricKey,
  type MetricOwner,
  type MetricSpec,
  type OwnedKeys,
} from './catalogue.js';
import {
  CounterStorage,
  GaugeStorage,
  HistogramStorage,
  SeriesBudget,
  type CounterHandle,
  type Exemplar,
  type Family,
  type FamilyOptions,
  type FamilyView,
  type HistogramHandle,
  type HistogramSeries,
  type ScalarSeries,
} from './families.js';
import { OPEN_LABELS, OTHER } from './labels.js';

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

export type Metrics = { readonly [K in MetricKey]: FamilyOf<Catalogue[K]> };

/** The handles of the metrics one module owns: what that module is given, and all it can write. */
export type OwnedMetrics<O extends MetricOwner> = Pick<Metrics, OwnedKeys<O>>;

const METRIC_KEYS = Object.keys(CATALOGUE) as MetricKey[];

/** Picks from `metrics` the handles `owner` owns (the catalogue says which). */
export function metricsOwnedBy<O extends MetricOwner>(metrics: Metrics, owner: O): OwnedMetrics<O> {
  const owned = METRIC_KEYS.filter((key) => CATALOGUE[key].owner === owner).map((key) => [key, metrics[key]]);
  return Object.fromEntries(owned) as OwnedMetrics<O>;
}

/** Every combination of a metric's closed label values: the series that exist from the start. */
export function initialLabelSets(spec: MetricSpec): Record<string, string>[] {
  if (!spec.preinit) return [];
  let sets: Record<string, string>[] = [{}];
  for (const name of spec.labelNames) {
    const declared = spec.labels[name];
    const values = declared === undefined ? undefined : closedValues(declared);
    if (values === undefined) return [];
    sets = sets.flatMap((set) => values.map((value) => ({ ...set, [name]: value })));
  }
  return sets;
}

const LINT_FAILING_DEFAULT_METRICS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;

export interface MetricsRegistry {
  readonly metrics: Metrics;
  /** Live series across agent-scope families. */
  agentSeries(): number;
  /** Every exported family, catalogue order first, then the runtime metrics; rejects when one cannot be read. */
  collect(): Promise<readonly FamilyView[]>;
}

export interface RegistryOptions {
  readonly buckets: BucketSets;
  /** Global cap on live label sets across agent metrics. */
  readonly maxAgentSeries: number;
  /** Adds prom-client's process_* and nodejs_* metrics (off in unit tests that compare text). */
  readonly defaultMetrics: boolean;
  /** Exports the OpenTelemetry GenAI families (catalogue entries with `optIn: 'semconv'`). */
  readonly semconv?: boolean;
}

function runtimeRegistry(enabled: boolean): client.Registry | undefined {
  if (!enabled) return undefined;
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  // Gauges named *_total fail `promtool check metrics`; each is the sum of the per-type gauge of
  // the same name without the suffix, which stays.
  for (const name of LINT_FAILING_DEFAULT_METRICS) registry.removeSingleMetric(name);
  return registry;
}

type RuntimeMetric = Awaited<ReturnType<client.Registry['getMetricsAsJSON']>>[number];
type RuntimeValue = RuntimeMetric['values'][number] & { readonly metricName?: string };

const labelText = (value: unknown): string => (typeof value === 'string' ? value : String(value));

/** One prom-client metric as a family view, so the sidecar's serializer renders it like its own. */
function runtimeFamily(metric: RuntimeMetric): FamilyView | undefined {
  // prom-client's typings declare a numeric enum; at run time the type is its name.
  const kind = String(metric.type);
  const type = kind === 'counter' || kind === 'gauge' || kind === 'histogram' ? kind : undefined;
  if (type === undefined) return undefined;
  const values = metric.values as readonly RuntimeValue[];
  const labelNames = Object.keys(values[0]?.labels ?? {}).filter((name) => name !== 'le');
  const labelValues = (value: RuntimeValue) => labelNames.map((name) => labelText(value.labels[name]));
  const base = { name: metric.name, help: metric.help, type, labelNames, stable: false } as const;
  if (type !== 'histogram') {
    // A runtime gauge without a reading yet (the event-loop lag mean before the first sample) is
    // NaN in prom-client: left out, as no sample of this sidecar may be non-finite.
    const series: ScalarSeries[] = values
      .filter((value) => !Number.isNaN(value.value))
      .map((value) => ({ labelValues: labelValues(value), version: 0, value: value.value }));
    return { ...base, bounds: undefined, series: () => series };
  }
  // prom-client reports cumulative buckets with `le` labels; storage keeps per-bucket counts.
  const bounds: number[] = [];
  const groups = new Map<string, { labelValues: string[]; cumulative: number[]; sum: number; count: number }>();
  for (const value of values) {
    const labels = labelValues(value);
    const key = labels.join('\u0000');
    let group = groups.get(key);
    if (group === undefined) {
      group = { labelValues: labels, cumulative: [], sum: 0, count: 0 };
      groups.set(key, group);
    }
    if (value.metricName === `${metric.name}_bucket`) {
      group.cumulative.push(value.value);
      const le = Number(value.labels.le);
      if (groups.size === 1 && Number.isFinite(le)) bounds.push(le);
    } else if (value.metricName === `${metric.name}_sum`) group.sum = value.value;
    else if (value.metricName === `${metric.name}_count`) group.count = value.value;
  }
  const series: HistogramSeries[] = [...groups.values()].map((group) => ({
    labelValues: group.labelValues,
    version: 0,
    buckets: group.cumulative.map((total, index) => total - (group.cumulative[index - 1] ?? 0)),
    sum: group.sum,
    count: group.count,
    exemplars: undefined,
  }));
  return { ...base, bounds, series: () => series };
}

function storageFor(spec: MetricSpec, options: FamilyOptions, buckets: BucketSets): Family {
  if (spec.type === 'counter') return new CounterStorage(options);
  if (spec.type === 'gauge') return new GaugeStorage(options);
  return new HistogramStorage(options, spec.buckets === undefined ? [] : buckets[spec.buckets]);
}

type AnyFamily = CounterFamily<MetricSpec> | GaugeFamily<MetricSpec> | HistogramFamily<MetricSpec>;

export function createMetricsRegistry(options: RegistryOptions): MetricsRegistry {
  const families = new Map<MetricKey, Family>();
  const budget = new SeriesBudget(options.maxAgentSeries);
  const openLabels: ReadonlySet<string> = new Set(OPEN_LABELS);
  for (const [key, spec] of Object.entries(CATALOGUE) as [MetricKey, MetricSpec][]) {
    const enabled = spec.optIn !== 'semconv' || options.semconv === true;
    const family = storageFor(
      spec,
      {
        spec,
        enabled,
        budget: spec.scope === 'agent' ? budget : undefined,
        foldLabels: spec.labelNames.filter((name) => openLabels.has(guardedLabel(spec, name) ?? '')),
        foldValue: OTHER,
        // Bound below, before any write can happen.
        onFold: () => metrics.seriesOverflow.inc({ metric: spec.name }),
        onInvalid: () => metrics.invalidValues.inc({}),
      },
      options.buckets,
    );
    families.set(key, family);
  }
  for (const family of families.values()) {
    for (const labels of initialLabelSets(family.spec)) family.preinit(labels);
  }
  const runtime = runtimeRegistry(options.defaultMetrics);
  const exported = [...families.values()].filter((family) => family.enabled);
  const typed = new Map<MetricKey, AnyFamily>(families);
  const agentFamilies = exported.filter((family) => family.scope === 'agent');
  const agentSeries = (): number => agentFamilies.reduce((total, family) => total + family.size, 0);
  // Each entry is the storage class of its spec's type (storageFor), which implements that
  // type's family interface for any labels: the record's per-key label types are asserted once,
  // here.
  const metrics = Object.fromEntries(typed) as Metrics;
  metrics.seriesLimit.set({}, options.maxAgentSeries);

  return {
    metrics,
    agentSeries,
    collect: async () => {
      metrics.liveSeries.set({}, agentSeries());
      if (runtime === undefined) return exported;
      const runtimeFamilies = (await runtime.getMetricsAsJSON()).flatMap((metric) => runtimeFamily(metric) ?? []);
      return [...exported, ...runtimeFamilies];
    },
  };
}
