/**
 * The event path assembled on any Metrics: label guard, recorders with their span tables, plugin
 * instances and the dispatcher, each given the metrics it owns. The sidecar builds it on its own
 * families; the benchmarks build the very same path on other metrics libraries to compare them.
 */
import type { ValueOf } from '../metrics/catalogue.js';
import { LabelGuard, type LabelRules } from '../metrics/labels.js';
import { collectables, createRecorders, type Sweepable } from './recorders/index.js';
import { metricsOwnedBy, type Metrics } from '../metrics/registry.js';
import { Dispatcher } from './dispatcher.js';
import { PluginInstances } from './instances.js';
import type { Clock } from '../clock.js';
import { HeldClock } from './heldClock.js';
import type { DeliveryRecorder } from './recorders/delivery.js';
import { PriceTable, type PriceEntry } from './recorders/pricing.js';

export interface EventPipeline {
  readonly dispatcher: Dispatcher;
  readonly instances: PluginInstances;
  /** Counts webhook deliveries already applied, with the plugin's duplicate lines. */
  readonly delivery: DeliveryRecorder;
  /** Runs every TTL sweep now. */
  sweep(): void;
  /** Sets the gauges computed from state (spans in flight, sessions, plugin instances): run before each scrape. */
  collect(): void;
}

/** The settings the event path is built from (a Config satisfies it). */
export interface EventPipelineSettings {
  readonly labels: LabelRules;
  readonly correlator: { readonly spanTtlSeconds: number; readonly sessionTtlSeconds: number; readonly maxSpans: number };
  readonly sequence: {
    readonly instanceTtlSeconds: number;
    readonly maxInstances: number;
    readonly window?: number;
    readonly reorderSeconds?: number;
  };
  /** The config file's price table (USD per million tokens per provider/model). */
  readonly prices?: readonly PriceEntry[];
}

export function createEventPipeline(
  config: EventPipelineSettings,
  metrics: Metrics,
  clock: Clock,
  onApplyError: (error: unknown) => void,
): EventPipeline {
  const sweepables: Sweepable[] = [];
  const held = new HeldClock(clock);
  // The state tables (sessions, plugin instances) evict their oldest entry when full; counted here, once.
  const { stateEvictions, valuesRejected } = metricsOwnedBy(metrics, 'correlate/assemble');
  const evicted = (table: ValueOf<'state_table'>): void => stateEvictions.inc({ table });
  // Values out of their bounds: found while reading an event (its rejectedValues) or while
  // computing a duration from two of its timestamps; counted here, once.
  const valueRejected = (field: ValueOf<'bounded_field'>): void => valuesRejected.inc({ field });
  const instances = new PluginInstances({
    clock: held.now,
    ttlSeconds: config.sequence.instanceTtlSeconds,
    maxInstances: config.sequence.maxInstances,
    windowSize: config.sequence.window,
    reorderSeconds: config.sequence.reorderSeconds,
    onEvict: () => evicted('plugin_instances'),
    onLost: (events) => recorders.delivery.lost(events),
    onReset: () => recorders.delivery.sequenceReset(),
    onFolded: (key) => recorders.delivery.folded(key),
  });
  const recorders = createRecorders(
    {
      labels: new LabelGuard(config.labels, metricsOwnedBy(metrics, 'metrics/labels')),
      clock: held.now,
      spans: { ttlSeconds: config.correlator.spanTtlSeconds, maxEntries: config.correlator.maxSpans },
      sessionTtlSeconds: config.correlator.sessionTtlSeconds,
      prices: new PriceTable(config.prices),
      track: (table) => sweepables.push(table),
      spanMetrics: metricsOwnedBy(metrics, 'correlate/recorders/context'),
      evicted,
      valueRejected,
    },
    metrics,
    () => instances.liveness(),
    { maxInstances: config.sequence.maxInstances },
  );
  sweepables.push(instances);
  const gauges = collectables(recorders);
  return {
    dispatcher: new Dispatcher(recorders, instances, metricsOwnedBy(metrics, 'correlate/dispatcher'), held, onApplyError, valueRejected),
    instances,
    delivery: recorders.delivery,
    sweep: () => {
      for (const table of sweepables) table.sweep();
    },
    collect: () => {
      instances.settleExpired();
      for (const recorder of gauges) recorder.collect();
    },
  };
}
