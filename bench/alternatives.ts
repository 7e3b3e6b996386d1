/**
 * The alternatives to the sidecar's own metric families, for the side-by-side benchmarks: the
 * whole metric catalogue behind the same `Metrics` interface, driven by the sidecar's own
 * dispatcher, recorders, label guard and span tables (`createEventPipeline`), on
 *
 *  - OpenTelemetry: @opentelemetry/sdk-metrics `MeterProvider` with the Prometheus exporter as
 *    its reader (server not started). Counter → Counter; histogram → Histogram with the
 *    catalogue's buckets as explicitBucketBoundaries advice; gauge → synchronous Gauge for `set`,
 *    UpDownCounter for `inc`/`dec` (the in-flight, pending and active gauges), made on first use.
 *    The API has no bound instruments, so a handle keeps the attributes object and adds to it.
 *  - prom-client used directly: one Counter/Gauge/Histogram per catalogue entry on a Registry,
 *    labels passed through, handles from prom-client's own `labels()`, rendered by
 *    `registry.metrics()`.
 *
 * Every family class declares the family interface it implements, and the catalogue-keyed
 * record is typed member by member (`CatalogueFamilies`), so a method the recorders call and a
 * baseline lacks is a compile error, not an exception per event. The equivalence check
 * (bench/equivalence.ts) then proves at run time that every pipeline produced the same samples.
 */
