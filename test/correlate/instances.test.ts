import { describe, expect, it } from 'vitest';
import { PluginInstances } from '../../src/correlate/instances.js';
import { FakeClock } from '../support/sidecar.js';

const build = (options: Partial<{ ttlSeconds: number; maxInstances: number }> = {}) => {
  const clock = new FakeClock(1000);
  let evictions = 0;
  const instances = new PluginInstances({
    clock: clock.read,
    ttlSeconds: options.ttlSeconds ?? 60,
    maxInstances: options.maxInstances ?? 10,
    onEvict: () => {
      evictions += 1;
    },
  });
  return { clock, instances, evictions: () => evictions };
};

describe('sequence tracking', () => {
  it('applies each seq once, counts gaps as lost and repeats as duplicates', () => {
    const { instances } = build();
    const verdicts = [1, 2, 3, 3, 2, 6, 7, 7, 10].map((seq) => instances.sequence('a', seq));
    expect(verdicts).toEqual([
      { apply: true, lost: 0 },
      { apply: true, lost: 0 },
      { apply: true, lost: 0 },
      { apply: false, lost: 0 },
      { apply: false, lost: 0 },
      { apply: true, lost: 2 },
      { apply: true, lost: 0 },
      { apply: false, lost: 0 },
      { apply: true, lost: 2 },
    ]);
  });

  it('starts a new instance (a restarted plugin) without counting anything lost', () => {
    const { instances } = build();
    instances.sequence('old', 500);
    expect(instances.sequence('new', 1)).toEqual({ apply: true, lost: 0 });
    expect(instances.sequence('new', 2)).toEqual({ apply: true, lost: 0 });
    // The first sequence number seen for an instance is its baseline, whatever it is
    // (the sidecar may have restarted while the plugin kept counting).
    expect(instances.sequence('seen-late', 9000)).toEqual({ apply: true, lost: 0 });
  });

  it('keeps instances apart', () => {
    const { instances } = build();
    instances.sequence('a', 1);
    instances.sequence('b', 1);
    expect(instances.sequence('a', 2)).toEqual({ apply: true, lost: 0 });
    expect(instances.sequence('b', 1)).toEqual({ apply: false, lost: 0 });
  });

  it('forgets idle instances after the TTL, and evicts the least recently seen when full', () => {
    const { clock, instances, evictions } = build({ ttlSeconds: 60, maxInstances: 2 });
    instances.sequence('a', 5);
    clock.advance(30);
    instances.sequence('b', 1);
    clock.advance(31);
    instances.sweep();
    expect(instances.size).toBe(1);
    expect(instances.sequence('a', 1)).toEqual({ apply: true, lost: 0 });
    instances.sequence('c', 1);
    expect(evictions()).toBe(1);
    expect(instances.size).toBe(2);
  });
});

describe('heartbeat acked_seq', () => {
  it('gives a newly seen instance its baseline, so a gap after it is counted (a restarted sidecar)', () => {
    const { instances } = build();
    instances.heartbeat('a', { ackedSeq: 100, dropped: [] });
    expect(instances.sequence('a', 104)).toEqual({ apply: true, lost: 3 });
    expect(instances.sequence('a', 100)).toEqual({ apply: false, lost: 0 });
  });

  it('never moves a known instance backwards', () => {
    const { instances } = build();
    instances.sequence('a', 50);
    instances.heartbeat('a', { ackedSeq: 40, dropped: [] });
    expect(instances.sequence('a', 51)).toEqual({ apply: true, lost: 0 });
  });

  it('starts counting from 0 for a plugin that never got an acknowledgement', () => {
    const { instances } = build();
    instances.heartbeat('a', { ackedSeq: 0, dropped: [] });
    expect(instances.sequence('a', 6)).toEqual({ apply: true, lost: 5 });
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
    instances.heartbeat('a', { intervalSeconds: 5, dropped: [{ hook: 'h', reason: 'queue_full', total: 4 }] });
    expect(instances.heartbeat('b', { intervalSeconds: 5, dropped: [{ hook: 'h', reason: 'queue_full', total: 4 }] })).toEqual([{ hook: 'h', reason: 'queue_full', delta: 4 }]);
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
