import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MAX_OPEN_GAPS, PluginInstances } from '../../src/correlate/instances.js';
import { FakeClock } from '../support/sidecar.js';

const build = (options: Partial<{ ttlSeconds: number; maxInstances: number; windowSize: number; reorderSeconds: number }> = {}) => {
  const clock = new FakeClock(1000);
  const counts = { evictions: 0, lost: 0, resets: 0, folded: { hook: 0, reason: 0 } };
  const instances = new PluginInstances({
    clock: clock.read,
    ttlSeconds: options.ttlSeconds ?? 60,
    maxInstances: options.maxInstances ?? 10,
    windowSize: options.windowSize ?? 1000,
    reorderSeconds: options.reorderSeconds ?? 30,
    onEvict: () => {
      counts.evictions += 1;
    },
    onLost: (events) => {
      counts.lost += events;
    },
    onReset: () => {
      counts.resets += 1;
    },
    onFolded: (key) => {
      counts.folded[key] += 1;
    },
  });
  return { clock, instances, counts, evictions: () => counts.evictions };
};

describe('sequence tracking', () => {
  it('applies each seq once; gaps are lost once settled, repeats are duplicates', () => {
    const { instances, counts } = build();
    const verdicts = [1, 2, 3, 3, 2, 6, 7, 7, 10].map((seq) => instances.sequence('a', seq));
    expect(verdicts).toEqual(['apply', 'apply', 'apply', 'duplicate', 'duplicate', 'apply', 'apply', 'duplicate', 'apply']);
    expect(counts.lost).toBe(0); // 4, 5, 8, 9 may still come
    instances.heartbeat('a', { dropped: [] });
    expect(counts.lost).toBe(4);
  });

  it('applies an out-of-order event inside an open gap once, as late, not lost', () => {
    const { instances, counts } = build();
    expect([1, 5, 3, 3, 2, 4, 4].map((seq) => instances.sequence('a', seq))).toEqual([
      'apply', 'apply', 'late', 'duplicate', 'late', 'late', 'duplicate',
    ]);
    instances.heartbeat('a', { dropped: [] });
    expect(counts.lost).toBe(0);
  });

  it('settles a gap after the reorder time, and an event of a settled gap is a duplicate', () => {
    const { clock, instances, counts } = build({ reorderSeconds: 30 });
    instances.sequence('a', 1);
    instances.sequence('a', 10);
    clock.advance(29);
    instances.settleExpired();
    expect(counts.lost).toBe(0);
    expect(instances.sequence('a', 4)).toBe('late');
    clock.advance(1);
    instances.settleExpired();
    expect(counts.lost).toBe(7);
    expect(instances.sequence('a', 5)).toBe('duplicate');
  });

  it('starts a new epoch on a jump past the window, up or down, without counting the jump', () => {
    const { instances, counts } = build({ windowSize: 1000 });
    instances.sequence('a', 1);
    instances.sequence('a', 2);
    // One poisoned line: seq 2^53 - 1.
    expect(instances.sequence('a', Number.MAX_SAFE_INTEGER)).toBe('reset');
    // The instance's real events still apply (a second reset, back to the real numbers).
    expect(instances.sequence('a', 3)).toBe('reset');
    expect(instances.sequence('a', 4)).toBe('apply');
    expect(instances.sequence('a', 4)).toBe('duplicate');
    instances.heartbeat('a', { dropped: [] });
    expect(counts).toMatchObject({ lost: 0, resets: 2 });
  });

  it('bounds open gaps per instance: the oldest settles as lost first', () => {
    const { instances, counts } = build({ windowSize: 100_000 });
    instances.sequence('a', 0);
    for (let gap = 1; gap <= MAX_OPEN_GAPS + 3; gap += 1) instances.sequence('a', gap * 2);
    // Gaps are the odd numbers 1, 3, …; the three oldest were settled.
    expect(counts.lost).toBe(3);
    expect(instances.sequence('a', 1)).toBe('duplicate');
    expect(instances.sequence('a', 7)).toBe('late');
  });

  it('settles gaps that fall a whole window behind', () => {
    const { instances, counts } = build({ windowSize: 100 });
    instances.sequence('a', 1);
    instances.sequence('a', 5); // 2..4 open
    for (let seq = 6; seq <= 105; seq += 1) instances.sequence('a', seq);
    expect(counts.lost).toBe(3);
  });

  it('starts a new instance (a restarted plugin) without counting anything lost', () => {
    const { instances, counts } = build();
    instances.sequence('old', 500);
    expect(instances.sequence('new', 1)).toBe('apply');
    expect(instances.sequence('new', 2)).toBe('apply');
    // The first sequence number seen for an instance is its baseline, whatever it is
    // (the sidecar may have restarted while the plugin kept counting).
    expect(instances.sequence('seen-late', 9000)).toBe('apply');
    expect(counts).toMatchObject({ lost: 0, resets: 0 });
  });

  it('keeps instances apart', () => {
    const { instances } = build();
    instances.sequence('a', 1);
    instances.sequence('b', 1);
    expect(instances.sequence('a', 2)).toBe('apply');
    expect(instances.sequence('b', 1)).toBe('duplicate');
  });

  it('forgets idle instances after the TTL (settling their gaps), and evicts the least recently seen when full', () => {
    const { clock, instances, counts } = build({ ttlSeconds: 60, maxInstances: 2, reorderSeconds: 1000 });
    instances.sequence('a', 5);
    instances.sequence('a', 8);
    clock.advance(30);
    instances.sequence('b', 1);
    clock.advance(31);
    instances.sweep();
    expect(instances.size).toBe(1);
    expect(counts.lost).toBe(2);
    expect(instances.sequence('a', 1)).toBe('apply');
    instances.sequence('c', 1);
    expect(counts.evictions).toBe(1);
    expect(instances.size).toBe(2);
  });

  it('property: whatever the order, each number is applied at most once, and applied + lost + late accounting is exact', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 200 }), (seqs) => {
        const { instances, counts } = build({ windowSize: 1000, reorderSeconds: 1e9 });
        const applied = new Set<number>();
        for (const seq of seqs) {
          const verdict = instances.sequence('a', seq);
          if (verdict === 'duplicate') expect(applied.has(seq) || seq < seqs[0]!).toBe(true);
          else {
            expect(applied.has(seq)).toBe(false);
            applied.add(seq);
          }
        }
        instances.heartbeat('a', { dropped: [] });
        // Every number between the first and the highest is either applied or lost, exactly once.
        const first = seqs[0]!;
        const highest = Math.max(...applied);
        const inRange = [...applied].filter((seq) => seq >= first).length;
        expect(inRange + counts.lost).toBe(highest - first + 1);
      }),
    );
  });

  it('property: no seq, however large, counts more than the window as lost or blocks later events', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (poison) => {
        const { instances, counts } = build({ windowSize: 1000 });
        for (let seq = 1; seq <= 10; seq += 1) instances.sequence('a', seq);
        instances.sequence('a', poison);
        const verdicts = [11, 12, 13].map((seq) => instances.sequence('a', seq));
        const poisonIsOneOfThem = poison >= 11 && poison <= 13 ? 1 : 0;
        expect(verdicts.filter((verdict) => verdict !== 'duplicate').length).toBe(3 - poisonIsOneOfThem);
        instances.heartbeat('a', { dropped: [] });
        expect(counts.lost).toBeLessThanOrEqual(1000);
      }),
    );
  });
});

