import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/catalogue.js';
import fc from 'fast-check';
import { MAX_EPOCHS, MAX_FORGOTTEN_RANGES, MAX_INTERVALS, MAX_OPEN_GAPS, PluginInstances, type InstanceTable } from '../../src/correlate/instances.js';
import { series } from '../support/exposition.js';
import { FakeClock, startTestSidecar } from '../support/sidecar.js';

type Options = Partial<{ ttlSeconds: number; maxInstances: number; maxTombstones: number; maxBytes: number; windowSize: number; reorderSeconds: number }>;

const build = (options: Options = {}) => {
  const clock = new FakeClock(1000);
  const counts = {
    evictions: 0,
    evicted: { plugin_instances: 0, plugin_tombstones: 0, plugin_intervals: 0, plugin_epochs: 0 } as Record<InstanceTable, number>,
    lost: 0,
    resets: 0,
    reset: { jump: 0, restart: 0 },
    stale: { boot: 0, acked_seq: 0, dropped: 0 },
  };
  const instances = new PluginInstances({
    clock: clock.read,
    ttlSeconds: options.ttlSeconds ?? 60,
    maxInstances: options.maxInstances ?? 10,
    maxTombstones: options.maxTombstones,
    maxBytes: options.maxBytes,
    windowSize: options.windowSize ?? 1000,
    reorderSeconds: options.reorderSeconds ?? 30,
    onEvict: (table) => {
      counts.evicted[table] += 1;
      if (table === 'plugin_instances') counts.evictions += 1;
    },
    onLost: (events) => {
      counts.lost += events;
    },
    onReset: (reason) => {
      counts.resets += 1;
      counts.reset[reason] += 1;
    },
    onStale: (reason) => {
      counts.stale[reason] += 1;
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

  it('settles a gap after the reorder time; an event of a settled gap is discarded as after_lost, not a duplicate', () => {
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
    expect(instances.sequence('a', 5)).toBe('after_lost');
  });

  it('starts a new epoch on a jump past the window, and keeps the old one: later real events return to it', () => {
    const { instances, counts } = build({ windowSize: 1000 });
    instances.sequence('a', 1);
    instances.sequence('a', 2);
    // One poisoned line: seq 2^53 - 1.
    expect(instances.sequence('a', Number.MAX_SAFE_INTEGER)).toBe('reset');
    // The instance's real events still apply, in their own epoch (the nearest within the window).
    expect(instances.sequence('a', 3)).toBe('apply');
    expect(instances.sequence('a', 4)).toBe('apply');
    expect(instances.sequence('a', 4)).toBe('duplicate');
    expect(instances.sequence('a', 1)).toBe('duplicate');
    expect(instances.sequence('a', Number.MAX_SAFE_INTEGER)).toBe('duplicate');
    instances.heartbeat('a', { dropped: [] });
    expect(counts).toMatchObject({ lost: 0, resets: 1, reset: { jump: 1, restart: 0 } });
  });

  it('keeps MAX_EPOCHS epochs; an older one becomes a forgotten range whose numbers are beyond memory', () => {
    const { instances, counts } = build({ windowSize: 1000 });
    const starts = Array.from({ length: MAX_EPOCHS + 1 }, (_, index) => 1 + index * 10_000);
    for (const start of starts) expect(instances.sequence('a', start)).toBe(start === 1 ? 'apply' : 'reset');
    expect(instances.sequence('a', 1)).toBe('beyond_memory');
    for (const start of starts.slice(1)) expect(instances.sequence('a', start)).toBe('duplicate');
    expect(counts.reset.jump).toBe(MAX_EPOCHS);
    expect(counts.evicted.plugin_epochs).toBe(0);
  });

  it('keeps MAX_FORGOTTEN_RANGES forgotten ranges; dropping one is counted, since its numbers could apply again', () => {
    const { instances, counts } = build({ windowSize: 1000 });
    const epochs = MAX_EPOCHS + MAX_FORGOTTEN_RANGES + 1;
    for (let index = 0; index < epochs; index += 1) instances.sequence('a', 1 + index * 10_000);
    expect(counts.evicted.plugin_epochs).toBe(1);
    expect(instances.sequence('a', 10_001)).toBe('beyond_memory');
    expect(instances.sequence('a', 1)).toBe('reset');
  });

  it('bounds open gaps per epoch: the oldest settles as lost first', () => {
    const { instances, counts } = build({ windowSize: 100_000 });
    instances.sequence('a', 0);
    for (let gap = 1; gap <= MAX_OPEN_GAPS + 3; gap += 1) instances.sequence('a', gap * 2);
    // Gaps are the odd numbers 1, 3, …; the three oldest were settled.
    expect(counts.lost).toBe(3);
    expect(instances.sequence('a', 1)).toBe('after_lost');
    expect(instances.sequence('a', 7)).toBe('late');
  });

  it('bounds the intervals of an epoch: past MAX_INTERVALS the floor moves up, counted, and nothing below it applies again', () => {
    const { instances, counts } = build({ windowSize: 100_000 });
    // Every other number, first seen from the top: the applied set fragments into single numbers.
    const top = 2 * (MAX_INTERVALS + 5);
    instances.sequence('a', top);
    for (let seq = top - 2; seq >= 2; seq -= 2) instances.sequence('a', seq);
    expect(counts.evicted.plugin_intervals).toBeGreaterThan(0);
    expect(instances.sequence('a', 2)).toBe('beyond_memory');
    expect(instances.sequence('a', top)).toBe('duplicate');
    expect(instances.sequence('a', top - 1)).toBe('apply'); // unclaimed and within memory: never seen
  });

  it('settles gaps that fall a whole window behind', () => {
    const { instances, counts } = build({ windowSize: 100 });
    instances.sequence('a', 1);
    instances.sequence('a', 5); // 2..4 open
    for (let seq = 6; seq <= 105; seq += 1) instances.sequence('a', seq);
    expect(counts.lost).toBe(3);
  });

  it('starts a new instance (a restarted plugin) without counting anything lost; numbers below its first are applied', () => {
    const { instances, counts } = build();
    instances.sequence('old', 500);
    expect(instances.sequence('new', 1)).toBe('apply');
    expect(instances.sequence('new', 2)).toBe('apply');
    // The first sequence number seen for an instance is its baseline, whatever it is
    // (the sidecar may have restarted while the plugin kept counting).
    expect(instances.sequence('seen-late', 9000)).toBe('apply');
    expect(instances.sequence('seen-late', 8999)).toBe('apply');
    expect(instances.sequence('seen-late', 8999)).toBe('duplicate');
    expect(counts).toMatchObject({ lost: 0, resets: 0 });
  });

  it('keeps instances apart', () => {
    const { instances } = build();
    instances.sequence('a', 1);
    instances.sequence('b', 1);
    expect(instances.sequence('a', 2)).toBe('apply');
    expect(instances.sequence('b', 1)).toBe('duplicate');
  });

  it('forgets idle instances after the TTL (settling their gaps, leaving a tombstone), and evicts the least recently seen when full', () => {
    const { clock, instances, counts } = build({ ttlSeconds: 60, maxInstances: 2, reorderSeconds: 1000 });
    instances.sequence('a', 5);
    instances.sequence('a', 8);
    clock.advance(30);
    instances.sequence('b', 1);
    clock.advance(31);
    instances.sweep();
    expect(instances.size).toBe(1);
    expect(counts.lost).toBe(2);
    // Back from its tombstone: what it may have sent before is beyond memory, new numbers count as usual.
    expect(instances.sequence('a', 1)).toBe('beyond_memory');
    expect(instances.sequence('a', 8)).toBe('beyond_memory');
    expect(instances.sequence('a', 9)).toBe('apply');
    instances.sequence('c', 1);
    expect(counts.evictions).toBe(1);
    expect(instances.size).toBe(2);
  });

  it('bounds the tombstone table, counting what it drops', () => {
    const { instances, counts } = build({ maxInstances: 1, maxTombstones: 2 });
    for (const id of ['a', 'b', 'c', 'd']) instances.sequence(id, 1);
    expect(counts.evicted).toMatchObject({ plugin_instances: 3, plugin_tombstones: 1 });
    expect(instances.tombstoneCount).toBe(2);
    expect(instances.sequence('a', 1)).toBe('apply'); // its tombstone was dropped (counted): a new instance
    expect(instances.sequence('c', 1)).toBe('beyond_memory');
  });

  it('bounds the table in bytes: long ids and fragmented state evict the least recently seen', () => {
    const { instances, counts } = build({ maxInstances: 1000, maxBytes: 16 * 1024 });
    for (let index = 0; index < 40; index += 1) instances.sequence(`${'x'.repeat(300)}${index}`, 1);
    expect(instances.size).toBeLessThan(40);
    expect(counts.evictions).toBe(40 - instances.size);
  });

  it('property: whatever the order, each number is applied exactly once, never seen is never a duplicate, and applied + lost is exact', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 200 }), (seqs) => {
        const { instances, counts } = build({ windowSize: 1000, reorderSeconds: 1e9 });
        const applied = new Set<number>();
        for (const seq of seqs) {
          const verdict = instances.sequence('a', seq);
          expect(verdict).not.toBe('after_lost');
          expect(verdict).not.toBe('beyond_memory');
          if (verdict === 'duplicate') expect(applied.has(seq)).toBe(true);
          else {
            expect(applied.has(seq)).toBe(false);
            applied.add(seq);
          }
        }
        expect(applied).toEqual(new Set(seqs));
        instances.heartbeat('a', { ackedSeq: 0, boot: 'b', dropped: [] });
        // Every number up to the highest is either applied or lost, exactly once.
        expect(applied.size + counts.lost).toBe(Math.max(...seqs));
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
    // Acknowledged by the sidecar before this one, never seen here: not a duplicate, not applied.
    expect(instances.sequence('a', 100)).toBe('beyond_memory');
    instances.heartbeat('a', { dropped: [] });
    expect(counts.lost).toBe(3);
  });

  it('never moves a known instance backwards; a lower acked_seq than one seen is stale and settles nothing', () => {
    const { instances, counts } = build();
    instances.sequence('a', 50);
    instances.heartbeat('a', { ackedSeq: 40, dropped: [] });
    expect(instances.sequence('a', 51)).toBe('apply');
    expect(counts.lost).toBe(9); // 41..49, below the first number seen and above acked_seq
    instances.sequence('a', 60); // 52..59 open
    instances.heartbeat('a', { ackedSeq: 30, dropped: [] });
    expect(counts.stale.acked_seq).toBe(1);
    expect(counts.lost).toBe(9);
    expect(instances.sequence('a', 55)).toBe('late');
  });

  it('a heartbeat settles the numbers below the first seen: acknowledged up to acked_seq, lost above it', () => {
    const { instances, counts } = build();
    instances.sequence('a', 20);
    instances.heartbeat('a', { ackedSeq: 15, dropped: [] });
    expect(counts.lost).toBe(4); // 16..19: sent before the heartbeat, never arrived
    expect(instances.sequence('a', 10)).toBe('beyond_memory');
    expect(instances.sequence('a', 17)).toBe('after_lost');
    expect(instances.sequence('a', 21)).toBe('apply');
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
    expect(instances.sequence('a', 11)).toBe('apply');
    expect(instances.sequence('a', 12)).toBe('apply');
    instances.heartbeat('a', { dropped: [] });
    expect(counts).toMatchObject({ lost: 0, resets: 1 });
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
      { total: 'dropped', hook: 'post_tool_call', reason: 'queue_full', delta: 3 },
    ]);
    expect(
      instances.heartbeat('a', { intervalSeconds: 5, dropped: [
        { hook: 'post_tool_call', reason: 'queue_full', total: 3 },
        { hook: 'post_tool_call', reason: 'send_failed', total: 2 },
      ] }),
    ).toEqual([{ total: 'dropped', hook: 'post_tool_call', reason: 'send_failed', delta: 2 }]);
    expect(instances.heartbeat('a', { intervalSeconds: 5, dropped: [{ hook: 'post_tool_call', reason: 'queue_full', total: 10 }] })).toEqual([
      { total: 'dropped', hook: 'post_tool_call', reason: 'queue_full', delta: 7 },
    ]);
  });

  it('ignores a smaller total of the same boot as stale (counted); only a new boot starts the totals again', () => {
    const { instances, counts } = build();
    const report = (boot: string, total: number) => ({ boot, dropped: [{ hook: 'pre_llm_call', reason: 'shutdown', total }] });
    instances.heartbeat('a', report('b1', 8));
    expect(instances.heartbeat('a', report('b1', 2))).toEqual([]);
    expect(counts.stale.dropped).toBe(1);
    expect(instances.heartbeat('a', report('b1', 9))).toEqual([{ total: 'dropped', hook: 'pre_llm_call', reason: 'shutdown', delta: 1 }]);
    expect(instances.heartbeat('a', report('b2', 2))).toEqual([{ total: 'dropped', hook: 'pre_llm_call', reason: 'shutdown', delta: 2 }]);
    expect(counts.reset.restart).toBe(1);
    expect(instances.heartbeat('a', report('b1', 20))).toEqual([]); // an earlier boot: stale, ignored
    expect(counts.stale.boot).toBe(1);
  });

  it('a new boot is a restart: the old epochs settle and clear, numbering starts again', () => {
    const { instances, counts } = build();
    instances.heartbeat('a', { boot: 'b1', ackedSeq: 0, dropped: [] });
    for (const seq of [1, 2, 5]) instances.sequence('a', seq);
    instances.heartbeat('a', { boot: 'b2', ackedSeq: 0, dropped: [] });
    expect(counts).toMatchObject({ lost: 2, reset: { jump: 0, restart: 1 } });
    expect(instances.sequence('a', 1)).toBe('apply');
    expect(instances.sequence('a', 1)).toBe('duplicate');
  });

  it('without boots, acked_seq 0 on an instance that applied events is a restart; on a fresh one it is a baseline', () => {
    const { instances, counts } = build();
    instances.heartbeat('a', { ackedSeq: 0, dropped: [] });
    instances.heartbeat('a', { ackedSeq: 0, dropped: [] });
    expect(counts.reset.restart).toBe(0);
    instances.sequence('a', 1);
    instances.heartbeat('a', { ackedSeq: 0, dropped: [] });
    expect(counts.reset.restart).toBe(1);
    expect(instances.sequence('a', 1)).toBe('apply');
  });

  it('keeps each instance’s totals apart', () => {
    const { instances } = build();
    instances.heartbeat('a', { intervalSeconds: 5, dropped: [{ hook: 'post_tool_call', reason: 'queue_full', total: 4 }] });
    expect(instances.heartbeat('b', { intervalSeconds: 5, dropped: [{ hook: 'post_tool_call', reason: 'queue_full', total: 4 }] })).toEqual([
      { total: 'dropped', hook: 'post_tool_call', reason: 'queue_full', delta: 4 },
    ]);
  });

  it('folds unknown hooks and reasons into other before storing them: 300k new keys keep the state bounded', () => {
    const { instances } = build();
    const flood = (round: number) =>
      Array.from({ length: 300_000 }, (_, index) => ({ hook: `h${round}-${index}`, reason: `r${index}`, total: 1 }));
    expect(instances.heartbeat('a', { dropped: flood(0) })).toEqual([{ total: 'dropped', hook: 'other', reason: 'other', delta: 300_000 }]);
    // The same unknown keys again: nothing new dropped.
    expect(instances.heartbeat('a', { dropped: flood(0) })).toEqual([]);
    expect(instances.heartbeat('a', { dropped: [{ hook: 'post_tool_call', reason: 'made_up', total: 2 }] })).toEqual([
      { total: 'dropped', hook: 'post_tool_call', reason: 'other', delta: 2 },
    ]);
    expect(instances.storedTotalKeys('a')).toBe(2);
  });
});

