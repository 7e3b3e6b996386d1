/**
 * The per-hook readers: each hook's content-free fields become one typed event, every value
 * within its bound (the check records the fields that were not), aliases of the envelope
 * variant read with the Hermes name winning, and unknown hooks read as ignored.
 */
import { describe, expect, it } from 'vitest';
import { BOUNDS, BoundCheck } from '../../src/contract/bounds.js';
import { readEventData } from '../../src/contract/events.js';

const read = (name: string, fields: Record<string, unknown>, check = new BoundCheck()) => readEventData(name, fields, check);

describe('readEventData', () => {
  it('reads post_api_request into a successful main call with usage, cost and timings', () => {
    const data = read('post_api_request', {
      provider: 'openrouter',
      model: 'm',
      api_request_id: 'r1',
      turn_id: 't1',
      api_duration: 2.5,
      started_at: 100,
      first_chunk_at: 100.75,
      finish_reason: 'stop',
      usage: { input_tokens: 10, cache_read_tokens: 4, cache_write_tokens: 2, output_tokens: 7, reasoning_tokens: 3, prompt_tokens: 16 },
      cost_usd: 0.25,
      cost_status: 'estimated',
      context_length: 200_000,
      prompt: 'never read',
    });
    expect(data).toEqual({
      type: 'api_attempt_succeeded',
      call: { kind: 'main', provider: 'openrouter', model: 'm', requestId: 'r1', turnId: 't1' },
      durationSeconds: 2.5,
      timeToFirstChunkSeconds: 0.75,
      finishReason: 'stop',
      usage: { input: 10, cacheRead: 4, cacheWrite: 2, output: 7, reasoning: 3, prompt: 16 },
      cost: { usd: 0.25, status: 'estimated' },
      contextLength: 200_000,
    });
  });

  it('derives uncached input from prompt_tokens, and leaves out counts Hermes says were not reported', () => {
    const derived = read('post_api_request', { usage: { prompt_tokens: 100, cache_read_tokens: 30, cache_write_tokens: 20, completion_tokens: 5 } });
    expect(derived).toMatchObject({ usage: { input: 50, cacheRead: 30, cacheWrite: 20, output: 5, prompt: 100 } });
    const unreported = read('post_api_request', {
      usage: { input_tokens: 0, output_tokens: 0, reasoning_tokens: 0, reported_usage_fields: { input_tokens: false, output_tokens: true, reasoning_tokens: false } },
    });
    expect(unreported).toMatchObject({ usage: { input: undefined, output: 0, reasoning: undefined } });
  });

  it('prefers Hermes\' api_duration to the envelope\'s duration_ms, and reads the alias alone', () => {
    expect(read('post_api_request', { api_duration: 1, duration_ms: 9000 })).toMatchObject({ durationSeconds: 1 });
    expect(read('post_api_request', { duration_ms: 1500 })).toMatchObject({ durationSeconds: 1.5 });
    // Auxiliary calls have no envelope alias.
    expect(read('post_auxiliary_call', { duration_ms: 1500 })).toMatchObject({ durationSeconds: undefined });
  });

  it('reads a first chunk before the start as no time to first chunk', () => {
    expect(read('post_api_request', { started_at: 10, first_chunk_at: 9 })).toMatchObject({ timeToFirstChunkSeconds: undefined });
  });

  it('tells a failed auxiliary call from a successful one by its error fields', () => {
    expect(read('post_auxiliary_call', { error_type: 'timeout', provider: 'p' })).toMatchObject({
      type: 'api_attempt_failed',
      call: { kind: 'auxiliary', provider: 'p' },
      errorType: 'timeout',
    });
    expect(read('post_auxiliary_call', { error: {}, provider: 'p' })).toMatchObject({ type: 'api_attempt_succeeded', cost: undefined, contextLength: undefined });
  });

  it('reads api_request_error with its bounded status, retries and flags', () => {
    const check = new BoundCheck();
    const data = read('api_request_error', { reason: 'rate_limit', status_code: 429, retryable: true, retry_count: 2, max_retries: 5000 }, check);
    expect(data).toMatchObject({ type: 'api_attempt_failed', reason: 'rate_limit', statusCode: 429, retryable: true, retryCount: 2, maxRetries: undefined });
    expect(check.fields).toEqual(['retry_count']);
  });

  it('keeps only the leading identifier of turn_exit_reason, `other` for text without one', () => {
    expect(read('on_session_end', { turn_exit_reason: 'local_processing_error(secret text)', completed: false, failed: true })).toMatchObject({
      type: 'turn_finished',
      exitReason: 'local_processing_error',
      completed: false,
      failed: true,
    });
    expect(read('on_session_end', { turn_exit_reason: 'Some free text!' })).toMatchObject({ exitReason: 'other' });
    expect(read('on_session_end', { turn_exit_reason: '' })).toMatchObject({ exitReason: undefined });
  });

  it('reads an interrupt\'s reason only when it is an identifier', () => {
    expect(read('agent_loop_stopped', { platform: 'telegram', reason: 'user_stop' })).toEqual({ type: 'agent_interrupted', platform: 'telegram', reason: 'user_stop' });
    expect(read('agent_loop_stopped', { reason: 'stopped by a long sentence' })).toMatchObject({ reason: 'other' });
  });

  it('gives a tool call the envelope\'s status from its error field when Hermes sends none', () => {
    expect(read('post_tool_call', { tool_name: 'terminal', duration_ms: 250, error: 'boom' })).toMatchObject({ type: 'tool_finished', tool: 'terminal', status: 'error', durationSeconds: 0.25 });
    expect(read('post_tool_call', { error: '' })).toMatchObject({ status: 'ok' });
    expect(read('post_tool_call', { status: 'ok', error: 'ignored' })).toMatchObject({ status: 'ok' });
    expect(read('post_tool_call', {})).toMatchObject({ status: undefined });
  });

  it('reads a turn\'s duration from turn_duration_ms, else from its start and end times', () => {
    expect(read('turn_end', { turn_id: 't', turn_duration_ms: 2000 })).toEqual({ type: 'turn_ended', turnId: 't', durationSeconds: 2 });
    expect(read('turn_end', { turn_start_time_ms: 1000, turn_end_time_ms: 4500 })).toMatchObject({ durationSeconds: 3.5 });
    expect(read('turn_end', { turn_start_time_ms: 4500, turn_end_time_ms: 1000 })).toMatchObject({ durationSeconds: undefined });
  });

  it('reads approvals, with a decision only on the response', () => {
    const fields = { surface: 'cli', pattern_key: 'rm', tool_call_id: 'c', session_key: 's', choice: 'once', decided_by: 'user' };
    expect(read('pre_approval_request', fields)).toMatchObject({ type: 'approval_requested', choice: undefined, decidedBy: undefined, sessionKey: 's' });
    expect(read('post_approval_response', fields)).toMatchObject({ type: 'approval_responded', choice: 'once', decidedBy: 'user' });
  });

  it('reads a heartbeat: drop and refusal totals, a well-formed boot, over-long keys as other', () => {
    const longKey = 'h'.repeat(300);
    const check = new BoundCheck();
    const data = read('plugin_heartbeat', {
      interval_seconds: 30,
      acked_seq: 41,
      boot: 'abc-DEF_0',
      dropped: { post_tool_call: { queue_full: 3 }, [longKey]: { queue_full: 1 }, pre_tool_call: 'not a record' },
      refused_fields: { model: 2, tool_name: BOUNDS.droppedTotal + 1 },
      hermes_version: '0.21.3',
    }, check);
    expect(data).toMatchObject({
      type: 'plugin_heartbeat',
      intervalSeconds: 30,
      ackedSeq: 41,
      boot: 'abc-DEF_0',
      dropped: [
        { hook: 'post_tool_call', reason: 'queue_full', total: 3 },
        { hook: 'other', reason: 'queue_full', total: 1 },
      ],
      refused: [{ field: 'model', total: 2 }],
      hermesVersion: '0.21.3',
    });
    expect(check.fields).toEqual(['dropped_total']);
  });

  it('reads a boot outside its grammar as absent and counted', () => {
    const check = new BoundCheck();
    expect(read('plugin_heartbeat', { boot: 'has space' }, check)).toMatchObject({ boot: undefined });
    expect(read('plugin_heartbeat', { boot: 'x'.repeat(65) }, check)).toMatchObject({ boot: undefined });
    expect(check.fields).toEqual(['boot', 'boot']);
  });

  it('leaves an id or a name past its byte limit absent, counted under its wire name', () => {
    const check = new BoundCheck({ maxIdBytes: 8, maxLabelValueBytes: 4 });
    expect(read('pre_tool_call', { tool_call_id: 'c'.repeat(9), tool_name: 'tool', turn_id: 't'.repeat(8) }, check)).toEqual({
      type: 'tool_started',
      toolCallId: undefined,
      tool: 'tool',
      turnId: 't'.repeat(8),
    });
    expect(read('subagent_start', { child_role: 'reviewer' }, check)).toMatchObject({ role: undefined });
    expect(check.fields).toEqual(['tool_call_id', 'child_role']);
  });

  it('reads unknown and prototype-named hooks as ignored', () => {
    for (const name of ['no_such_hook', 'constructor', '__proto__', 'toString']) expect(read(name, { tool_name: 'x' })).toEqual({ type: 'ignored' });
  });

  it('reads each session hook into its own type', () => {
    expect(read('on_session_start', { session_id: 's', platform: 'cli' })).toEqual({ type: 'session_started', sessionId: 's', platform: 'cli' });
    expect(read('on_session_finalize', { session_id: 's' })).toEqual({ type: 'session_finalized', sessionId: 's', platform: undefined });
    expect(read('on_session_reset', { platform: 'cli' })).toEqual({ type: 'session_reset', sessionId: undefined, platform: 'cli' });
  });

  it('reads the envelope\'s runs and memory writes, bounding their sizes', () => {
    expect(read('agent_end', { stop_reason: 'done', run_duration_ms: 1200 })).toEqual({ type: 'agent_run_finished', stopReason: 'done', durationSeconds: 1.2 });
    const check = new BoundCheck();
    expect(read('memory_write', { memory_provider: 'mem0', action: 'add', size_bytes: BOUNDS.sizeBytes + 1 }, check)).toEqual({
      type: 'memory_written',
      memoryProvider: 'mem0',
      action: 'add',
      sizeBytes: undefined,
    });
    expect(check.fields).toEqual(['size_bytes']);
  });
});
