/**
 * The event path assembled on any Metrics: label guard, recorders with their span tables, plugin
 * instances and the dispatcher. The sidecar builds it on its own families; the benchmarks build
 * the very same path on other metrics libraries to compare them.
 */
import { LabelGuard, type LabelRules } from '../metrics/labels.js';
import { createRecorders, type Sweepable } from './recorders/index.js';
import type { Metrics } from '../metrics/registry.js';
import { Dispatcher } from './dispatcher.js';
import { PluginInstances } from './instances.js';
import type { Clock } from '../clock.js';

export interface EventPipeline {
  readonly dispatcher: Dispatcher;
  readonly instances: PluginInstances;
  /** Runs every TTL sweep now. */
  sweep(): void;
}

/** The settings the event path is built from (a Config satisfies it). */
export interface EventPipelineSettings {
  readonly labels: LabelRules;
  readonly correlator: { readonly spanTtlSeconds: number; readonly sessionTtlSeconds: number; readonly maxSpans: number };
  readonly sequence: { readonly instanceTtlSeconds: number; readonly maxInstances: number };
}

export function createEventPipeline(
  config: EventPipelineSettings,
  metrics: Metrics,
  clock: Clock,
  onApplyError: (error: unknown) => void,
): EventPipeline {
  const sweepables: Sweepable[] = [];
  const labels = new LabelGuard(config.labels, (label) => metrics.labelOverflow.inc({ label }));
  const recorders = createRecorders({
    metrics,
    labels,
    clock,
    spans: { ttlSeconds: config.correlator.spanTtlSeconds, maxEntries: config.correlator.maxSpans },
    sessionTtlSeconds: config.correlator.sessionTtlSeconds,
    track: (table) => sweepables.push(table),
  });
  const instances = new PluginInstances({
    clock,
    ttlSeconds: config.sequence.instanceTtlSeconds,
    maxInstances: config.sequence.maxInstances,
    onEvict: () => metrics.stateEvictions.inc({ table: 'plugin_instances' }),
  });
  sweepables.push(instances);
  return {
    dispatcher: new Dispatcher(recorders, instances, metrics, clock, onApplyError),
    instances,
    sweep: () => {
      for (const table of sweepables) table.sweep();
    },
  };
}
