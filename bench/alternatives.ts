/**
 * The alternatives to the sidecar's own metric families, for the side-by-side benchmarks: the
 * whole metric catalogue behind the same `Metrics` interface, driven by the sidecar's own
 * dispatcher, recorders, label guard and span tables (`createPipeline`), on
 *
 *  - OpenTelemetry: @opentelemetry/sdk-metrics `MeterProvider` with the Prometheus exporter as
 *    its reader (server not started). Counter → Counter; histogram → Histogram with the
 *    catalogue's buckets as explicitBucketBoundaries advice; gauge → synchronous Gauge for `set`,
 *    UpDownCounter for `inc`/`dec` (the in-flight, pending and active gauges), made on first use.
 *  - prom-client used directly: one Counter/Gauge/Histogram per catalogue entry on a Registry,
 *    labels passed through, rendered by `registry.metrics()`.
 *
 * So every pipeline does the same product work per event (normalize, sequence check, correlate,
 * sanitize and cap labels, build the same label objects); only the metrics library differs.
 */
import type { Counter, Gauge, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import client from 'prom-client';
import type { Config } from '../src/config.js';
import { CATALOGUE, type MetricSpec } from '../src/metrics/catalogue.js';
import type { Metrics } from '../src/metrics/registry.js';
import { createEventPipeline } from '../src/correlate/assemble.js';
import type { Dispatcher } from '../src/correlate/dispatcher.js';

type Labels = Record<string, string>;

const isCountable = (value: number): boolean => Number.isFinite(value) && value >= 0;

class OtelCounter {
  constructor(private readonly counter: Counter) {}
  inc(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.counter.add(amount, labels);
  }
}

class OtelHistogram {
  constructor(private readonly histogram: Histogram) {}
  observe(labels: Labels, value: number): void {
    if (isCountable(value)) this.histogram.record(value, labels);
  }
}

class OtelGauge {
  private gauge: Gauge | undefined;
  private upDown: UpDownCounter | undefined;

  constructor(
    private readonly meter: Meter,
    private readonly spec: MetricSpec,
  ) {}

  set(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    this.gauge ??= this.meter.createGauge(this.spec.name, { description: this.spec.help });
    this.gauge.record(value, labels);
  }

  inc(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.add(labels, amount);
  }

  dec(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.add(labels, -amount);
  }

  private add(labels: Labels, delta: number): void {
    this.upDown ??= this.meter.createUpDownCounter(this.gauge === undefined ? this.spec.name : `${this.spec.name}_updown`, {
      description: this.spec.help,
    });
    this.upDown.add(delta, labels);
  }

  reset(): void {
    // Scrape-time gauges only; not on the event path.
  }
}

export interface Pipeline {
  readonly dispatcher: Dispatcher;
  /** Events a recorder threw on (must stay 0: the Metrics must cover what recorders call). */
  readonly applyErrors: () => number;
}

export interface OtelPipeline extends Pipeline {
  readonly exporter: PrometheusExporter;
  shutdown(): Promise<void>;
}

export interface PromClientPipeline extends Pipeline {
  readonly registry: client.Registry;
}

export function createOtelMetrics(meter: Meter, config: Config): Metrics {
  const families = Object.entries(CATALOGUE).map(([key, raw]): [string, unknown] => {
    const spec = raw as MetricSpec;
    switch (spec.type) {
      case 'counter':
        return [key, new OtelCounter(meter.createCounter(spec.name, { description: spec.help }))];
      case 'histogram': {
        const buckets = spec.buckets === undefined ? undefined : [...config.buckets[spec.buckets]];
        return [
          key,
          new OtelHistogram(
            meter.createHistogram(spec.name, {
              description: spec.help,
              ...(buckets === undefined ? {} : { advice: { explicitBucketBoundaries: buckets } }),
            }),
          ),
        ];
      }
      case 'gauge':
        return [key, new OtelGauge(meter, spec)];
    }
  });
  return Object.fromEntries(families) as unknown as Metrics;
}

/** The sidecar's event path (dispatcher, recorders, label guard, span tables) on any Metrics. */
export function createPipeline(config: Config, metrics: Metrics): Pipeline {
  let errors = 0;
  const { dispatcher } = createEventPipeline(config, metrics, () => Date.now() / 1000, () => {
    errors += 1;
  });
  return { dispatcher, applyErrors: () => errors };
}

export function createOtelPipeline(config: Config): OtelPipeline {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const meter = provider.getMeter('hermes-prometheus-sidecar-bench');
  return { ...createPipeline(config, createOtelMetrics(meter, config)), exporter, shutdown: () => provider.shutdown() };
}

// ---------------------------------------------------------------------------------- prom-client

class PromCounter {
  constructor(private readonly counter: client.Counter) {}
  inc(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.counter.inc(labels, amount);
  }
}

class PromGauge {
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
  reset(): void {
    this.gauge.reset();
  }
}

class PromHistogram {
  constructor(private readonly histogram: client.Histogram) {}
  observe(labels: Labels, value: number): void {
    if (isCountable(value)) this.histogram.observe(labels, value);
  }
}

export function createPromClientMetrics(registry: client.Registry, config: Config): Metrics {
  const families = Object.entries(CATALOGUE).map(([key, raw]): [string, unknown] => {
    const spec = raw as MetricSpec;
    const common = { name: spec.name, help: spec.help, labelNames: [...spec.labelNames], registers: [registry] };
    switch (spec.type) {
      case 'counter':
        return [key, new PromCounter(new client.Counter(common))];
      case 'gauge':
        return [key, new PromGauge(new client.Gauge(common))];
      case 'histogram':
        return [
          key,
          new PromHistogram(new client.Histogram({ ...common, ...(spec.buckets === undefined ? {} : { buckets: [...config.buckets[spec.buckets]] }) })),
        ];
    }
  });
  return Object.fromEntries(families) as unknown as Metrics;
}

/** With `defaultMetrics`, prom-client's process and Node.js metrics too (as the sidecar serves them). */
export function createPromClientPipeline(config: Config, defaultMetrics = false): PromClientPipeline {
  const registry = new client.Registry();
  if (defaultMetrics) client.collectDefaultMetrics({ register: registry });
  return { ...createPipeline(config, createPromClientMetrics(registry, config)), registry };
}

/** Sum over every data point of one OTel sum metric (for the equivalence check). */
export async function otelSum(exporter: PrometheusExporter, name: string): Promise<number> {
  const { resourceMetrics } = await exporter.collect();
  let total = 0;
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== name) continue;
      for (const point of metric.dataPoints) {
        const value = point.value;
        if (typeof value === 'number') total += value;
        else if (typeof value === 'object' && value !== null && 'count' in value) total += value.count;
      }
    }
  }
  return total;
}
