/** The session recorder: lifecycle counters, envelope session events, active sessions and per-session totals. */
import { describe, expect, it } from 'vitest';
import { SESSION_FAMILIES, SessionRecorder } from '../../../src/correlate/recorders/sessions.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness, START } from '../../support/recorders.js';

function setup(maxSpans = 1000) {
  const harness = recorderHarness({ sessionTtlSeconds: 100, maxSpans });
  return { harness, sessions: new SessionRecorder(harness.context, familiesFor(harness.metrics, SESSION_FAMILIES)) };
}

describe('SessionRecorder', () => {
  it('counts starts, finalizations and resets by platform; active sessions at scrape time', async () => {
    const { harness, sessions } = setup();
    sessions.started({ type: 'session_started', sessionId: 's1', platform: 'cli' }, START);
    sessions.started({ type: 'session_started', sessionId: 's2', platform: 'cli' }, START);
    sessions.reset({ type: 'session_reset', sessionId: 's1', platform: 'cli' });
    sessions.finalized({ type: 'session_finalized', sessionId: 's1', platform: 'cli' }, START);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sessions_started_total', { platform: 'cli' }))).toBe(2);
    expect(samples.get(series('hermes_session_resets_total', { platform: 'cli' }))).toBe(1);
    expect(samples.get(series('hermes_sessions_finalized_total', { platform: 'cli' }))).toBe(1);
    expect(samples.get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(1);
  });

  it('counts a session whose on_session_start Hermes skipped once, from its first pre_llm_call', async () => {
    const { harness, sessions } = setup();
    sessions.started({ type: 'session_started', sessionId: 'seen', platform: 'cli' }, START);
    sessions.turnStarted('seen', 'cli', START + 1);
    // 'skipped' never had its start delivered: its first turn starts it, its second does not.
    sessions.turnStarted('skipped', 'telegram', START + 2);
    sessions.turnStarted('skipped', 'telegram', START + 5);
    let samples = await harness.samples();
    const get = (name: string, platform: string) => samples.get(series(name, { platform }));
    expect([get('hermes_sessions_started_total', 'cli'), get('hermes_sessions_started_total', 'telegram')]).toEqual([1, 1]);
    expect([get('hermes_sidecar_sessions_inferred_total', 'cli'), get('hermes_sidecar_sessions_inferred_total', 'telegram')]).toEqual([undefined, 1]);
    expect([get('hermes_sessions_active', 'cli'), get('hermes_sessions_active', 'telegram')]).toEqual([1, 1]);
    sessions.finalized({ type: 'session_finalized', sessionId: 'skipped', platform: 'telegram' }, START + 12);
    samples = await harness.samples();
    expect(get('hermes_sessions_active', 'telegram')).toBe(0);
    // Observed like any session: two turns, ten seconds from its first turn to its finalization.
    expect(get('hermes_session_turns_sum', 'telegram')).toBe(2);
    expect(get('hermes_session_duration_seconds_sum', 'telegram')).toBe(10);
    expect(samples.get(series('hermes_sidecar_sessions_unobserved_total', { reason: 'unstarted' })) ?? 0).toBe(0);
  });

  it('expires an idle session after its TTL unless activity touched it', async () => {
    const { harness, sessions } = setup();
    sessions.started({ type: 'session_started', sessionId: 'idle', platform: 'cli' }, START);
    sessions.started({ type: 'session_started', sessionId: 'busy', platform: 'cli' }, START);
    harness.advance(60);
    sessions.touch('busy');
    harness.advance(60);
    harness.sweep();
    expect((await harness.samples()).get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(1);
    // Expiry is not an eviction.
    expect(harness.evictions).toEqual([]);
  });

  it('counts a session pushed out of a full table as a sessions eviction', () => {
    const { harness, sessions } = setup(1);
    sessions.started({ type: 'session_started', sessionId: 's1', platform: 'cli' }, START);
    sessions.started({ type: 'session_started', sessionId: 's2', platform: 'cli' }, START);
    expect(harness.evictions).toEqual(['sessions']);
  });

  it('counts envelope session events, other when unlisted', async () => {
    const { harness, sessions } = setup();
    sessions.lifecycleEvent('created');
    sessions.lifecycleEvent('teleported');
    sessions.lifecycleEvent(undefined);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_session_events_total', { event: 'created' }))).toBe(1);
    expect(samples.get(series('hermes_session_events_total', { event: 'other' }))).toBe(1);
    expect(samples.get(series('hermes_session_events_total', { event: 'unknown' }))).toBe(1);
  });

  describe('per-session totals', () => {
    const started = (sessionId: string, platform = 'cli') => ({ type: 'session_started', sessionId, platform }) as const;
    const finalized = (sessionId: string | undefined, platform?: string) => ({ type: 'session_finalized', sessionId, platform }) as const;
    const hist = (samples: Map<string, number> | ReadonlyMap<string, number>, name: string, part: string, labels: Record<string, string> = { platform: 'cli' }) =>
      samples.get(series(`${name}_${part}`, labels));
    const bucket = (samples: ReadonlyMap<string, number>, name: string, le: string) => samples.get(series(`${name}_bucket`, { le, platform: 'cli' }));
    const unobserved = (samples: ReadonlyMap<string, number>, reason: string) => samples.get(series('hermes_sidecar_sessions_unobserved_total', { reason }));

    it("observes a finalized session's turns, tokens, cost and duration, once each", async () => {
      const { harness, sessions } = setup();
      sessions.started(started('s1'), START);
      for (let turn = 0; turn < 3; turn += 1) sessions.turnStarted('s1', 'cli', START);
      // prompt_tokens 1000 is the whole prompt, plus 50 output: 1050.
      sessions.callSucceeded('s1', { priced: true, pricing: 'hermes', usd: 0.25 }, { input: 100, cacheRead: 900, output: 50, prompt: 1000 });
      // No prompt total: input 200 + cache_write 30, plus 20 output: 250. A subscription costs 0.
      sessions.callSucceeded('s1', { priced: true, pricing: 'included', usd: 0 }, { input: 200, cacheWrite: 30, output: 20 });
      // Priced from the price table, no usage: cost only.
      sessions.callSucceeded('s1', { priced: true, pricing: 'config', usd: 0.5 }, undefined);
      // Calls of no open session change nothing.
      sessions.callSucceeded('s2', { priced: true, pricing: 'hermes', usd: 8 }, { output: 1_000 });
      sessions.callSucceeded(undefined, { priced: false, reason: 'no_price' }, { output: 1_000 });
      sessions.turnStarted('s2', 'cli', START);
      harness.advance(90);
      sessions.finalized(finalized('s1', 'cli'), START + 90);
      // A second finalization of the same session finds it closed: its totals are not observed twice.
      sessions.finalized(finalized('s1', 'cli'), START + 100);
      const samples = await harness.samples();
      expect(hist(samples, 'hermes_session_turns', 'sum')).toBe(3);
      expect(hist(samples, 'hermes_session_turns', 'count')).toBe(1);
      expect(bucket(samples, 'hermes_session_turns', '2')).toBe(0);
      expect(bucket(samples, 'hermes_session_turns', '3')).toBe(1);
      expect(hist(samples, 'hermes_session_tokens', 'sum')).toBe(1300);
      expect(bucket(samples, 'hermes_session_tokens', '1024')).toBe(0);
      expect(bucket(samples, 'hermes_session_tokens', '4096')).toBe(1);
      expect(hist(samples, 'hermes_session_cost_usd', 'sum')).toBe(0.75);
      expect(hist(samples, 'hermes_session_cost_usd', 'count')).toBe(1);
      expect(bucket(samples, 'hermes_session_cost_usd', '0.5')).toBe(0);
      expect(bucket(samples, 'hermes_session_cost_usd', '1')).toBe(1);
      expect(hist(samples, 'hermes_session_duration_seconds', 'sum')).toBe(90);
      expect(bucket(samples, 'hermes_session_duration_seconds', '60')).toBe(0);
      expect(bucket(samples, 'hermes_session_duration_seconds', '120')).toBe(1);
      expect(samples.get(series('hermes_sessions_finalized_total', { platform: 'cli' }))).toBe(2);
      // The second finalization had no open session to observe.
      expect(unobserved(samples, 'unstarted')).toBe(1);
      for (const reason of ['expired', 'evicted', 'subagent', 'unpriced']) expect(unobserved(samples, reason)).toBe(0);
    });

    it('leaves a session with an unpriced call out of the cost histogram only, and counts it', async () => {
      const { harness, sessions } = setup();
      sessions.started(started('s1'), START);
      sessions.turnStarted('s1', 'cli', START);
      sessions.callSucceeded('s1', { priced: true, pricing: 'hermes', usd: 0.25 }, { input: 10, output: 5 });
      sessions.callSucceeded('s1', { priced: false, reason: 'no_price' }, { input: 20, output: 5 });
      sessions.finalized(finalized('s1', 'cli'), START + 30);
      const samples = await harness.samples();
      expect(hist(samples, 'hermes_session_cost_usd', 'count')).toBeUndefined();
      expect(unobserved(samples, 'unpriced')).toBe(1);
      expect(hist(samples, 'hermes_session_tokens', 'sum')).toBe(40);
      expect(hist(samples, 'hermes_session_turns', 'sum')).toBe(1);
      expect(hist(samples, 'hermes_session_duration_seconds', 'sum')).toBe(30);
    });

    it('counts, and never observes, sessions that expire, are evicted, belong to a subagent or were never seen to start', async () => {
      const { harness, sessions } = setup(2);
      sessions.started(started('idle'), START);
      sessions.started(started('child'), START);
      sessions.turnStarted('child', 'cli', START);
      // A subagent's session ends with its subagent_stop, and leaves the active sessions.
      sessions.subagentStopped('child');
      sessions.subagentStopped('child');
      sessions.subagentStopped('not-a-session');
      sessions.subagentStopped(undefined);
      expect((await harness.samples()).get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(1);
      harness.advance(101);
      harness.sweep();
      sessions.started(started('a'), START + 101);
      sessions.started(started('b'), START + 101);
      // The table holds two: the third pushes out the least recently active.
      sessions.started(started('c'), START + 101);
      sessions.finalized(finalized('idle', 'cli'), START + 102);
      sessions.finalized(finalized(undefined, 'cli'), START + 102);
      const samples = await harness.samples();
      expect(unobserved(samples, 'subagent')).toBe(1);
      expect(unobserved(samples, 'expired')).toBe(1);
      expect(unobserved(samples, 'evicted')).toBe(1);
      expect(unobserved(samples, 'unstarted')).toBe(2);
      expect(unobserved(samples, 'unpriced')).toBe(0);
      expect(harness.evictions).toEqual(['sessions']);
      expect(samples.get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(2);
      for (const name of ['hermes_session_turns', 'hermes_session_tokens', 'hermes_session_cost_usd', 'hermes_session_duration_seconds']) {
        expect(hist(samples, name, 'count')).toBeUndefined();
      }
    });

    it('keeps what an open session spent when Hermes starts it again (a rebuilt system prompt)', async () => {
      const { harness, sessions } = setup();
      sessions.started(started('s1'), START);
      sessions.turnStarted('s1', 'cli', START);
      sessions.callSucceeded('s1', { priced: true, pricing: 'hermes', usd: 0.5 }, { output: 10 });
      harness.advance(30);
      sessions.started(started('s1', 'telegram'), START + 30);
      sessions.turnStarted('s1', 'cli', START);
      sessions.callSucceeded('s1', { priced: true, pricing: 'hermes', usd: 0.25 }, { output: 6 });
      expect((await harness.samples()).get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(1);
      // A finalization without a platform observes under the platform the session started with.
      sessions.finalized(finalized('s1'), START + 60);
      const samples = await harness.samples();
      expect(samples.get(series('hermes_sessions_started_total', { platform: 'cli' }))).toBe(1);
      expect(samples.get(series('hermes_sessions_started_total', { platform: 'telegram' }))).toBe(1);
      expect(samples.get(series('hermes_sessions_finalized_total', { platform: 'unknown' }))).toBe(1);
      expect(samples.get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(0);
      expect(samples.get(series('hermes_sessions_active', { platform: 'telegram' }))).toBeUndefined();
      expect(hist(samples, 'hermes_session_turns', 'sum')).toBe(2);
      expect(hist(samples, 'hermes_session_tokens', 'sum')).toBe(16);
      expect(hist(samples, 'hermes_session_cost_usd', 'sum')).toBe(0.75);
      expect(hist(samples, 'hermes_session_duration_seconds', 'sum')).toBe(60);
    });

    it('counts a session duration past the 7-day bound as rejected and observes the rest', async () => {
      const { harness, sessions } = setup();
      sessions.started(started('s1'), START);
      sessions.finalized(finalized('s1', 'cli'), START + 8 * 86_400);
      const samples = await harness.samples();
      expect(harness.rejected).toEqual(['duration']);
      expect(hist(samples, 'hermes_session_duration_seconds', 'count')).toBeUndefined();
      expect(hist(samples, 'hermes_session_turns', 'sum')).toBe(0);
      expect(hist(samples, 'hermes_session_cost_usd', 'sum')).toBe(0);
    });
  });
});
