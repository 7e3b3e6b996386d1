/**
 * One plugin instance's accounting: epochs matched by number, boots and restarts, the per-boot
 * rule for host totals, stale heartbeats that change nothing, and what a tombstone keeps.
 */
import { describe, expect, it } from 'vitest';
import { InstanceTracker, MAX_EPOCHS, MAX_FORGOTTEN_RANGES, MAX_PAST_BOOTS, type TrackerContext } from '../../../src/correlate/sequence/tracker.js';

function context(window = 100): TrackerContext & { lostEvents: number; resets: string[]; forgotten: number } {
  return {
    now: 0,
    window,
    lostEvents: 0,
    resets: [],
    forgotten: 0,
    lost(events) {
      this.lostEvents += events;
    },
    trimmed: () => undefined,
    reset(reason) {
      this.resets.push(reason);
    },
    forgot() {
      this.forgotten += 1;
    },
  };
}

const totals = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe('InstanceTracker', () => {
  it('starts a new epoch past the window (a reset) and sends nearer numbers back to their own epoch', () => {
    const ctx = context();
    const tracker = new InstanceTracker();
    expect([1, 2, 10_000, 3, 10_001, 2].map((seq) => tracker.arrive(seq, ctx))).toEqual(['apply', 'apply', 'reset', 'apply', 'apply', 'duplicate']);
    expect(ctx.resets).toEqual(['jump']);
  });

  it(`keeps ${MAX_EPOCHS} epochs; older ones become forgotten ranges (beyond memory), at most ${MAX_FORGOTTEN_RANGES}, dropping one counted`, () => {
    const ctx = context(10);
    const tracker = new InstanceTracker();
    const starts = Array.from({ length: MAX_EPOCHS + MAX_FORGOTTEN_RANGES + 1 }, (_, index) => 1 + index * 1000);
    for (const seq of starts) tracker.arrive(seq, ctx);
    expect(ctx.forgotten).toBe(1);
    // The oldest range was dropped: its number applies again; the next one is still remembered.
    expect(tracker.arrive(starts[1] ?? 0, ctx)).toBe('beyond_memory');
    expect(tracker.arrive(starts[0] ?? 0, ctx)).toBe('reset');
  });

  it('turns host totals into rises per boot: a lower total is stale and changes nothing, a new boot starts from 0', () => {
    const ctx = context();
    const tracker = new InstanceTracker();
    const beat = (boot: string, values: Record<string, number>, ackedSeq?: number) => tracker.heartbeat({ boot, ackedSeq, totals: totals(values) }, ctx);
    expect(beat('a', { d: 10, r: 10 })).toEqual({ increments: [['d', 10], ['r', 10]] });
    expect(beat('a', { d: 20, r: 20 })).toEqual({ increments: [['d', 10], ['r', 10]] });
    expect(beat('a', { d: 20, r: 10 })).toEqual({ stale: 'dropped' });
    // The stale heartbeat left d at 20: 25 rises by 5.
    expect(beat('a', { d: 25, r: 20 })).toEqual({ increments: [['d', 5]] });
    expect(beat('b', { d: 15, r: 1 })).toEqual({ increments: [['d', 15], ['r', 1]] });
    expect(ctx.resets).toEqual(['restart']);
    expect(beat('a', { d: 99 })).toEqual({ stale: 'boot' });
    expect(tracker.storedTotalKeys).toBe(2);
  });

  it('a heartbeat with a lower acked_seq is stale: it neither settles gaps nor raises totals', () => {
    const ctx = context();
    const tracker = new InstanceTracker();
    tracker.heartbeat({ boot: 'a', ackedSeq: 5, totals: totals({}) }, ctx);
    for (const seq of [6, 9]) tracker.arrive(seq, ctx);
    expect(tracker.heartbeat({ boot: 'a', ackedSeq: 4, totals: totals({ d: 3 }) }, ctx)).toEqual({ stale: 'acked_seq' });
    expect(ctx.lostEvents).toBe(0);
    expect(tracker.heartbeat({ boot: 'a', ackedSeq: 9, totals: totals({ d: 3 }) }, ctx)).toEqual({ increments: [['d', 3]] });
    expect(ctx.lostEvents).toBe(2);
  });

  it('without boots, acked_seq 0 after applied events is a restart that clears the totals', () => {
    const ctx = context();
    const tracker = new InstanceTracker();
    tracker.heartbeat({ ackedSeq: 0, totals: totals({ d: 4 }) }, ctx);
    tracker.arrive(1, ctx);
    expect(tracker.heartbeat({ ackedSeq: 0, totals: totals({ d: 1 }) }, ctx)).toEqual({ increments: [['d', 1]] });
    expect(ctx.resets).toEqual(['restart']);
    expect(tracker.arrive(1, ctx)).toBe('apply');
  });

  it(`remembers ${MAX_PAST_BOOTS} earlier boots as stale`, () => {
    const ctx = context();
    const tracker = new InstanceTracker();
    const boots = Array.from({ length: MAX_PAST_BOOTS + 2 }, (_, index) => `boot${index}`);
    for (const boot of boots) tracker.heartbeat({ boot, totals: totals({}) }, ctx);
    expect(tracker.heartbeat({ boot: boots[1] ?? '', totals: totals({}) }, ctx)).toEqual({ stale: 'boot' });
    // The first boot is past memory: it reads as a new boot (a restart).
    expect(tracker.heartbeat({ boot: boots[0] ?? '', totals: totals({}) }, ctx)).toEqual({ increments: [] });
  });

  it('a tombstone keeps the boot, the totals and each epoch as beyond memory; nothing is kept for an instance that did nothing', () => {
    const ctx = context();
    expect(new InstanceTracker().tombstone(ctx)).toBeUndefined();
    const tracker = new InstanceTracker();
    tracker.heartbeat({ boot: 'a', ackedSeq: 0, totals: totals({ d: 7 }) }, ctx);
    for (const seq of [1, 2, 4]) tracker.arrive(seq, ctx);
    const tombstone = tracker.tombstone(ctx);
    expect(ctx.lostEvents).toBe(1);
    expect(tombstone).toMatchObject({ boot: 'a', ranges: [[1, 4]], totals: totals({ d: 7 }) });
    const restored = InstanceTracker.restore(tombstone ?? expect.fail('a tombstone'));
    expect([2, 5].map((seq) => restored.arrive(seq, ctx))).toEqual(['beyond_memory', 'apply']);
    expect(restored.heartbeat({ boot: 'a', totals: totals({ d: 9 }) }, ctx)).toEqual({ increments: [['d', 2]] });
  });
});
