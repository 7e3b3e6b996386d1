/** The turn recorder: starts, finishes by outcome and exit reason, durations, calls per turn. */
import { describe, expect, it } from 'vitest';
import { BOUNDS } from '../../../src/contract/bounds.js';
import { TURN_FAMILIES, TurnRecorder } from '../../../src/correlate/recorders/turns.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness, START } from '../../support/recorders.js';

function setup() {
  const harness = recorderHarness();
  return { harness, turns: new TurnRecorder(harness.context, familiesFor(harness.metrics, TURN_FAMILIES)) };
}

describe('TurnRecorder', () => {
  it('times a turn from pre_llm_call to on_session_end and counts its calls', async () => {
    const { harness, turns } = setup();
    turns.started({ type: 'turn_started', turnId: 't1', sessionId: 's1', platform: 'cli', model: 'gpt-x' }, START);
    turns.countApiAttempt('t1');
    turns.countApiAttempt('t1');
    turns.countToolCall('t1');
    turns.finished({ type: 'turn_finished', turnId: 't1', platform: 'cli', model: 'gpt-x', completed: true, exitReason: 'text_response' }, START + 12.5);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_turns_started_total', { platform: 'cli', model: 'gpt-x' }))).toBe(1);
    expect(samples.get(series('hermes_turns_finished_total', { platform: 'cli', model: 'gpt-x', outcome: 'completed', exit_reason: 'text_response' }))).toBe(1);
    expect(samples.get(series('hermes_turn_duration_seconds_sum', { platform: 'cli', outcome: 'completed' }))).toBe(12.5);
    expect(samples.get(series('hermes_turn_api_calls_sum', { platform: 'cli' }))).toBe(2);
    expect(samples.get(series('hermes_turn_tool_calls_sum', { platform: 'cli' }))).toBe(1);
  });

  it('names the session of an open turn for the call it counts, and none once the turn ends', () => {
    const { turns } = setup();
    turns.started({ type: 'turn_started', turnId: 't1', sessionId: 's1', platform: 'cli' }, START);
    turns.started({ type: 'turn_started', turnId: 't2', platform: 'cli' }, START);
    // A turn known only from its calls has no session.
    expect(turns.countApiAttempt('t3')).toBeUndefined();
    expect(turns.countApiAttempt('t1')).toBe('s1');
    expect(turns.countApiAttempt('t2')).toBeUndefined();
    expect(turns.countApiAttempt('t3')).toBeUndefined();
    expect(turns.countApiAttempt(undefined)).toBeUndefined();
    turns.finished({ type: 'turn_finished', turnId: 't1', completed: true }, START + 1);
    // A call after its turn ended opens the turn again, without the session.
    expect(turns.countApiAttempt('t1')).toBeUndefined();
  });

  it('tells the outcome from the flags: failed over interrupted over completed, incomplete, unknown', async () => {
    const { harness, turns } = setup();
    const finished = { type: 'turn_finished', platform: 'cli', model: 'm' } as const;
    turns.finished({ ...finished, failed: true, interrupted: true }, START);
    turns.finished({ ...finished, interrupted: true, completed: true }, START);
    turns.finished({ ...finished, completed: false }, START);
    turns.finished(finished, START);
    const samples = await harness.samples();
    const count = (outcome: string) => samples.get(series('hermes_turns_finished_total', { platform: 'cli', model: 'm', outcome, exit_reason: 'unknown' }));
    expect([count('failed'), count('interrupted'), count('incomplete'), count('unknown')]).toEqual([1, 1, 1, 1]);
    // No turn was open: nothing is timed.
    expect([...samples.keys()].filter((key) => key.startsWith('hermes_turn_duration_seconds_count'))).toEqual([]);
  });

  it("ends a session's open turns when the CLI exits with a reason and no turn id", async () => {
    const { harness, turns } = setup();
    turns.started({ type: 'turn_started', turnId: 't1', sessionId: 's1', platform: 'cli' }, START);
    turns.started({ type: 'turn_started', turnId: 't2', sessionId: 's1', platform: 'cli' }, START + 1);
    turns.started({ type: 'turn_started', turnId: 't3', sessionId: 's2', platform: 'cli' }, START);
    turns.finished({ type: 'turn_finished', sessionId: 's1', platform: 'cli', interrupted: true, sessionExitReason: 'user_exit' }, START + 5);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_turns_finished_total', { platform: 'cli', model: 'unknown', outcome: 'interrupted', exit_reason: 'user_exit' }))).toBe(2);
    expect(samples.get(series('hermes_turn_duration_seconds_sum', { platform: 'cli', outcome: 'interrupted' }))).toBe(9);
  });

  it('observes a turn whose end precedes its start as 0 s, and counts one past the duration bound as rejected', async () => {
    const { harness, turns } = setup();
    turns.started({ type: 'turn_started', turnId: 't1', platform: 'cli' }, START);
    turns.finished({ type: 'turn_finished', turnId: 't1', platform: 'cli', completed: true }, START - 10);
    turns.started({ type: 'turn_started', turnId: 't2', platform: 'cli' }, START);
    turns.finished({ type: 'turn_finished', turnId: 't2', platform: 'cli', completed: true }, START + BOUNDS.durationSeconds + 1);
    expect(harness.rejected).toEqual(['duration']);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_turn_duration_seconds_count', { platform: 'cli', outcome: 'completed' }))).toBe(1);
    expect(samples.get(series('hermes_turn_duration_seconds_sum', { platform: 'cli', outcome: 'completed' }))).toBe(0);
    expect(samples.get(series('hermes_turns_finished_total', { platform: 'cli', model: 'unknown', outcome: 'completed', exit_reason: 'unknown' }))).toBe(2);
  });

  it('takes the duration of an envelope turn_end as sent', async () => {
    const { harness, turns } = setup();
    turns.ended({ type: 'turn_ended', turnId: 't9', durationSeconds: 3 }, START);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_turns_finished_total', { platform: 'unknown', model: 'unknown', outcome: 'unknown', exit_reason: 'unknown' }))).toBe(1);
    expect(samples.get(series('hermes_turn_duration_seconds_sum', { platform: 'unknown', outcome: 'unknown' }))).toBe(3);
  });
});
