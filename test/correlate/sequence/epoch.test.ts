/** One numbering run: applied, late, duplicate, lost and acknowledged numbers, open gaps and the memory bounds. */
import { describe, expect, it } from 'vitest';
import { Epoch, MAX_INTERVALS, MAX_OPEN_GAPS, type EpochContext } from '../../../src/correlate/sequence/epoch.js';

function context(window = 1000): EpochContext & { now: number; lostEvents: number; trims: number } {
  return {
    now: 0,
    window,
    lostEvents: 0,
    trims: 0,
    lost(events) {
      this.lostEvents += events;
    },
    trimmed() {
      this.trims += 1;
    },
  };
}

describe('Epoch', () => {
  it('applies each number once; a number inside an open gap is late, a repeat a duplicate', () => {
    const ctx = context();
    const epoch = Epoch.firstSeenAt(1, ctx.window, 0);
    expect([1, 2, 5, 3, 3, 2].map((seq) => epoch.arrive(seq, ctx))).toEqual(['apply', 'apply', 'apply', 'late', 'duplicate', 'duplicate']);
    expect([epoch.lowest, epoch.highest, epoch.hasOpenGaps]).toEqual([1, 5, true]);
    epoch.settleAll(ctx);
    // 4 is the one number never seen: lost once settled, and refused after that.
    expect(ctx.lostEvents).toBe(1);
    expect(epoch.arrive(4, ctx)).toBe('after_lost');
    expect(epoch.hasOpenGaps).toBe(false);
  });

  it('applies numbers below the first one seen (a predecessor may have taken them), never counting them lost', () => {
    const ctx = context(10);
    const epoch = Epoch.firstSeenAt(50, ctx.window, 0);
    expect(epoch.lowest).toBe(40);
    expect([45, 40, 39].map((seq) => epoch.arrive(seq, ctx))).toEqual(['apply', 'apply', 'beyond_memory']);
    epoch.settleAll(ctx);
    expect(ctx.lostEvents).toBe(0);
  });

  it('starts its floor above the epochs below it', () => {
    expect(Epoch.firstSeenAt(50, 10, 45).lowest).toBe(45);
    expect(Epoch.firstSeenAt(1, 10, 0).lowest).toBe(1);
  });

  it('settles gaps opened at or before a time, oldest first', () => {
    const ctx = context();
    const epoch = Epoch.firstSeenAt(1, ctx.window, 0);
    epoch.arrive(1, ctx);
    epoch.arrive(3, ctx); // gap [2] opened at 0
    ctx.now = 10;
    epoch.arrive(6, ctx); // gap [4, 5] opened at 10
    epoch.settleExpired(5, ctx);
    expect(ctx.lostEvents).toBe(1);
    expect(epoch.arrive(4, ctx)).toBe('late');
    epoch.settleExpired(10, ctx);
    expect(ctx.lostEvents).toBe(2);
  });

  it('settles gaps a whole window behind the highest number as lost', () => {
    const ctx = context(10);
    const epoch = Epoch.firstSeenAt(1, ctx.window, 0);
    epoch.arrive(1, ctx);
    epoch.arrive(5, ctx); // gap [2, 4]
    epoch.arrive(13, ctx); // window 10 behind 13 is 3: 2 settles, [3, 4] stays open
    expect(ctx.lostEvents).toBe(1);
    expect(epoch.arrive(3, ctx)).toBe('late');
    expect(epoch.arrive(2, ctx)).toBe('after_lost');
  });

  it('an acknowledgement splits unclaimed numbers into acknowledged elsewhere (up to acked_seq) and lost (above it)', () => {
    const ctx = context(100);
    const epoch = Epoch.firstSeenAt(50, ctx.window, 0); // unclaimed: [1, 49]
    epoch.arrive(50, ctx);
    epoch.arrive(20, ctx);
    epoch.acknowledge(30, ctx);
    // [31, 49] minus nothing: 19 lost; [1, 30] minus 20: acknowledged.
    expect(ctx.lostEvents).toBe(19);
    expect([10, 20, 40].map((seq) => epoch.arrive(seq, ctx))).toEqual(['beyond_memory', 'duplicate', 'after_lost']);
    // acked_seq past the highest: the numbers up to it were taken by another sidecar.
    epoch.acknowledge(60, ctx);
    expect(epoch.highest).toBe(60);
    expect(epoch.arrive(55, ctx)).toBe('beyond_memory');
    expect(epoch.arrive(61, ctx)).toBe('apply');
  });

  it('a first heartbeat starts an epoch just above its acked_seq; a restored one holds only what is beyond memory', () => {
    const ctx = context();
    const acknowledged = Epoch.acknowledgedUpTo(7);
    expect([acknowledged.lowest, acknowledged.highest]).toEqual([8, 7]);
    expect([8, 7].map((seq) => acknowledged.arrive(seq, ctx))).toEqual(['apply', 'beyond_memory']);
    const restored = Epoch.restored(5, 9);
    expect([5, 9, 10].map((seq) => restored.arrive(seq, ctx))).toEqual(['beyond_memory', 'beyond_memory', 'apply']);
  });

  it(`keeps at most ${MAX_OPEN_GAPS} open gaps, settling the oldest first`, () => {
    const ctx = context(1_000_000);
    const epoch = Epoch.firstSeenAt(1, ctx.window, 0);
    // Every other number: MAX_OPEN_GAPS + 1 gaps of one number each.
    for (let seq = 1; seq <= 2 * MAX_OPEN_GAPS + 3; seq += 2) epoch.arrive(seq, ctx);
    expect(ctx.lostEvents).toBe(1);
    expect(epoch.arrive(2, ctx)).toBe('after_lost');
    expect(epoch.arrive(4, ctx)).toBe('late');
  });

  it(`keeps at most ${MAX_INTERVALS} intervals per set: the floor moves up past the lowest, counted, and nothing below applies again`, () => {
    const ctx = context(1_000_000);
    const epoch = Epoch.firstSeenAt(1, ctx.window, 0);
    // Every other number, gaps settled as they go: applied and lost each fragment.
    for (let seq = 1; seq <= 2 * (MAX_INTERVALS + 1); seq += 2) {
      epoch.arrive(seq, ctx);
      epoch.settleAll(ctx);
    }
    expect(ctx.trims).toBeGreaterThan(0);
    expect(epoch.lowest).toBeGreaterThan(1);
    expect(epoch.intervals).toBeLessThanOrEqual(3 * MAX_INTERVALS);
    expect(epoch.arrive(1, ctx)).toBe('beyond_memory');
  });

  it('measures how far a number is outside [floor, highest]', () => {
    const ctx = context(10);
    const epoch = Epoch.firstSeenAt(20, ctx.window, 0);
    epoch.arrive(20, ctx);
    expect([epoch.distance(5), epoch.distance(15), epoch.distance(25)]).toEqual([5, 0, 5]);
    expect([epoch.contains(10), epoch.contains(21)]).toEqual([true, false]);
  });
});
