/**
 * Span tables as recorders open them: bounded by the span limits, swept by the event path's one
 * timer, and counting each span lost (expired or evicted) as an orphaned span of its kind.
 */
import type { Clock } from '../../clock.js';
import { SpanTable, type OrphanCause, type Sweepable } from '../spans.js';
import type { Families } from '../../metrics/registry.js';
import { counter, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';
import type { StateTable } from '../stateTableNames.js';

/** The closed value sets of this module's labels. */
export const SPAN_VALUES = {
  /** Correlated start/end pairs, each with a span table. */
  span_kind: ['api', 'tool', 'turn', 'approval', 'subagent'],
} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const SPAN_FAMILIES = {
  orphanedSpans: fed(counter('hermes_sidecar_orphaned_spans_total', { kind: SPAN_VALUES.span_kind }, 'delivery',
    'Started spans ({kind}) whose terminal event never came within the span TTL, or that were evicted from a full map.'),
    'sidecar', 'span tables (TTL and size bound)'),
} as const satisfies Declarations;

export type SpanKind = (typeof SPAN_VALUES)['span_kind'][number];

export interface SpanLimits {
  readonly ttlSeconds: number;
  readonly maxEntries: number;
  /** Byte budget of each span table (spans.ts, ENTRY_OVERHEAD_BYTES). */
  readonly maxBytes: number;
}

/** What opening a span table takes (a recorder's context provides it). */
export interface SpanTableContext {
  readonly clock: Clock;
  readonly spans: SpanLimits;
  /** The span tables' counter of spans that never saw their terminal event. */
  readonly spanMetrics: Families<typeof SPAN_FAMILIES>;
  /** Each table is registered here so one timer sweeps them all. */
  readonly track: (table: Sweepable) => void;
  /** Counts an entry evicted from a full state table. */
  readonly evicted: (table: StateTable) => void;
}

/** The state table each kind of span is kept in, as counted when an entry is evicted. */
const TABLE_OF_KIND: Readonly<Record<SpanKind, StateTable>> = {
  api: 'api_attempts',
  tool: 'tool_calls',
  turn: 'turns',
  approval: 'approvals',
  subagent: 'subagents',
};

/** A span table whose lost entries count as orphaned spans of one kind. */
export function spanTable<V>(
  context: SpanTableContext,
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
