/**
 * The registry factory: the only module that imports prom-client, so the move to its successor
 * (@prometheus-io/client) stays a one-file change.
 *
 * It builds every catalogue metric on one injected Registry (never the global one) and wraps each
 * in a family that
 *  - takes labels as an object typed by the catalogue, always complete;
 *  - refuses non-finite or negative values before prom-client sees them (prom-client lets NaN
 *    poison a counter forever);
 *  - remembers its live series, so the sidecar can report and bound them.
 */
import client from 'prom-client';
import {
  CATALOGUE,
  type BucketSets,
  type Catalogue,
  type MetricKey,
  type MetricSpec,
} from './catalogue.js';

export type LabelsOf<S extends MetricSpec> = { readonly [K in S['labelNames'][number]]: string };

export interface CounterFamily<S extends MetricSpec> {
  inc(labels: LabelsOf<S>, amount?: number): void;
}

export interface GaugeFamily<S extends MetricSpec> {
  set(labels: LabelsOf<S>, value: number): void;
  inc(labels: LabelsOf<S>, amount?: number): void;
  dec(labels: LabelsOf<S>, amount?: number): void;
  /** Drops every series (for gauges recomputed from state at scrape time). */
  reset(): void;
}

export interface HistogramFamily<S extends MetricSpec> {
  observe(labels: LabelsOf<S>, value: number): void;
}

type FamilyOf<S extends MetricSpec> = S['type'] extends 'counter'
  ? CounterFamily<S>
  : S['type'] extends 'gauge'
    ? GaugeFamily<S>
    : HistogramFamily<S>;

export type Metrics = { readonly [K in MetricKey]: FamilyOf<Catalogue[K]> };

type Labels = Record<string, string>;

const isCountable = (value: number): boolean => Number.isFinite(value) && value >= 0;

/**
 * Keeps the set of label-value combinations a family has written. Label values reaching here
 * are sanitized (no control characters), so NUL cannot occur inside a value and joining on it
 * is injective.
 */
class SeriesSet {
  private readonly keys = new Set<string>();

  constructor(private readonly labelNames: readonly string[]) {}

  note(labels: Labels): void {
    if (this.labelNames.length === 0) {
      this.keys.add('');
      return;
    }
    let key = '';
    for (const name of this.labelNames) key += `${labels[name] ?? ''}\u0000`;
    this.keys.add(key);
  }

  clear(): void {
    this.keys.clear();
  }

  get size(): number {
    return this.keys.size;
  }
}

class Family {
  readonly series: SeriesSet;

  constructor(
    readonly spec: MetricSpec,
    protected readonly metric: client.Counter | client.Gauge | client.Histogram,
  ) {
    this.series = new SeriesSet(spec.labelNames);
  }
}

class CounterImpl extends Family implements CounterFamily<MetricSpec> {
  inc(labels: Labels, amount = 1): void {
    if (!isCountable(amount)) return;
    this.series.note(labels);
    (this.metric as client.Counter).inc(labels, amount);
  }
}

class GaugeImpl extends Family implements GaugeFamily<MetricSpec> {
  private get gauge(): client.Gauge {
    return this.metric as client.Gauge;
  }

  set(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    this.series.note(labels);
    this.gauge.set(labels, value);
  }

  inc(labels: Labels, amount = 1): void {
    if (!isCountable(amount)) return;
    this.series.note(labels);
    this.gauge.inc(labels, amount);
  }

  dec(labels: Labels, amount = 1): void {
    if (!isCountable(amount)) return;
    this.series.note(labels);
    this.gauge.dec(labels, amount);
  }

  reset(): void {
    this.series.clear();
    this.gauge.reset();
  }
}

class HistogramImpl extends Family implements HistogramFamily<MetricSpec> {
  observe(labels: Labels, value: number): void {
    if (!isCountable(value)) return;
    this.series.note(labels);
    (this.metric as client.Histogram).observe(labels, value);
  }
}

function buildFamily(spec: MetricSpec, registry: client.Registry, buckets: BucketSets): Family {
  const common = {
    name: spec.name,
    help: spec.help,
    labelNames: [...spec.labelNames],
    registers: [registry],
  };
  switch (spec.type) {
    case 'counter':
      return new CounterImpl(spec, new client.Counter(common));
    case 'gauge':
      return new GaugeImpl(spec, new client.Gauge(common));
    case 'histogram': {
      if (spec.buckets === undefined) throw new Error(`histogram ${spec.name} has no bucket set`);
      return new HistogramImpl(spec, new client.Histogram({ ...common, buckets: [...buckets[spec.buckets]] }));
    }
  }
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
  /** Exposition text of the whole registry; rejects when a metric cannot be rendered. */
  render(): Promise<string>;
}

export interface RegistryOptions {
  readonly buckets: BucketSets;
  /** Adds prom-client's process_* and nodejs_* metrics (off in unit tests that compare text). */
  readonly defaultMetrics: boolean;
}

export function createMetricsRegistry(options: RegistryOptions): MetricsRegistry {
  const registry = new client.Registry();
  const families = new Map<MetricKey, Family>();
  for (const [key, spec] of Object.entries(CATALOGUE) as [MetricKey, MetricSpec][]) {
    families.set(key, buildFamily(spec, registry, options.buckets));
  }
  if (options.defaultMetrics) {
    client.collectDefaultMetrics({ register: registry });
    // Gauges named *_total fail `promtool check metrics`; each is the sum of the per-type
    // gauge of the same name without the suffix, which stays.
    for (const name of LINT_FAILING_DEFAULT_METRICS) registry.removeSingleMetric(name);
  }

  const agentFamilies = [...families.values()].filter((family) => family.spec.scope === 'agent');
  return {
    metrics: Object.fromEntries(families) as unknown as Metrics,
    contentType: registry.contentType,
    agentSeries: () => agentFamilies.reduce((total, family) => total + family.series.size, 0),
    render: () => registry.metrics(),
  };
}
