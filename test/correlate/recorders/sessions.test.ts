/** The session recorder: lifecycle counters, envelope session events, and active sessions. */
import { describe, expect, it } from 'vitest';
import { SESSION_FAMILIES, SessionRecorder } from '../../../src/correlate/recorders/sessions.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

function setup(maxSpans = 1000) {
  const harness = recorderHarness({ sessionTtlSeconds: 100, maxSpans });
  return { harness, sessions: new SessionRecorder(harness.context, familiesFor(harness.metrics, SESSION_FAMILIES)) };
}

describe('SessionRecorder', () => {
  it('counts starts, finalizations and resets by platform; active sessions at scrape time', async () => {
    const { harness, sessions } = setup();
    sessions.started({ type: 'session_started', sessionId: 's1', platform: 'cli' });
    sessions.started({ type: 'session_started', sessionId: 's2', platform: 'cli' });
    sessions.reset({ type: 'session_reset', sessionId: 's1', platform: 'cli' });
    sessions.finalized({ type: 'session_finalized', sessionId: 's1', platform: 'cli' });
    sessions.collect();
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sessions_started_total', { platform: 'cli' }))).toBe(2);
    expect(samples.get(series('hermes_session_resets_total', { platform: 'cli' }))).toBe(1);
    expect(samples.get(series('hermes_sessions_finalized_total', { platform: 'cli' }))).toBe(1);
    expect(samples.get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(1);
  });

  it('expires an idle session after its TTL unless activity touched it', async () => {
    const { harness, sessions } = setup();
    sessions.started({ type: 'session_started', sessionId: 'idle', platform: 'cli' });
    sessions.started({ type: 'session_started', sessionId: 'busy', platform: 'cli' });
    harness.advance(60);
    sessions.touch('busy');
    harness.advance(60);
    harness.sweep();
    sessions.collect();
    expect((await harness.samples()).get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(1);
    // Expiry is not an eviction.
    expect(harness.evictions).toEqual([]);
  });

  it('counts a session pushed out of a full table as a sessions eviction', () => {
    const { harness, sessions } = setup(1);
    sessions.started({ type: 'session_started', sessionId: 's1', platform: 'cli' });
    sessions.started({ type: 'session_started', sessionId: 's2', platform: 'cli' });
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
});
