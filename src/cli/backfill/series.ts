/**
 * Counters rebuilt from events: each event adds to its series at the end of the step it falls
 * into (as a scrape at that moment would have seen it), so a series' samples are in time order
 * and its size follows its activity, not the length of the history.
 *
 * Every series starts with a 0 one step before its first increment, so increase() over the
 * history needs no extrapolation at the start (a counter is never extrapolated below 0), and ends
 * with a sample at the range end carrying its total, so every series has a sample at the same
 * last moment. After a pause longer than a step the series gets its unchanged value one step
 * before the next increment, so rate() across the pause sees the increment in the right step.
 */

export type Labels = readonly (readonly [string, string])[];

export interface Sample {
  readonly ms: number;
  readonly value: number;
}

interface CounterSeries {
  readonly name: string;
  readonly labels: Labels;
  /** Step end (ms) → what the events of that step add. */
  readonly steps: Map<number, number>;
}

export interface SeriesOptions {
  readonly stepMs: number;
  readonly untilMs: number;
}

const keyOf = (name: string, labels: Labels): string => JSON.stringify([name, labels]);

export class CounterSet {
  private readonly series = new Map<string, CounterSeries>();

  constructor(private readonly options: SeriesOptions) {}

  get size(): number {
    return this.series.size;
  }

  /** Adds `delta` (finite, ≥ 0: the caller checks) at `ms` (within the range: the caller checks). */
  add(name: string, labels: Labels, ms: number, delta: number): void {
    const key = keyOf(name, labels);
    let entry = this.series.get(key);
    if (entry === undefined) {
      entry = { name, labels, steps: new Map() };
      this.series.set(key, entry);
    }
    const step = Math.min(Math.ceil(ms / this.options.stepMs) * this.options.stepMs, this.options.untilMs);
    entry.steps.set(step, (entry.steps.get(step) ?? 0) + delta);
  }

  /** The series of one metric name, each with its samples in time order. */
  *seriesOf(name: string): Generator<{ readonly labels: Labels; readonly samples: Sample[] }> {
    for (const entry of this.series.values()) if (entry.name === name) yield { labels: entry.labels, samples: this.samplesOf(entry) };
  }

  /** The running total at each step (and at the range end), led by a 0. */
  private samplesOf(entry: CounterSeries): Sample[] {
    const { stepMs, untilMs } = this.options;
    const steps = [...entry.steps.keys()].sort((a, b) => a - b);
    const samples: Sample[] = [];
    let total = 0;
    let previous: number | undefined;
    for (const ms of steps) {
      if (previous === undefined) samples.push({ ms: ms - stepMs, value: 0 });
      else if (ms - previous > stepMs) samples.push({ ms: ms - stepMs, value: total });
      total += entry.steps.get(ms) ?? 0;
      samples.push({ ms, value: total });
      previous = ms;
    }
    if (previous !== undefined && previous < untilMs) samples.push({ ms: untilMs, value: total });
    return samples;
  }
}
