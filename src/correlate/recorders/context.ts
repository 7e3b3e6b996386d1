/** What every recorder is built from: the label guard, the clock, the span limits and the span tables' counter. */
import type { Clock } from '../../clock.js';
import { SpanTable, type OrphanCause } from '../spans.js';
import type { LabelGuard } from '../../metrics/labels.js';
import type { Families } from '../../metrics/registry.js';
import type { PriceTable } from './pricing.js';
import { counter, type Declarations } from '../../metrics/declare.js';
import { STATE_VALUES } from '../tables.js';
import type { ValueOf } from '../../contract/vocabulary.js';

/** The closed value sets of this module's labels. */
export const SPAN_VALUES = {
  /** Correlated start/end pairs, each with a span table. */
  span_kind: ['api', 'tool', 'turn', 'approval', 'subagent'],
} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const SPAN_FAMILIES = {
  orphanedSpans: counter('hermes_sidecar_orphaned_spans_total', { kind: SPAN_VALUES.span_kind }, 'delivery',
    'Started spans ({kind}) whose terminal event never came within the span TTL, or that were evicted from a full map.'),
} as const satisfies Declarations;

interface SpanLimits {
  readonly ttlSeconds: number;
  readonly maxEntries: number;
  /** Byte budget of each span table (spans.ts, ENTRY_OVERHEAD_BYTES). */
  readonly maxBytes: number;
}

/** A table with a TTL sweep that can run in slices (slices.ts). */
export interface Sweepable {
  /** A sweep as of now, in steps: each call does a small, bounded piece of it and returns false once it is done. */
  sweepSteps(): () => boolean;
}

/** A recorder with gauges computed from its state at scrape time. */
export interface Collectable {
  collect(): void;
}

export interface RecorderContext {
  readonly labels: LabelGuard;
  readonly clock: Clock;
  readonly spans: SpanLimits;
  readonly sessionTtlSeconds: number;
  /** Byte budget of the session table. */
  readonly sessionMaxBytes: number;
  /** The operator's prices, for calls Hermes did not price. */
  readonly prices: PriceTable;
  /** Each recorder registers its tables here so one timer sweeps them all. */
  readonly track: (table: Sweepable) => void;
  /** The span tables' counter of spans that never saw their terminal event. */
  readonly spanMetrics: Families<typeof SPAN_FAMILIES>;
  /** Counts an entry evicted from a full state table. */
  readonly evicted: (table: (typeof STATE_VALUES)['state_table'][number]) => void;
  /** Counts a value out of its bound (a duration between two sender timestamps, say). */
  readonly valueRejected: (field: ValueOf<'bounded_field'>) => void;
}

export type SpanKind = (typeof SPAN_VALUES)['span_kind'][number];

/** The state table each kind of span is kept in, as counted when an entry is evicted. */
const TABLE_OF_KIND: Readonly<Record<SpanKind, (typeof STATE_VALUES)['state_table'][number]>> = {
  api: 'api_attempts',
  tool: 'tool_calls',
  turn: 'turns',
  approval: 'approvals',
  subagent: 'subagents',
};

/** A span table whose lost entries count as orphaned spans of one kind. */
export function spanTable<V>(
  context: RecorderContext,
  kind: SpanKind,
  onOrphan: (value: V, cause: OrphanCause) => void = () => undefined,
  onRemove?: (value: V) => void,
): SpanTable<V> {
  const table = new SpanTable<V>({
    clock: context.clock,
    ttlSeconds: context.spans.ttlSeconds,
    maxEntries: context.spans.maxEntries,
    maxBytes: context.spans.maxBytes,
    onRemove,
    onOrphan: (value, cause) => {
      onOrphan(value, cause);
      context.spanMetrics.orphanedSpans.inc({ kind });
      if (cause === 'evicted') context.evicted(TABLE_OF_KIND[kind]);
    },
  });
  context.track(table);
  return table;
}

/**
 * A map key made of two opaque ids. The length prefix keeps it injective whatever the ids
 * contain.
 */
export function compositeKey(first: string, second: string): string {
  return `${first.length}:${first}${second}`;
}
