/**
 * The registry factory: builds every catalogue family (src/metrics/families.ts), creates the
 * series of every closed label combination the catalogue pre-initialises, and renders /metrics.
 * It is the only module that imports prom-client, which serves the process and Node.js runtime
 * metrics only, so a move to its successor (@prometheus-io/client) stays a one-file change.
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
  type BucketSets,
  type Catalogue,
  type LabelsOf,
  type MetricKey,
  type MetricOwner,
  type MetricSpec,
  type OwnedKeys,
} from './catalogue.js';
import { Family, SeriesBudget } from './families.js';
import { OPEN_LABELS, OTHER } from './labels.js';


export interface CounterHandle {
  inc(amount?: number): void;
}

export interface HistogramHandle {
  observe(value: number): void;
}

export interface CounterFamily<S extends MetricSpec> {
  inc(labels: LabelsOf<S>, amount?: number): void;
  /** The series of these labels, resolved once (see Family.handle). */
  handle(labels: LabelsOf<S>): CounterHandle;
}

export interface GaugeFamily<S extends MetricSpec> {
  set(labels: LabelsOf<S>, value: number): void;
  inc(labels: LabelsOf<S>, amount?: number): void;
  dec(labels: LabelsOf<S>, amount?: number): void;
}

export interface HistogramFamily<S extends MetricSpec> {
  observe(labels: LabelsOf<S>, value: number): void;
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
  readonly contentType: string;
  /** Live series across agent-scope families. */
  agentSeries(): number;
  /** Exposition text of every family and the runtime metrics; rejects when it cannot be rendered. */
  render(): Promise<string>;
}

export interface RegistryOptions {
  readonly buckets: BucketSets;
  /** Global cap on live label sets across agent metrics. */
  readonly maxAgentSeries: number;
  /** Adds prom-client's process_* and nodejs_* metrics (off in unit tests that compare text). */
  readonly defaultMetrics: boolean;
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

export function createMetricsRegistry(options: RegistryOptions): MetricsRegistry {
  const families = new Map<MetricKey, Family>();
  const budget = new SeriesBudget(options.maxAgentSeries);
  const openLabels: ReadonlySet<string> = new Set(OPEN_LABELS);
  for (const [key, spec] of Object.entries(CATALOGUE) as [MetricKey, MetricSpec][]) {
    const agent = spec.scope === 'agent';
    families.set(
      key,
      new Family({
        spec,
        bounds: spec.buckets === undefined ? undefined : options.buckets[spec.buckets],
        budget: agent ? budget : undefined,
        foldLabels: spec.labelNames.filter((name) => openLabels.has(name)),
        foldValue: OTHER,
        onFold: () => metrics.seriesOverflow.inc({ metric: spec.name }),
        onInvalid: () => metrics.invalidValues.inc({}),
      }),
    );
  }
  const metrics = Object.fromEntries(families) as unknown as Metrics;
  for (const family of families.values()) {
    for (const labels of initialLabelSets(family.spec)) family.handle(labels);
  }
  metrics.seriesLimit.set({}, options.maxAgentSeries);
  const runtime = runtimeRegistry(options.defaultMetrics);
  const ordered = [...families.values()];
  const agentFamilies = ordered.filter((family) => family.spec.scope === 'agent');
  const agentSeries = (): number => agentFamilies.reduce((total, family) => total + family.size, 0);

  return {
    metrics,
    contentType: client.Registry.PROMETHEUS_CONTENT_TYPE,
    agentSeries,
    render: async () => {
      metrics.liveSeries.set({}, agentSeries());
      const out: string[] = [];
      for (const family of ordered) family.render(out);
      const own = out.join('');
      return runtime === undefined ? own : `${own}\n${await runtime.metrics()}`;
    },
  };
}
