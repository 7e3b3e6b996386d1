/**
 * A series' pending steps: in-order adds merge on the last step, out-of-order adds (several
 * databases of one profile) are sorted and merged before they are handed out, and what is
 * handed out is forgotten.
 */
import { describe, expect, it } from 'vitest';
import { PendingSteps } from '../../../src/cli/backfill/steps.js';

const take = (steps: PendingSteps, before: number): [number, number][] => {
  const out: [number, number][] = [];
  steps.takeBefore(before, (end, delta) => out.push([end, delta]));
  return out;
};

describe('pending steps', () => {
  it('merges adds to the same step and hands out steps before a moment in order', () => {
    const steps = new PendingSteps();
    for (const [end, delta] of [[15, 1], [15, 2], [30, 1], [45, 4], [60, 1], [75, 1]] as const) steps.add(end, delta);
    expect(steps.size).toBe(5);
    expect(take(steps, 45)).toEqual([[15, 3], [30, 1]]);
    expect(steps.first()).toBe(45);
    expect(take(steps, 1000)).toEqual([[45, 4], [60, 1], [75, 1]]);
    expect(steps.size).toBe(0);
    expect(steps.first()).toBeUndefined();
  });

  it('sorts and merges steps that arrive out of order', () => {
    const steps = new PendingSteps();
    for (const [end, delta] of [[30, 1], [60, 1], [15, 2], [30, 5], [45, 1], [15, 1]] as const) steps.add(end, delta);
    expect(take(steps, 1000)).toEqual([[15, 3], [30, 6], [45, 1], [60, 1]]);
  });

  it('keeps steps across many adds and gives memory back when drained', () => {
    const steps = new PendingSteps();
    for (let i = 1; i <= 10_000; i += 1) steps.add(i * 15, 1);
    expect(take(steps, 9_999 * 15)).toHaveLength(9_998);
    expect(take(steps, Number.POSITIVE_INFINITY)).toEqual([[9_999 * 15, 1], [10_000 * 15, 1]]);
  });
});
