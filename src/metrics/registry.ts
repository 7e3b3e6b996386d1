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
import { OPEN_LABELS, OTHER } from './labels.js';
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
 * The global series cap shared by every agent family. Once it is spent, a new label set is
 * folded into its family's overflow series: every open-set label becomes `other`, closed ones
 * stay, so the overflow series are few and bounded by the closed enumerations.
 */
export class SeriesBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  take(): boolean {
    if (this.used >= this.limit) return false;
    this.used += 1;
    return true;
  }
}

/**
 * The label-value combinations a family has written. Label values reaching here are sanitized
 * (no control characters), so NUL cannot occur inside a value and joining on it is injective.
 */
class SeriesSet {
  private readonly keys = new Set<string>();
  /** Open-set labels, emptied into `other` when the budget is spent. */
  private readonly foldable: readonly string[];

  constructor(
    private readonly labelNames: readonly string[],
    private readonly budget: SeriesBudget | undefined,
    private readonly onFold: () => void,
    openLabels: ReadonlySet<string>,
  ) {
    this.foldable = labelNames.filter((name) => openLabels.has(name));
  }

  private keyOf(labels: Labels): string {
    let key = '';
    for (const name of this.labelNames) key += `${labels[name] ?? ''}\u0000`;
    return key;
  }

  /** The labels to write: these, or their overflow series when the budget is spent. */
  admit(labels: Labels): Labels {
    const key = this.keyOf(labels);
    if (this.keys.has(key)) return labels;
    if (this.budget === undefined || this.budget.take()) {
      this.keys.add(key);
      return labels;
    }
    this.onFold();
    const folded: Labels = { ...labels };
    for (const name of this.foldable) folded[name] = OTHER;
    // Overflow series are admitted past the budget: there are few, and refusing them would lose counts.
    this.keys.add(this.keyOf(folded));
    return folded;
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
    budget: SeriesBudget | undefined,
    onFold: () => void,
  ) {
    this.series = new SeriesSet(spec.labelNames, budget, onFold, OPEN_LABEL_NAMES);
  }
}

class CounterImpl extends Family implements CounterFamily<MetricSpec> {
  inc(labels: Labels, amount = 1): void {
    if (!isCountable(amount)) return;
    (this.metric as client.Counter).inc(this.series.admit(labels), amount);
  }
}

class GaugeImpl extends Family implements GaugeFamily<MetricSpec> {
  private get gauge(): client.Gauge {
    return this.metric as client.Gauge;
  }

  set(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    this.gauge.set(this.series.admit(labels), value);
  }

  inc(labels: Labels, amount = 1): void {
    if (!isCountable(amount)) return;
    this.gauge.inc(this.series.admit(labels), amount);
  }

  dec(labels: Labels, amount = 1): void {
    if (!isCountable(amount)) return;
    this.gauge.dec(this.series.admit(labels), amount);
  }

  reset(): void {
    this.series.clear();
    this.gauge.reset();
  }
}

class HistogramImpl extends Family implements HistogramFamily<MetricSpec> {
  observe(labels: Labels, value: number): void {
    if (!isCountable(value)) return;
    (this.metric as client.Histogram).observe(this.series.admit(labels), value);
  }
}

function buildFamily(
  spec: MetricSpec,
  registry: client.Registry,
  buckets: BucketSets,
  budget: SeriesBudget | undefined,
  onFold: () => void,
): Family {
  const common = {
    name: spec.name,
    help: spec.help,
    labelNames: [...spec.labelNames],
    registers: [registry],
  };
  switch (spec.type) {
    case 'counter':
      return new CounterImpl(spec, new client.Counter(common), budget, onFold);
    case 'gauge':
      return new GaugeImpl(spec, new client.Gauge(common), budget, onFold);
    case 'histogram': {
      if (spec.buckets === undefined) throw new Error(`histogram ${spec.name} has no bucket set`);
      return new HistogramImpl(spec, new client.Histogram({ ...common, buckets: [...buckets[spec.buckets]] }), budget, onFold);
    }
  }
}

const OPEN_LABEL_NAMES: ReadonlySet<string> = new Set(OPEN_LABELS);

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
  /** Global cap on live label sets across agent metrics. */
  readonly maxAgentSeries: number;
  /** Adds prom-client's process_* and nodejs_* metrics (off in unit tests that compare text). */
  readonly defaultMetrics: boolean;
}

export function createMetricsRegistry(options: RegistryOptions): MetricsRegistry {
  const registry = new client.Registry();
  const families = new Map<MetricKey, Family>();
  const budget = new SeriesBudget(options.maxAgentSeries);
  const foldCounter = () => families.get('seriesOverflow') as CounterImpl | undefined;
  for (const [key, spec] of Object.entries(CATALOGUE) as [MetricKey, MetricSpec][]) {
    const agent = spec.scope === 'agent';
    const onFold = () => foldCounter()?.inc({ metric: spec.name });
    families.set(key, buildFamily(spec, registry, options.buckets, agent ? budget : undefined, onFold));
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