import type { Attributes, Counter, Gauge, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { AggregationType, MeterProvider, type ViewOptions } from '@opentelemetry/sdk-metrics';
import client from 'prom-client';
import type { Clock } from '../src/clock.js';
import type { Config } from '../src/config.js';
import { CATALOGUE, type Catalogue, type MetricKey } from '../src/catalogue.js';
import type { MetricSpec } from '../src/metrics/declare.js';
import { familiesFor, type CounterFamily, type CounterHandle, type GaugeFamily, type HistogramFamily, type HistogramHandle } from '../src/metrics/registry.js';
import type { Metrics } from '../src/catalogue.js';
import { createEventPipeline } from '../src/correlate/assemble.js';
import { LABEL_GUARD_FAMILIES, LabelGuard } from '../src/metrics/labels.js';
import type { Dispatcher } from '../src/correlate/dispatcher.js';

type Labels = Readonly<Record<string, string>>;

const isCountable = (value: number): boolean => Number.isFinite(value) && value >= 0;

// ---------------------------------------------------------------------------------- typed assembly

/** What a metrics library provides for each kind of catalogue entry. */
interface FamilyKinds {
  counter: CounterFamily<MetricSpec>;
  gauge: GaugeFamily<MetricSpec>;
  histogram: HistogramFamily<MetricSpec>;
}

/** One constructor per kind; each returns exactly the interface the recorders use for that kind. */
export type FamilyFactory = { readonly [T in keyof FamilyKinds]: (spec: MetricSpec) => FamilyKinds[T] };

/** Every catalogue entry, each as the family of its own kind. Assignable to `Metrics`. */
type CatalogueFamilies = { readonly [K in MetricKey]: FamilyKinds[Catalogue[K]['type']] };

/** The methods of each kind, checked at run time on every family the factory made. */
const METHODS = {
  counter: ['inc', 'handle'],
  gauge: ['set', 'inc', 'dec'],
  histogram: ['observe', 'handle'],
} as const satisfies { readonly [T in keyof FamilyKinds]: readonly (keyof FamilyKinds[T])[] };

/** Fails to compile when a family interface gains a method METHODS does not list. */
type Unlisted<T extends keyof FamilyKinds> = Exclude<keyof FamilyKinds[T], (typeof METHODS)[T][number]>;
const everyMethodListed: [Unlisted<'counter'>, Unlisted<'gauge'>, Unlisted<'histogram'>] extends [never, never, never] ? true : false = true;

const CATALOGUE_KEYS: readonly MetricKey[] = Object.keys(CATALOGUE).filter((key): key is MetricKey => Object.hasOwn(CATALOGUE, key));

function hasMethods(family: object | undefined, methods: readonly string[]): boolean {
  return family !== undefined && methods.every((method) => typeof Reflect.get(family, method) === 'function');
}

/** Every catalogue key holds a family with every method of its kind. */
function isCatalogueFamilies(families: Readonly<Record<string, object>>): families is CatalogueFamilies {
  return everyMethodListed && CATALOGUE_KEYS.every((key) => hasMethods(families[key], METHODS[CATALOGUE[key].type]));
}

/**
 * An opt-in family the configuration leaves out takes writes and keeps nothing, as the
 * sidecar's own storage does (the GenAI families without --metrics.semconv).
 */
const LEFT_OUT: FamilyFactory = {
  counter: () => ({ inc: () => undefined, handle: () => ({ inc: () => undefined }) }),
  gauge: () => ({ set: () => undefined, inc: () => undefined, dec: () => undefined }),
  histogram: () => ({ observe: () => undefined, handle: () => ({ observe: () => undefined }) }),
};

/** The whole catalogue on one metrics library, checked family by family (opt-in families as configured). */
export function catalogueMetrics(factory: FamilyFactory, options: { readonly semconv: boolean } = { semconv: false }): Metrics {
  const families: Record<string, object> = {};
  for (const key of CATALOGUE_KEYS) {
    const spec: MetricSpec = CATALOGUE[key];
    const made = spec.optIn === 'semconv' && !options.semconv ? LEFT_OUT : factory;
    families[key] = made[spec.type](spec);
  }
  if (!isCatalogueFamilies(families)) throw new Error('a catalogue entry lacks a family or one of its methods');
  const metrics: Metrics = families;
  return metrics;
}

// ---------------------------------------------------------------------------------- OpenTelemetry

class OtelCounter implements CounterFamily<MetricSpec> {
  constructor(private readonly counter: Counter) {}

  inc(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.counter.add(amount, labels);
  }

  handle(labels: Labels): CounterHandle {
    const attributes: Attributes = { ...labels };
    return {
      inc: (amount = 1) => {
        if (isCountable(amount)) this.counter.add(amount, attributes);
      },
    };
  }
}

class OtelHistogram implements HistogramFamily<MetricSpec> {
  constructor(private readonly histogram: Histogram) {}

  observe(labels: Labels, value: number): void {
    if (isCountable(value)) this.histogram.record(value, labels);
  }

  handle(labels: Labels): HistogramHandle {
    const attributes: Attributes = { ...labels };
    return {
      observe: (value) => {
        if (isCountable(value)) this.histogram.record(value, attributes);
      },
    };
  }
}

/** The instrument name of a gauge family's inc/dec half when its `set` half was made first. */
export const UP_DOWN_SUFFIX = '_updown';

class OtelGauge implements GaugeFamily<MetricSpec> {
  private gauge: Gauge | undefined;
  private upDown: UpDownCounter | undefined;

  constructor(
    private readonly meter: Meter,
    private readonly spec: MetricSpec,
  ) {}

  set(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    this.gauge ??= this.meter.createGauge(this.upDown === undefined ? this.spec.name : `${this.spec.name}_set`, { description: this.spec.help });
    this.gauge.record(value, labels);
  }

  inc(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.add(labels, amount);
  }

  dec(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.add(labels, -amount);
  }

  private add(labels: Labels, delta: number): void {
    this.upDown ??= this.meter.createUpDownCounter(this.gauge === undefined ? this.spec.name : `${this.spec.name}${UP_DOWN_SUFFIX}`, {
      description: this.spec.help,
    });
    this.upDown.add(delta, labels);
  }

}

export function otelFactory(meter: Meter, config: Config): FamilyFactory {
  return {
    counter: (spec) => new OtelCounter(meter.createCounter(spec.name, { description: spec.help })),
    gauge: (spec) => new OtelGauge(meter, spec),
    histogram: (spec) => {
      const buckets = spec.buckets === undefined ? undefined : [...config.buckets[spec.buckets]];
      return new OtelHistogram(
        meter.createHistogram(spec.name, {
          description: spec.help,
          ...(buckets === undefined ? {} : { advice: { explicitBucketBoundaries: buckets } }),
        }),
      );
    },
  };
}

// ---------------------------------------------------------------------------------- prom-client

class PromCounter implements CounterFamily<MetricSpec> {
  constructor(private readonly counter: client.Counter) {}

  inc(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.counter.inc(labels, amount);
  }

  handle(labels: Labels): CounterHandle {
    const child = this.counter.labels(labels);
    return {
      inc: (amount = 1) => {
        if (isCountable(amount)) child.inc(amount);
      },
    };
  }
}

class PromGauge implements GaugeFamily<MetricSpec> {
  constructor(private readonly gauge: client.Gauge) {}

  set(labels: Labels, value: number): void {
    if (Number.isFinite(value)) this.gauge.set(labels, value);
  }

  inc(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.gauge.inc(labels, amount);
  }

  dec(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.gauge.dec(labels, amount);
  }

}

class PromHistogram implements HistogramFamily<MetricSpec> {
  constructor(private readonly histogram: client.Histogram) {}

  observe(labels: Labels, value: number): void {
    if (isCountable(value)) this.histogram.observe(labels, value);
  }

  handle(labels: Labels): HistogramHandle {
    const child = this.histogram.labels(labels);
    return {
      observe: (value) => {
        if (isCountable(value)) child.observe(value);
      },
    };
  }
}

export function promClientFactory(registry: client.Registry, config: Config): FamilyFactory {
  const common = (spec: MetricSpec) => ({ name: spec.name, help: spec.help, labelNames: [...spec.labelNames], registers: [registry] });
  return {
    counter: (spec) => new PromCounter(new client.Counter(common(spec))),
    gauge: (spec) => new PromGauge(new client.Gauge(common(spec))),
    histogram: (spec) =>
      new PromHistogram(new client.Histogram({ ...common(spec), ...(spec.buckets === undefined ? {} : { buckets: [...config.buckets[spec.buckets]] }) })),
  };
}

// ---------------------------------------------------------------------------------- pipelines

export interface Pipeline {
  readonly dispatcher: Dispatcher;
  /** Events a recorder threw on (must stay 0: the bench fails otherwise). */
  readonly applyErrors: () => number;
  /** Sets the gauges computed from state (in flight, active, pending): before every scrape, as the sidecar does. */
  collect(): void;
}

export interface OtelPipeline extends Pipeline {
  readonly exporter: PrometheusExporter;
  shutdown(): Promise<void>;
}

export interface PromClientPipeline extends Pipeline {
  readonly registry: client.Registry;
}

const systemClock: Clock = () => Date.now() / 1000;

/**
 * The sidecar's event path (dispatcher, recorders, span tables) on any Metrics, with a label guard
 * of its own written to those Metrics: the sidecar's registry builds the same guard on its own
 * storage (MetricsRegistry.labels), so both run the same wiring.
 */
export function createPipeline(config: Config, metrics: Metrics, clock: Clock = systemClock): Pipeline {
  let errors = 0;
  const labels = new LabelGuard(config.labels, familiesFor(metrics, LABEL_GUARD_FAMILIES), config.ingest.maxLabelValueBytes);
  const pipeline = createEventPipeline(config, metrics, labels, clock, () => {
    errors += 1;
  });
  return { dispatcher: pipeline.dispatcher, applyErrors: () => errors, collect: () => pipeline.collect() };
}

/**
 * The SDK's default cardinality limit (2,000 attribute sets per instrument) would fold series
 * the sidecar keeps (its own cap is global, `maxAgentSeries`); lifted so both keep the same.
 */
const UNCAPPED: ViewOptions = { instrumentName: '*', aggregationCardinalityLimit: 1_000_000, aggregation: { type: AggregationType.DEFAULT } };

export function createOtelPipeline(config: Config, clock: Clock = systemClock): OtelPipeline {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter], views: [UNCAPPED] });
  const meter = provider.getMeter('hermes-prometheus-sidecar-bench');
  return { ...createPipeline(config, catalogueMetrics(otelFactory(meter, config), config), clock), exporter, shutdown: () => provider.shutdown() };
}

/** With `defaultMetrics`, prom-client's process and Node.js metrics too (as the sidecar serves them). */
export function createPromClientPipeline(config: Config, defaultMetrics = false, clock: Clock = systemClock): PromClientPipeline {
  const registry = new client.Registry();
  if (defaultMetrics) client.collectDefaultMetrics({ register: registry });
  return { ...createPipeline(config, catalogueMetrics(promClientFactory(registry, config), config), clock), registry };
}
