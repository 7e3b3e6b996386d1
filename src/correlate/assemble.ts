/**
 * The event path assembled on any metrics library: recorders with their span tables, plugin
 * instances and the dispatcher, each given the families it declares, and the label guard it is
 * handed. The sidecar builds it on its own families and the guard its registry owns; the
 * benchmarks build the very same path on other metrics libraries (with a guard of their own) to
 * compare them.
 */
import { LABEL_GUARD_FAMILIES, type LabelGuard } from '../metrics/labels.js';
import { createRecorders, RECORDER_FAMILIES, type Sweepable } from './recorders/index.js';
import type { Families } from '../metrics/registry.js';
import { DISPATCHER_FAMILIES, Dispatcher } from './dispatcher.js';
import { SPAN_FAMILIES } from './recorders/spanTables.js';
import { PluginInstances } from './instances.js';
import type { Clock } from '../clock.js';
import { HeldClock } from './heldClock.js';
import { DeliveryRecorder } from './recorders/delivery.js';
import { PriceTable, type PriceEntry } from './recorders/pricing.js';
import { stepsInTurn } from '../slices.js';
import { VALUES, type ValueOf } from '../contract/vocabulary.js';
import { counter, mergeDeclarations, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';
import { STATE_VALUES } from './stateTableNames.js';

/** The families this module writes (and all it is handed). */
export const STATE_FAMILIES = {
  valuesRejected: fed(counter('hermes_sidecar_values_rejected_total', { field: VALUES.bounded_field }, 'self',
    'Event values outside their bounds, treated as absent, by field: numbers past their plausible bound, ids and names longer than their byte limit (--ingest.max-id-bytes, --ingest.max-label-value-bytes); the event still counts (see Value bounds below).'),
    'sidecar', 'numeric fields of any event, durations between two `observed_at`, and ids and names of any event or webhook delivery'),
  stateEvictions: fed(counter('hermes_sidecar_state_evictions_total', { table: STATE_VALUES.state_table }, 'self',
    'Entries evicted from a full state table (too many entries, or too many bytes) before they expired, by table ({table}).'),
    'sidecar', 'state tables'),
} as const satisfies Declarations;

/**
 * Every family the event path writes: what createEventPipeline is handed. The label guard's
 * counters are among them for a guard built on another library's families (the benchmarks); the
 * sidecar's guard is its registry's (src/metrics/registry.ts).
 */
export const PIPELINE_FAMILIES = mergeDeclarations(
  RECORDER_FAMILIES,
  SPAN_FAMILIES,
  STATE_FAMILIES,
  DISPATCHER_FAMILIES,
  LABEL_GUARD_FAMILIES,
);

export type PipelineMetrics = Families<typeof PIPELINE_FAMILIES>;

export interface EventPipeline {
  readonly dispatcher: Dispatcher;
  readonly instances: PluginInstances;
  /** Counts webhook deliveries already applied, with the plugin's duplicate lines. */
  readonly delivery: DeliveryRecorder;
  /**
   * The steps of one TTL sweep of every state table, each table as of the moment its turn comes
   * (the composition root runs them in slices, src/app.ts).
   */
  sweepSteps(): () => boolean;
  /** Sets the gauges computed from state (plugin instances): run before each scrape. */
  collect(): void;
}

/** The settings the event path is built from (a Config satisfies it). */
export interface EventPipelineSettings {
  readonly correlator: {
    readonly spanTtlSeconds: number;
    readonly sessionTtlSeconds: number;
    readonly maxSpans: number;
    /** Byte budget of all correlation tables together (tableBudgets splits it). */
    readonly maxTableBytes?: number;
  };
  readonly sequence: {
    readonly instanceTtlSeconds: number;
    readonly maxInstances: number;
    readonly window?: number;
    readonly reorderSeconds?: number;
    readonly maxBytes?: number;
  };
  /** The config file's price table (USD per million tokens per provider/model). */
  readonly prices?: readonly PriceEntry[];
}

/**
 * Default of --correlator.max-table-bytes. Tables full of hostile ids then hold at most 16 MiB
 * (9 MiB of live heap measured with one-byte ids, which are charged twice their size;
 * bench/tables.ts, "full"), so the binary at the series cap stays near its measured RSS; real
 * traffic fits easily: about 18,000 idle sessions of 20-character ids, and 7,000 open spans of each
 * kind.
 */
export const DEFAULT_MAX_TABLE_BYTES = 16 * 1024 * 1024;

/**
 * The byte budget of each table: sessions, the one table whose entries live for a day, get a
 * third; the five span tables (API attempts, tool calls, turns, approvals, subagents) share the
 * rest evenly.
 */
export function tableBudgets(totalBytes: number): { readonly sessions: number; readonly eachSpanTable: number } {
  return { sessions: Math.floor(totalBytes / 3), eachSpanTable: Math.floor((totalBytes * 2) / 15) };
}

/** `labels`: the label guard of the storage the metrics live in (MetricsRegistry.labels for the sidecar's own). */
export function createEventPipeline(
  config: EventPipelineSettings,
  metrics: PipelineMetrics,
  labels: LabelGuard,
  clock: Clock,
  onApplyError: (error: unknown) => void,
): EventPipeline {
  const sweepables: Sweepable[] = [];
  const budgets = tableBudgets(config.correlator.maxTableBytes ?? DEFAULT_MAX_TABLE_BYTES);
  const held = new HeldClock(clock);
  // Every state table (plugin instances, sessions, the span tables) evicts its oldest entries when
  // full, in entries or in bytes; counted here, once.
  const { stateEvictions, valuesRejected } = metrics;
  const evicted = (table: (typeof STATE_VALUES)['state_table'][number]): void => stateEvictions.inc({ table });
  // Values out of their bounds: found while reading an event (its rejectedValues) or while
  // computing a duration from two of its timestamps; counted here, once.
  const valueRejected = (field: ValueOf<'bounded_field'>): void => valuesRejected.inc({ field });
  const delivery = new DeliveryRecorder(metrics);
  const instances = new PluginInstances({
    clock: held.now,
    ttlSeconds: config.sequence.instanceTtlSeconds,
    maxInstances: config.sequence.maxInstances,
    windowSize: config.sequence.window,
    reorderSeconds: config.sequence.reorderSeconds,
    maxBytes: config.sequence.maxBytes,
    onEvict: evicted,
    onLost: (events) => delivery.lost(events),
    onReset: (reason) => delivery.sequenceReset(reason),
    onStale: (reason) => delivery.staleHeartbeat(reason),
  });
  const recorders = createRecorders(
    {
      labels,
      clock: held.now,
      spans: { ttlSeconds: config.correlator.spanTtlSeconds, maxEntries: config.correlator.maxSpans, maxBytes: budgets.eachSpanTable },
      sessionTtlSeconds: config.correlator.sessionTtlSeconds,
      sessionMaxBytes: budgets.sessions,
      prices: new PriceTable(config.prices),
      track: (table) => sweepables.push(table),
      spanMetrics: metrics,
      evicted,
      valueRejected,
    },
    metrics,
    delivery,
  );
  // The instance table sweeps in one step of its own.
  sweepables.push({
    sweepSteps: () => () => {
      instances.sweep();
      return false;
    },
  });
  return {
    dispatcher: new Dispatcher(recorders, instances, metrics, held, onApplyError, valueRejected),
    instances,
    delivery,
    sweepSteps: () => stepsInTurn(sweepables.map((table) => () => table.sweepSteps())),
    collect: () => {
      instances.settleExpired();
      // One liveness pass feeds both hermes_plugin_instances and hermes_plugin_info.
      const liveness = instances.liveness();
      delivery.instancesSeen(liveness);
      recorders.plugins.hostsSeen(liveness.hosts);
    },
  };
}
