/**
 * The process and Node.js runtime metrics (process_*, nodejs_*): prom-client's default metrics,
 * read as data and handed to the exposition stage as family views, so the sidecar's serializer
 * renders them like its own and they come out the same in every format. It is the only module
 * that imports prom-client (pinned to 15.1.3), so a move to its successor (@prometheus-io/client)
 * stays a one-file change.
 *
 * Each default metric is loaded from its own file, never through prom-client's index or
 * `collectDefaultMetrics`: the index loads the Pushgateway client (node:https and TLS), and the
 * CPU counters' file loads @opentelemetry/api (44 modules, 0.4 MiB of the binary's idle RSS) for
 * exemplars the sidecar never puts on them. The three CPU counters are declared here instead,
 * with prom-client's names, help and values.
 */
import { createRequire } from 'node:module';
import type client from 'prom-client';
import type { FamilyView, HistogramSeries, ScalarSeries } from './families.js';

/** prom-client's default metric files, in `collectDefaultMetrics`' order, except processCpuTotal. */
const DEFAULT_METRIC_FILES = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  'processResources',
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
] as const;

/** Gauges named *_total fail `promtool check metrics`; each is the sum of the per-type gauge of the same name without the suffix, which stays. */
const LINT_FAILING_DEFAULT_METRICS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;

/** `collectDefaultMetrics`' own default. */
const EVENT_LOOP_MONITORING_PRECISION_MS = 10;

type DefaultMetric = (registry: client.Registry, config: { readonly eventLoopMonitoringPrecision: number }) => void;

/** A source of runtime family views, read at every scrape. */
export interface RuntimeMetrics {
  collect(): Promise<FamilyView[]>;
}

/** prom-client's process_cpu_* counters (lib/metrics/processCpuTotal.js) without their exemplar code. */
function registerCpuCounters(Counter: typeof client.Counter, registry: client.Registry): void {
  let last = process.cpuUsage();
  const system = new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', registers: [] });
  const total = new Counter({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers: [] });
  const user = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers: [],
    // One collect moves all three, as prom-client's does: they come from one reading.
    collect() {
      const now = process.cpuUsage();
      const userMicros = now.user - last.user;
      const systemMicros = now.system - last.system;
      last = now;
      this.inc(userMicros / 1e6);
      system.inc(systemMicros / 1e6);
      total.inc((userMicros + systemMicros) / 1e6);
    },
  });
  for (const counter of [user, system, total]) registry.registerMetric(counter);
}

/** The runtime metrics of this process on a registry of their own. */
export function runtimeMetrics(): RuntimeMetrics {
  const load = createRequire(import.meta.url);
  const Registry = load('prom-client/lib/registry') as typeof client.Registry;
  const Counter = load('prom-client/lib/counter') as typeof client.Counter;
  const registry = new Registry();
  registerCpuCounters(Counter, registry);
  const config = { eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS };
  for (const file of DEFAULT_METRIC_FILES) {
    // As collectDefaultMetrics: the active resources gauge only where Node.js can count them.
    if (file === 'processResources' && typeof process.getActiveResourcesInfo !== 'function') continue;
    (load(`prom-client/lib/metrics/${file}`) as DefaultMetric)(registry, config);
  }
  for (const name of LINT_FAILING_DEFAULT_METRICS) registry.removeSingleMetric(name);
  return {
    collect: async () => (await registry.getMetricsAsJSON()).flatMap((metric) => runtimeFamily(metric) ?? []),
  };
}

type RuntimeMetric = Awaited<ReturnType<client.Registry['getMetricsAsJSON']>>[number];
type RuntimeValue = RuntimeMetric['values'][number] & { readonly metricName?: string };

const labelText = (value: unknown): string => (typeof value === 'string' ? value : String(value));

/** One prom-client metric as a family view. */
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
