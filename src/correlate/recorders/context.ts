/** What every recorder is built from: the metrics, the label guard, the clock and the span limits. */
import type { Clock } from '../../clock.js';
import { SpanTable, type OrphanCause } from '../spans.js';
import type { LabelGuard } from '../../metrics/labels.js';
import type { Metrics } from '../../metrics/registry.js';

export interface SpanLimits {
  readonly ttlSeconds: number;
  readonly maxEntries: number;
}

export interface Sweepable {
  sweep(): void;
}

export interface RecorderContext {
  readonly metrics: Metrics;
  readonly labels: LabelGuard;
  readonly clock: Clock;
  readonly spans: SpanLimits;
  readonly sessionTtlSeconds: number;
  /** Each recorder registers its tables here so one timer sweeps them all. */
  readonly track: (table: Sweepable) => void;
}

export const SPAN_KINDS = ['api', 'tool', 'turn', 'approval', 'subagent'] as const;
export type SpanKind = (typeof SPAN_KINDS)[number];

/** A span table whose lost entries count as orphaned spans of one kind. */
export function spanTable<V>(
  context: RecorderContext,
  kind: SpanKind,
  undo: (value: V, cause: OrphanCause) => void,
): SpanTable<V> {
  const table = new SpanTable<V>({
    clock: context.clock,
    ttlSeconds: context.spans.ttlSeconds,
    maxEntries: context.spans.maxEntries,
    onOrphan: (value, cause) => {
      undo(value, cause);
      context.metrics.orphanedSpans.inc({ kind });
    },
  });
  context.track(table);
  return table;
}

/**
 * A map key made of several opaque ids. Length prefixes keep it injective whatever the ids
 * contain.
 */
export function compositeKey(...parts: string[]): string {
  return parts.map((part) => `${part.length}:${part}`).join('');
}