describe('heartbeat acked_seq', () => {
  it('gives a newly seen instance its baseline, so a gap after it is counted (a restarted sidecar)', () => {
    const { instances, counts } = build();
    instances.heartbeat('a', { ackedSeq: 100, dropped: [] });
    expect(instances.sequence('a', 104)).toBe('apply');
    expect(instances.sequence('a', 100)).toBe('duplicate');
    instances.heartbeat('a', { dropped: [] });
    expect(counts.lost).toBe(3);
  });

  it('never moves a known instance backwards', () => {
    const { instances } = build();
    instances.sequence('a', 50);
    instances.heartbeat('a', { ackedSeq: 40, dropped: [] });
    expect(instances.sequence('a', 51)).toBe('apply');
  });

  it('starts counting from 0 for a plugin that never got an acknowledgement', () => {
    const { instances, counts } = build();
    instances.heartbeat('a', { ackedSeq: 0, dropped: [] });
    expect(instances.sequence('a', 6)).toBe('apply');
    instances.heartbeat('a', { dropped: [] });
    expect(counts.lost).toBe(5);
  });

  it('an acked_seq past the window is a new epoch, not 1e15 lost events nor a wall against real events', () => {
    const { instances, counts } = build({ windowSize: 1000 });
    instances.sequence('a', 10);
    instances.heartbeat('a', { ackedSeq: 1e15, dropped: [] });
    expect(instances.sequence('a', 11)).toBe('reset');
    expect(instances.sequence('a', 12)).toBe('apply');
    instances.heartbeat('a', { dropped: [] });
    expect(counts).toMatchObject({ lost: 0, resets: 2 });
    // On a new instance, a wild baseline is harmless too: the first real event resets it.
    instances.heartbeat('b', { ackedSeq: 1e15, dropped: [] });
    expect(instances.sequence('b', 1)).toBe('reset');
    expect(instances.sequence('b', 2)).toBe('apply');
  });
});

