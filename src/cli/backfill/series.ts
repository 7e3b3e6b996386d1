/**
 * Counters rebuilt from events, one window at a time: each event adds to its series at the end
 * of the step it falls into (as a scrape at that moment would have seen it); `drain` hands out a
 * window's samples in time order and forgets them, so memory holds the steps not yet written and
 * one running total per series, never the history.
 *
 * Every series starts with a 0 one step before its first increment (never before the epoch), so
 * increase() over the history needs no extrapolation at the start (a counter is never
 * extrapolated below 0), and ends with a sample at the range end carrying its total, so every
 * series has a sample at the same last moment. After a pause longer than a step the series gets
 * its unchanged value one step before the next increment, so rate() across the pause sees the
 * increment in the right step.
 */
import { PendingSteps } from './steps.js';

export type Labels = readonly (readonly [string, string])[];

export interface Sample {
  readonly ms: number;
  readonly value: number;
}

interface CounterSeries {
  readonly labels: Labels;
  readonly pending: PendingSteps;
  total: number;
  /** The time of the last sample handed out; undefined before the first. */
  lastMs: number | undefined;
}

export interface SeriesOptions {
  readonly stepMs: number;
  readonly untilMs: number;
}

const keyOf = (labels: Labels): string => JSON.stringify(labels);

export class CounterSet {
  /** Metric name → label set → series, both in the order first seen. */
  private readonly byName = new Map<string, Map<string, CounterSeries>>();
  private count = 0;

  constructor(private readonly options: SeriesOptions) {}

  get size(): number {
    return this.count;
  }

  /** Adds `delta` (finite, ≥ 0: the caller checks) at `ms` (≥ 1 and within the range: the caller checks). */
  add(name: string, labels: Labels, ms: number, delta: number): void {
    let series = this.byName.get(name);
    if (series === undefined) this.byName.set(name, (series = new Map<string, CounterSeries>()));
    const key = keyOf(labels);
    let entry = series.get(key);
    if (entry === undefined) {
      entry = { labels, pending: new PendingSteps(), total: 0, lastMs: undefined };
      series.set(key, entry);
      this.count += 1;
    }
    entry.pending.add(Math.min(Math.ceil(ms / this.options.stepMs) * this.options.stepMs, this.options.untilMs), delta);
  }

  /** The earliest moment a pending step writes a sample (its leading value), if any step is pending. */
  earliestPendingSample(): number | undefined {
    let earliest: number | undefined;
    for (const series of this.byName.values()) {
      for (const entry of series.values()) {
        const next = entry.pending.first();
        if (next !== undefined) earliest = Math.min(earliest ?? next, Math.max(0, next - this.options.stepMs));
      }
    }
    return earliest;
  }

  /**
   * The samples of series `name` before `endMs`, series by series, each in time order, and then
   * forgotten; `final` (the window holding the range end) also gives every series its sample at
   * the range end.
   */
  *drain(name: string, endMs: number, final: boolean): Generator<{ readonly labels: Labels; readonly samples: Sample[] }> {
    for (const entry of this.byName.get(name)?.values() ?? []) {
      const samples = this.samplesBefore(entry, endMs);
      if (final && entry.lastMs !== undefined && entry.lastMs < this.options.untilMs) samples.push(this.sample(entry, this.options.untilMs));
      if (samples.length > 0) yield { labels: entry.labels, samples };
    }
  }

  private samplesBefore(entry: CounterSeries, endMs: number): Sample[] {
    const { stepMs } = this.options;
    const samples: Sample[] = [];
    entry.pending.takeBefore(endMs, (ms, delta) => {
      this.leadIn(entry, ms, samples);
      entry.total += delta;
      samples.push(this.sample(entry, ms));
    });
    // The next step's 0 or unchanged value may fall in this window though the step does not.
    const next = entry.pending.first();
    if (next !== undefined && Math.max(0, next - stepMs) < endMs) this.leadIn(entry, next, samples);
    return samples;
  }

  /** The 0 before a series' first step, or its unchanged value before a step after a pause. */
  private leadIn(entry: CounterSeries, stepEnd: number, samples: Sample[]): void {
    const at = Math.max(0, stepEnd - this.options.stepMs);
    if (at < stepEnd && (entry.lastMs === undefined || at > entry.lastMs)) samples.push(this.sample(entry, at));
  }

  private sample(entry: CounterSeries, ms: number): Sample {
    entry.lastMs = ms;
    return { ms, value: entry.total };
  }
}