describe('liveness', () => {
  it('is live within three heartbeat intervals and stale after', () => {
    const { clock, instances } = build({ ttlSeconds: 3600 });
    instances.heartbeat('a', { intervalSeconds: 2, dropped: [] });
    instances.sequence('b', 1);
    expect(instances.liveness()).toMatchObject({ live: 2, stale: 0 });
    clock.advance(6);
    expect(instances.liveness()).toMatchObject({ live: 2, stale: 0 });
    clock.advance(0.5);
    // a: 6.5 s > 3 × 2 s; b (no heartbeat yet, default 5 s interval): 6.5 s ≤ 15 s
    expect(instances.liveness()).toMatchObject({ live: 1, stale: 1 });
    clock.advance(9);
    expect(instances.liveness()).toMatchObject({ live: 0, stale: 2 });
  });
});

describe('host description and refused totals', () => {
  const host = (hermes_version: string) => ({ hermes_version, plugin_version: '1.0.0', profile: 'default' });

  it('keeps refused totals by the same per-boot rule as drop totals, folding unknown fields into other', () => {
    const { instances, counts } = build();
    const report = (boot: string, total: number) => ({
      boot,
      dropped: [{ hook: 'post_tool_call', reason: 'queue_full', total }],
      refused: [{ field: 'model', total }, { field: 'no_such_field', total: 1 }],
    });
    const rises = [report('b1', 10), report('b1', 20), report('b1', 10), report('b1', 20)].map((beat) => instances.heartbeat('a', beat));
    expect(rises).toEqual([
      [
        { total: 'dropped', hook: 'post_tool_call', reason: 'queue_full', delta: 10 },
        { total: 'refused', field: 'model', delta: 10 },
        { total: 'refused', field: 'other', delta: 1 },
      ],
      [
        { total: 'dropped', hook: 'post_tool_call', reason: 'queue_full', delta: 10 },
        { total: 'refused', field: 'model', delta: 10 },
      ],
      [],
      [],
    ]);
    expect(counts.stale.dropped).toBe(1);
    // A new boot starts every total from 0: its whole first report counts.
    expect(instances.heartbeat('a', report('b2', 15))).toEqual([
      { total: 'dropped', hook: 'post_tool_call', reason: 'queue_full', delta: 15 },
      { total: 'refused', field: 'model', delta: 15 },
      { total: 'refused', field: 'other', delta: 1 },
    ]);
    expect(instances.storedTotalKeys('a')).toBe(3);
  });

  it('a refused total lower than stored makes the whole heartbeat stale: its acked_seq settles nothing, its drops count nothing', () => {
    const { instances, counts } = build();
    instances.heartbeat('a', { boot: 'b', ackedSeq: 0, dropped: [], refused: [{ field: 'model', total: 5 }] });
    instances.sequence('a', 3);
    const stale = { boot: 'b', ackedSeq: 3, dropped: [{ hook: 'post_tool_call', reason: 'queue_full', total: 4 }], refused: [{ field: 'model', total: 4 }] };
    expect(instances.heartbeat('a', stale)).toEqual([]);
    expect(counts).toMatchObject({ lost: 0, stale: { dropped: 1 } });
    expect(instances.heartbeat('a', { ...stale, refused: [{ field: 'model', total: 5 }] })).toEqual([
      { total: 'dropped', hook: 'post_tool_call', reason: 'queue_full', delta: 4 },
    ]);
    expect(counts.lost).toBe(2);
  });

  it('a stale heartbeat changes neither the host description, the interval nor the liveness', () => {
    const { clock, instances, counts } = build({ ttlSeconds: 3600 });
    instances.heartbeat('a', { boot: 'b1', ackedSeq: 0, intervalSeconds: 2, dropped: [], host: host('0.21.3') });
    instances.heartbeat('a', { boot: 'b2', ackedSeq: 4, intervalSeconds: 2, dropped: [], host: host('0.21.5') });
    clock.advance(5);
    // Delayed: the earlier boot, and in the current boot a lower acked_seq.
    instances.heartbeat('a', { boot: 'b1', ackedSeq: 9, intervalSeconds: 3600, dropped: [], host: host('0.19.0') });
    instances.heartbeat('a', { boot: 'b2', ackedSeq: 2, intervalSeconds: 3600, dropped: [], host: host('0.19.0') });
    expect(counts.stale).toMatchObject({ boot: 1, acked_seq: 1 });
    expect(instances.liveness()).toEqual({ live: 1, stale: 0, hosts: [{ host: host('0.21.5'), live: 1 }] });
    // Three 2 s intervals after the last heartbeat that counted, the instance is stale.
    clock.advance(1.5);
    expect(instances.liveness()).toEqual({ live: 0, stale: 1, hosts: [] });
  });

  it('counts live instances by host in the same pass as live and stale, an interval of 0 keeping the last one', () => {
    const { clock, instances } = build({ ttlSeconds: 3600 });
    instances.heartbeat('a', { intervalSeconds: 0, dropped: [], host: host('0.21.3') });
    instances.heartbeat('b', { intervalSeconds: 10, dropped: [], host: host('0.21.3') });
    instances.sequence('c', 1);
    clock.advance(1);
    expect(instances.liveness()).toEqual({
      live: 3,
      stale: 0,
      hosts: [
        { host: host('0.21.3'), live: 2 },
        { host: undefined, live: 1 },
      ],
    });
    // a and c: 3 × the default 5 s; b: 3 × 10 s.
    clock.advance(15);
    expect(instances.liveness()).toEqual({ live: 1, stale: 2, hosts: [{ host: host('0.21.3'), live: 1 }] });
  });

  it('charges the host description to the entry: long descriptions evict by bytes', () => {
    const { instances, counts } = build({ maxBytes: 8_000 });
    const long = (index: number) => ({ hermes_version: `${index}`.padEnd(1_000, 'v'), plugin_version: '1', profile: 'p' });
    for (let index = 0; index < 8; index += 1) instances.heartbeat(`i${index}`, { dropped: [], host: long(index) });
    expect(counts.evicted.plugin_instances).toBeGreaterThan(0);
    expect(instances.size).toBeLessThan(8);
  });
});

