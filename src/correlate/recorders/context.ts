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
 * Counts open entries per label set for a gauge read at scrape time, and reports each label set's
 * change since the last scrape. A table calls `opened` and `closed` as its entries come and go
 * (closed through the table's one removal path, spans.ts), so a scrape reads counts instead of
 * scanning every open entry. Writing changes rather than values keeps label sets that the series
 * budget folds into one overflow series summed there (a `set` per label set would overwrite), and
 * a label set reported for the first time is written even at 0, so a series exists from its first
 * span on, scraped in between or not. Label values are guarded, so the label sets remembered are
 * bounded by the label caps.
 */
export class GaugeTally<L extends { readonly [label: string]: string }> {
  private readonly counts = new Map<string, { readonly labels: L; open: number; reported: number; isNew: boolean }>();

  /**
   * `keyOf` tells label sets apart. A tally of one label passes that label's value: every span
   * opened runs through it, and joining the values was the larger part of opening a span.
   */
  constructor(private readonly keyOf: (labels: L) => string = joinedKey) {}

  /** Counts a span being opened. */
  opened(labels: L): void {
    const key = this.keyOf(labels);
    const count = this.counts.get(key);
    if (count === undefined) this.counts.set(key, { labels, open: 1, reported: 0, isNew: true });
    else count.open += 1;
  }

  /** Counts a span that left its table (each span once, after its `opened`). */
  closed(labels: L): void {
    const count = this.counts.get(this.keyOf(labels));
    if (count !== undefined) count.open -= 1;
  }

  /** [labels, change] for every label set whose count changed, or that was never reported. */
  private changes(): [L, number][] {
    const changes: [L, number][] = [];
    for (const count of this.counts.values()) {
      if (count.isNew || count.open !== count.reported) changes.push([count.labels, count.open - count.reported]);
      count.reported = count.open;
      count.isNew = false;
    }
    return changes;
  }

  /**
   * Moves `gauge` by every change since the last report: the one scrape-time update of a gauge of
   * open spans. A label set never reported is written even when its change is 0, so its series
   * exists from its first span.
   */
  report(gauge: TallyGauge<L>): void {
    for (const [labels, change] of this.changes()) {
      if (change < 0) gauge.dec(labels, -change);
      else gauge.inc(labels, change);
    }
  }
}

/** The gauge a tally reports to (a gauge family of the recorder's declaration). */
export interface TallyGauge<L> {
  inc(labels: L, amount?: number): void;
  dec(labels: L, amount?: number): void;
}

// Guarded values hold no control characters, so NUL separates them unambiguously.
function joinedKey(labels: { readonly [label: string]: string }): string {
  let key = '';
  for (const label in labels) key += `${labels[label]}\u0000`;
  return key;
}

/**
 * A map key made of two opaque ids. The length prefix keeps it injective whatever the ids
 * contain.
 */
export function compositeKey(first: string, second: string): string {
  return `${first.length}:${first}${second}`;
}