describe('heartbeat drop counters', () => {
  it('turns cumulative totals into deltas per hook and reason', () => {
    const { instances } = build();
    expect(instances.heartbeat('a', { intervalSeconds: 5, dropped: [{ hook: 'post_tool_call', reason: 'queue_full', total: 3 }] })).toEqual([
      { hook: 'post_tool_call', reason: 'queue_full', delta: 3 },
    ]);
    expect(
      instances.heartbeat('a', { intervalSeconds: 5, dropped: [
        { hook: 'post_tool_call', reason: 'queue_full', total: 3 },
        { hook: 'post_tool_call', reason: 'send_failed', total: 2 },
      ] }),
    ).toEqual([{ hook: 'post_tool_call', reason: 'send_failed', delta: 2 }]);
    expect(instances.heartbeat('a', { intervalSeconds: 5, dropped: [{ hook: 'post_tool_call', reason: 'queue_full', total: 10 }] })).toEqual([
      { hook: 'post_tool_call', reason: 'queue_full', delta: 7 },
    ]);
  });

  it('reads a smaller total as a restart of the counters', () => {
    const { instances } = build();
    instances.heartbeat('a', { intervalSeconds: 5, dropped: [{ hook: 'pre_llm_call', reason: 'shutdown', total: 8 }] });
    expect(instances.heartbeat('a', { intervalSeconds: 5, dropped: [{ hook: 'pre_llm_call', reason: 'shutdown', total: 2 }] })).toEqual([
      { hook: 'pre_llm_call', reason: 'shutdown', delta: 2 },
    ]);
  });

  it('keeps each instance’s totals apart', () => {
    const { instances } = build();
    instances.heartbeat('a', { intervalSeconds: 5, dropped: [{ hook: 'post_tool_call', reason: 'queue_full', total: 4 }] });
    expect(instances.heartbeat('b', { intervalSeconds: 5, dropped: [{ hook: 'post_tool_call', reason: 'queue_full', total: 4 }] })).toEqual([
      { hook: 'post_tool_call', reason: 'queue_full', delta: 4 },
    ]);
  });

  it('folds unknown hooks and reasons into other before storing them: 300k new keys keep the state bounded', () => {
    const { instances, counts } = build();
    const flood = (round: number) =>
      Array.from({ length: 300_000 }, (_, index) => ({ hook: `h${round}-${index}`, reason: `r${index}`, total: 1 }));
    expect(instances.heartbeat('a', { dropped: flood(0) })).toEqual([{ hook: 'other', reason: 'other', delta: 300_000 }]);
    // The same unknown keys again: nothing new dropped.
    expect(instances.heartbeat('a', { dropped: flood(0) })).toEqual([]);
    expect(instances.heartbeat('a', { dropped: [{ hook: 'post_tool_call', reason: 'made_up', total: 2 }] })).toEqual([
      { hook: 'post_tool_call', reason: 'other', delta: 2 },
    ]);
    expect(instances.storedDropKeys('a')).toBe(2);
    expect(counts.folded).toEqual({ hook: 600_000, reason: 600_001 });
  });
});

describe('liveness', () => {
  it('is live within three heartbeat intervals and stale after', () => {
    const { clock, instances } = build({ ttlSeconds: 3600 });
    instances.heartbeat('a', { intervalSeconds: 2, dropped: [] });
    instances.sequence('b', 1);
    expect(instances.liveness()).toEqual({ live: 2, stale: 0 });
    clock.advance(6);
    expect(instances.liveness()).toEqual({ live: 2, stale: 0 });
    clock.advance(0.5);
    // a: 6.5 s > 3 × 2 s; b (no heartbeat yet, default 5 s interval): 6.5 s ≤ 15 s
    expect(instances.liveness()).toEqual({ live: 1, stale: 1 });
    clock.advance(9);
    expect(instances.liveness()).toEqual({ live: 0, stale: 2 });
  });
});