describe('host reports through the event path', () => {
  const heartbeat = (instance: string, data: Record<string, unknown>) => ({
    event: 'plugin_heartbeat',
    instance,
    data: { interval_seconds: 5, dropped: {}, plugin_version: '0.1.0', ...data },
  });
  const info = (hermes_version: string) => series('hermes_plugin_info', { hermes_version, plugin_version: '0.1.0', profile: 'default' });
  const refused = series('hermes_plugin_values_refused_total', { field: 'model' });
  const dropped = series('hermes_plugin_callbacks_dropped_total', { hook: 'post_tool_call', reason: 'queue_full' });
  const infoIn = (hermes_version: string, profile: string) => series('hermes_plugin_info', { hermes_version, plugin_version: '0.1.0', profile });

  it('refused totals 10, 20, 10, 20 in one boot count 20, as the drop totals beside them do', async () => {
    const harness = startTestSidecar();
    for (const total of [10, 20, 10, 20]) {
      await harness.postNdjson([heartbeat('a', { boot: 'b1', acked_seq: 0, dropped: { post_tool_call: { queue_full: total } }, refused_fields: { model: total } })]);
    }
    const samples = await harness.samples();
    expect(samples.get(refused)).toBe(20);
    expect(samples.get(dropped)).toBe(20);
    expect(samples.get(series('hermes_sidecar_heartbeats_stale_total', { reason: 'dropped' }))).toBe(1);
  });

  it('boot A reporting 10 refused, then boot B reporting 15 under the same instance, count 25', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([heartbeat('a', { boot: 'a'.repeat(32), acked_seq: 0, refused_fields: { model: 10 } })]);
    await harness.postNdjson([heartbeat('a', { boot: 'b'.repeat(32), acked_seq: 0, refused_fields: { model: 15 } })]);
    const samples = await harness.samples();
    expect(samples.get(refused)).toBe(25);
    expect(samples.get(series('hermes_sidecar_sequence_resets_total', { reason: 'restart' }))).toBe(1);
  });

  it('a heartbeat judged stale changes nothing: not the refused totals, not the host labels, not the liveness', async () => {
    const harness = startTestSidecar();
    const boot = (letter: string) => letter.repeat(32);
    await harness.postNdjson([heartbeat('a', { boot: boot('a'), acked_seq: 0, interval_seconds: 2, hermes_version: '0.21.3', profile: 'default', refused_fields: { model: 1 } })]);
    await harness.postNdjson([heartbeat('a', { boot: boot('b'), acked_seq: 0, interval_seconds: 2, hermes_version: '0.21.5', profile: 'default', refused_fields: { model: 2 } })]);
    // A heartbeat of the earlier boot, delayed: another version, a long interval, a higher total.
    await harness.postNdjson([heartbeat('a', { boot: boot('a'), acked_seq: 7, interval_seconds: 3600, hermes_version: '0.19.0', profile: 'default', refused_fields: { model: 9 } })]);
    let samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_heartbeats_stale_total', { reason: 'boot' }))).toBe(1);
    expect(samples.get(refused)).toBe(3);
    expect(samples.get(info('0.21.5'))).toBe(1);
    expect(samples.get(info('0.19.0'))).toBeUndefined();
    // Three 2 s intervals after the last heartbeat that counted, the instance is stale in both families.
    harness.clock.advance(7);
    samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_instances', { state: 'live' }))).toBe(0);
    expect(samples.get(info('0.21.5'))).toBe(0);
  });

  it('interval_seconds 0: hermes_plugin_instances{state="live"} and hermes_plugin_info agree', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([heartbeat('a', { interval_seconds: 0, hermes_version: '0.21.3', profile: 'default' })]);
    harness.clock.advance(1);
    let samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_instances', { state: 'live' }))).toBe(1);
    expect(samples.get(info('0.21.3'))).toBe(1);
    harness.clock.advance(15);
    samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_instances', { state: 'live' }))).toBe(0);
    expect(samples.get(info('0.21.3'))).toBe(0);
  });

  it('an instance that sent events but no heartbeat yet counts in hermes_plugin_info as unknown, so the sum equals the live count', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      { event: 'agent_end', instance: 'quiet', seq: 1, data: {} },
      heartbeat('a', { hermes_version: '0.21.3', profile: 'default' }),
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_instances', { state: 'live' }))).toBe(2);
    expect(samples.get(info('0.21.3'))).toBe(1);
    expect(samples.get(series('hermes_plugin_info', { hermes_version: 'unknown', plugin_version: 'unknown', profile: 'unknown' }))).toBe(1);
  });

  it('counts live instances per Hermes version and profile, and stops counting stale ones', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      heartbeat('a', { hermes_version: '0.21.3', profile: 'default' }),
      heartbeat('b', { hermes_version: '0.21.3', profile: 'work' }),
      heartbeat('c', { hermes_version: '0.21.3', profile: 'work' }),
      heartbeat('d', { hermes_version: '0.19.2' }),
    ]);
    let samples = await harness.samples();
    expect(samples.get(infoIn('0.21.3', 'default'))).toBe(1);
    expect(samples.get(infoIn('0.21.3', 'work'))).toBe(2);
    expect(samples.get(infoIn('0.19.2', 'unknown'))).toBe(1);
    // Three intervals later only the instances that sent another heartbeat are live.
    harness.clock.advance(16);
    await harness.postNdjson([heartbeat('b', { hermes_version: '0.21.3', profile: 'work' })]);
    samples = await harness.samples();
    expect(samples.get(infoIn('0.21.3', 'default'))).toBe(0);
    expect(samples.get(infoIn('0.21.3', 'work'))).toBe(1);
    expect(samples.get(infoIn('0.19.2', 'unknown'))).toBe(0);
  });

  it('moves an instance to its new labels when a heartbeat reports another version', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([heartbeat('a', { hermes_version: '0.21.3', profile: 'default' })]);
    await harness.samples();
    await harness.postNdjson([heartbeat('a', { hermes_version: '0.21.5', profile: 'default' })]);
    const samples = await harness.samples();
    expect(samples.get(infoIn('0.21.3', 'default'))).toBe(0);
    expect(samples.get(infoIn('0.21.5', 'default'))).toBe(1);
  });

  it('counts refused values as deltas per instance, by field, unknown fields as other', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      heartbeat('a', { refused_fields: { turn_exit_reason: 2, model: 1 } }),
      heartbeat('b', { refused_fields: { turn_exit_reason: 5 } }),
      heartbeat('a', { refused_fields: { turn_exit_reason: 3, model: 1, constructor: 4 } }),
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'turn_exit_reason' }))).toBe(8);
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'model' }))).toBe(1);
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'other' }))).toBe(4);
  });

  it('never makes an instance id a label, and no label is called instance', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([heartbeat('ffffffffffffffffffffffffffffffff', { hermes_version: '0.21.3', profile: 'default' })]);
    expect(await harness.scrape()).not.toContain('ffffffffffffffffffffffffffffffff');
    const labelNames = Object.values(CATALOGUE).map((spec): readonly string[] => spec.labelNames);
    expect(labelNames.filter((names) => names.includes('instance'))).toEqual([]);
  });
});
