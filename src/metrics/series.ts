/**
 * What a series is, as storage keeps it and a renderer reads it: label values, numbers and a
 * version every write bumps (a renderer's cache of a series is stale once it moved).
 */
import type { NativeBuckets } from './native.js';

export type Labels = Readonly<Record<string, string>>;

/**
 * The content-free ids of one observation, its value and when it happened (epoch seconds): the
 * link from a histogram bucket to the call behind it. Built by src/metrics/exemplars.ts, which
 * keeps the ids within OpenMetrics' 128-character limit.
 */
export interface Exemplar {
  readonly labels: Labels;
  readonly value: number;
  readonly timestamp: number;
}

interface SeriesCore {
  /** In the family's label-name order. */
  readonly labelValues: readonly string[];
  /** Bumped by every write: a renderer's cache of this series is stale when it moved. */
  version: number;
}

export interface ScalarSeries extends SeriesCore {
  value: number;
}

export interface HistogramSeries extends SeriesCore {
  /** Per-bucket (non-cumulative) counts; the last one is +Inf. */
  readonly buckets: number[];
  sum: number;
  count: number;
  /** The newest exemplar per bucket (same indices as `buckets`); undefined until the first. */
  exemplars: (Exemplar | undefined)[] | undefined;
  /** The same observations in native (exponential) buckets; undefined for histograms kept classic only. */
  readonly native?: NativeBuckets | undefined;
}

/** What a renderer reads of a family: its declaration and its live series. */
export interface FamilyView {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly labelNames: readonly string[];
  /** Histograms: the finite upper bounds (the +Inf bucket is implied). */
  readonly bounds: readonly number[] | undefined;
  /** Whether series objects keep their identity between scrapes (renderers may cache them). */
  readonly stable: boolean;
  series(): Iterable<ScalarSeries | HistogramSeries>;
}

/** One series of a counter family, resolved once: recorders keep handles for their hottest label sets. */
export interface CounterHandle {
  inc(amount?: number): void;
}

/** One series of a histogram family, resolved once. */
export interface HistogramHandle {
  observe(value: number, exemplar?: Exemplar): void;
}
