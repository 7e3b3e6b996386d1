/**
 * Counter samples built window by window: the 0 before the first step, the unchanged value after
 * a pause, the sample at --until, and the same samples whether the range is drained at once or
 * window by window (a step's leading 0 may fall in the window before the step).
 */
import { describe, expect, it } from 'vitest';
import { CounterSet, type Sample } from '../../../src/cli/backfill/series.js';

const STEP = 15_000;
const UNTIL = 10 * 3_600_000;
const all = (set: CounterSet, name = 'x_total') => [...set.drain(name, Number.POSITIVE_INFINITY, true)];

describe('counter samples', () => {
  it('starts at 0 one step before the first increment, carries across pauses and ends at --until', () => {
    const set = new CounterSet({ stepMs: STEP, untilMs: UNTIL });
    set.add('x_total', [], 20_000, 2); // step ending at 30 s
    set.add('x_total', [], 29_000, 1); // same step
    set.add('x_total', [], 300_000, 4); // step ending at 300 s, after a pause
    expect(all(set)[0]?.samples).toEqual([
      { ms: 15_000, value: 0 },
      { ms: 30_000, value: 3 },
      { ms: 285_000, value: 3 },
      { ms: 300_000, value: 7 },
      { ms: UNTIL, value: 7 },
    ]);
  });

  it('never places a sample after --until', () => {
    const set = new CounterSet({ stepMs: STEP, untilMs: 20_000 });
    set.add('x_total', [], 19_000, 1);
    expect(all(set)[0]?.samples).toEqual([
      { ms: 5_000, value: 0 },
      { ms: 20_000, value: 1 },
    ]);
  });

  it('never places a sample before the epoch, even with --until within a step of it', () => {
    // A row 5 s after the epoch with --until 10 s: its step ends at 10 s, its 0 would be at −5 s.
    const set = new CounterSet({ stepMs: STEP, untilMs: 10_000 });
    set.add('x_total', [], 5_000, 1);
    expect(all(set)[0]?.samples).toEqual([
      { ms: 0, value: 0 },
      { ms: 10_000, value: 1 },
    ]);
  });

  it('gives the same samples drained window by window as drained at once, each window only its own', () => {
    const events: [number, number][] = [[1_000, 1], [14_999, 2], [15_001, 1], [59_000, 3], [61_000, 1], [200_000, 5], [299_999, 1]];
    const whole = new CounterSet({ stepMs: STEP, untilMs: 400_000 });
    for (const [ms, delta] of events) whole.add('x_total', [['a', 'b']], ms, delta);
    const expected = all(whole)[0]?.samples;

    // Windows of 60 s: rows are added up to the window's end plus a step before it is drained.
    const windowed = new CounterSet({ stepMs: STEP, untilMs: 400_000 });
    const got: Sample[] = [];
    let next = 0;
    for (let end = 60_000; end <= 420_000; end += 60_000) {
      for (; next < events.length && (events[next]?.[0] ?? 0) < end + STEP; next += 1) windowed.add('x_total', [['a', 'b']], events[next]?.[0] ?? 0, events[next]?.[1] ?? 0);
      const final = end >= 400_000;
      for (const { samples } of windowed.drain('x_total', final ? Number.POSITIVE_INFINITY : end, final)) {
        for (const sample of samples) expect(sample.ms < end || final, `${sample.ms} in the window ending ${end}`).toBe(true);
        got.push(...samples);
      }
      if (final) break;
    }
    expect(got).toEqual(expected);
    // The step ending at 60 s is in the second window; its samples at 45 s and 60 s are not both in the first.
    expect(expected).toContainEqual({ ms: 60_000, value: 7 });
  });

  it('forgets what it has handed out: a drained window yields nothing again', () => {
    const set = new CounterSet({ stepMs: STEP, untilMs: UNTIL });
    set.add('x_total', [], 20_000, 1);
    expect([...set.drain('x_total', 60_000, false)][0]?.samples).toEqual([
      { ms: 15_000, value: 0 },
      { ms: 30_000, value: 1 },
    ]);
    expect([...set.drain('x_total', 60_000, false)]).toEqual([]);
    expect(set.size).toBe(1);
  });
});
