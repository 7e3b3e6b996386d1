/** Work in slices bounded by time: a slice ends once it has lasted sliceMs, overrunning by at most one chunk. */
import { describe, expect, it } from 'vitest';
import { applyInSlices, coalesced, runInSlices, stepsInTurn } from '../src/slices.js';

/** A slicer on a clock the work itself moves; each slice's items are recorded. */
function manualSlicer(sliceMs: number) {
  const state = { now: 0, slices: [[]] as number[][] };
  const slicer = {
    sliceMs,
    now: () => state.now,
    pause: async () => void state.slices.push([]),
  };
  return { state, slicer };
}

describe('applyInSlices', () => {
  it('a run of slow items ends each slice after the item that used it up: 3 ms items, 5 ms slices, 2 items per slice', async () => {
    const { state, slicer } = manualSlicer(5);
    await applyInSlices(
      100,
      (from, to) => {
        for (let item = from; item < to; item += 1) {
          state.slices.at(-1)?.push(item);
          state.now += 3;
        }
      },
      slicer,
    );
    expect(state.slices.flat()).toEqual(Array.from({ length: 100 }, (_, item) => item));
    expect(Math.max(...state.slices.map((slice) => slice.length))).toBe(2);
  });

  it('one slow item among cheap ones: the slice it lands in ends with its chunk (at most 256 items later)', async () => {
    const { state, slicer } = manualSlicer(5);
    await applyInSlices(
      2_000,
      (from, to) => {
        for (let item = from; item < to; item += 1) {
          state.slices.at(-1)?.push(item);
          state.now += item === 1_000 ? 50 : 0.001;
        }
      },
      slicer,
    );
    const landed = state.slices.find((slice) => slice.includes(1_000)) ?? [];
    expect(landed.at(-1)).toBeGreaterThanOrEqual(1_000);
    expect(landed.at(-1)).toBeLessThan(1_000 + 256);
    expect(state.slices.flat()).toHaveLength(2_000);
  });

  it('cheap items are applied in chunks that grow to 256: few looks at the clock', async () => {
    let calls = 0;
    let looks = 0;
    await applyInSlices(100_000, () => void (calls += 1), { sliceMs: 5, now: () => (looks += 1, 0), pause: async () => undefined });
    // 1, 2, 4, … 128 (255 items), then chunks of 256.
    expect(calls).toBe(8 + Math.ceil((100_000 - 255) / 256));
    expect(looks).toBeLessThan(4 * calls);
  });

  it('applies nothing for no items', async () => {
    let calls = 0;
    await applyInSlices(0, () => void (calls += 1), { sliceMs: 5, now: () => 0, pause: async () => undefined });
    expect(calls).toBe(0);
  });
});

describe('runInSlices', () => {
  it('pauses once per slice and not after the last step', async () => {
    let now = 0;
    let pauses = 0;
    let steps = 0;
    await runInSlices(() => ((steps += 1), steps < 20), { sliceMs: 5, now: () => (now += 1), pause: async () => void (pauses += 1) });
    expect(steps).toBe(20);
    expect(pauses).toBe(3);
  });
});

describe('stepsInTurn', () => {
  it("runs each part's steps to their end in order, building a part's steps only when its turn comes", () => {
    const log: string[] = [];
    const part = (name: string, steps: number) => () => {
      log.push(`${name} built`);
      let left = steps;
      return () => {
        log.push(`${name} step`);
        left -= 1;
        return left > 0;
      };
    };
    const step = stepsInTurn([part('a', 2), part('b', 1)]);
    const results: boolean[] = [];
    while (results.at(-1) !== false) results.push(step());
    expect(log).toEqual(['a built', 'a step', 'a step', 'b built', 'b step']);
    expect(results).toEqual([true, true, false]);
    expect(step()).toBe(false);
    expect(stepsInTurn([])()).toBe(false);
  });
});

describe('coalesced', () => {
  it('is the run under way for every caller meanwhile, and a new run once it settled, failed or not', async () => {
    let runs = 0;
    let finish: () => void = () => undefined;
    const run = coalesced(() => {
      runs += 1;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    const first = run();
    expect(run()).toBe(first);
    finish();
    await first;
    const failing = coalesced(async () => {
      runs += 1;
      throw new Error('sweep failed');
    });
    await expect(failing()).rejects.toThrow('sweep failed');
    await expect(failing()).rejects.toThrow('sweep failed');
    void run();
    expect(runs).toBe(4);
  });
});
