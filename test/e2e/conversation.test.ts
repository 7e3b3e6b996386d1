/**
 * The realistic fixture conversation (test/fixtures/conversation.jsonl: two turns with a
 * rate-limit retry, an auxiliary call, ok/error/blocked/timeout tools, approvals on each
 * surface, a subagent, session lifecycle, ignored and unknown hooks) and the envelope-variant
 * stream (test/fixtures/envelope.jsonl), posted over HTTP, with exact values for every family.
 */
import { describe, expect, it } from 'vitest';
import { samplesOf, series } from '../support/exposition.js';
import { readJsonl, startTestSidecar } from '../support/sidecar.js';

const M = 'anthropic/claude-sonnet-4.6';
const main = { kind: 'main', provider: 'openrouter', model: M };
const aux = { kind: 'auxiliary', provider: 'openrouter', model: 'google/gemini-3.5-flash' };

/** Histogram _sum and _count lines. */
function histogram(name: string, labels: Record<string, string>, sum: number, count: number): [string, number][] {
  return [
    [series(`${name}_sum`, labels), sum],
    [series(`${name}_count`, labels), count],
  ];
}

const CONVERSATION_EXPECTED: [string, number][] = [
  [series('hermes_api_requests_total', { ...main, outcome: 'error' }), 2],
  [series('hermes_api_requests_total', { ...main, outcome: 'success' }), 2],
  [series('hermes_api_requests_total', { ...aux, outcome: 'success' }), 1],
  ...histogram('hermes_api_request_duration_seconds', { ...main, outcome: 'error' }, 1.507, 2),
  ...histogram('hermes_api_request_duration_seconds', { ...main, outcome: 'success' }, 9.342, 2),
  ...histogram('hermes_api_request_duration_seconds', { ...aux, outcome: 'success' }, 0.912, 1),
  // Its one streamed success follows a failed attempt of the same call, and Hermes times first chunks from the
  // call's first attempt: not a time to first chunk (hermes_sidecar_time_to_first_chunk_unmeasured_total).
  // The streamed call: 412 output tokens after its first chunk at 3.5 s of 6.842 s (the other call did not stream).
  ...histogram('hermes_api_output_tokens_per_second', main, Math.round((412 / (6.842 - 3.5)) * 1e6) / 1e6, 1),
  // Flat kwargs carry Hermes' error dict: only its type (the exception class) is read.
  [series('hermes_api_errors_total', { ...main, reason: 'rate_limit', error_class: 'RateLimitError', status_code: '429', retryable: 'true' }), 1],
  [series('hermes_api_errors_total', { ...main, reason: 'context_overflow', error_class: 'BadRequestError', status_code: '400', retryable: 'false' }), 1],
  [series('hermes_api_retries_total', { ...main, reason: 'rate_limit' }), 1],
  [series('hermes_api_retries_exhausted_total', { ...main, reason: 'context_overflow' }), 1],
  [series('hermes_tokens_total', { ...main, token_type: 'input' }), 1504],
  [series('hermes_tokens_total', { ...main, token_type: 'cache_read' }), 38030],
  [series('hermes_tokens_total', { ...main, token_type: 'cache_write' }), 952],
  [series('hermes_tokens_total', { ...main, token_type: 'output' }), 562],
  [series('hermes_tokens_total', { ...main, token_type: 'reasoning' }), 64],
  [series('hermes_tokens_total', { ...aux, token_type: 'input' }), 310],
  [series('hermes_tokens_total', { ...aux, token_type: 'cache_read' }), 0],
  [series('hermes_tokens_total', { ...aux, token_type: 'cache_write' }), 0],
  [series('hermes_tokens_total', { ...aux, token_type: 'output' }), 9],
  [series('hermes_tokens_total', { ...aux, token_type: 'reasoning' }), 0],
  ...histogram('hermes_api_request_prompt_tokens', main, 40486, 2),
  ...histogram('hermes_api_request_prompt_tokens', aux, 310, 1),
  [series('hermes_api_finish_reasons_total', { ...main, finish_reason: 'tool_calls' }), 1],
  [series('hermes_api_finish_reasons_total', { ...main, finish_reason: 'stop' }), 1],
  [series('hermes_api_finish_reasons_total', { ...aux, finish_reason: 'stop' }), 1],
  [series('hermes_api_requests_in_flight', { kind: 'main', provider: 'openrouter' }), 0],
  [series('hermes_api_requests_in_flight', { kind: 'auxiliary', provider: 'openrouter' }), 0],
  // No cost_usd (the plugin adds it) and no price table: unpriced, not guessed.
  [series('hermes_cost_unpriced_requests_total', { ...main, reason: 'no_price' }), 2],
  [series('hermes_cost_unpriced_requests_total', { ...aux, reason: 'no_price' }), 1],

  [series('hermes_turns_started_total', { platform: 'cli', model: M }), 2],
  [series('hermes_turns_finished_total', { platform: 'cli', model: M, outcome: 'completed', exit_reason: 'text_response' }), 1],
  [series('hermes_turns_finished_total', { platform: 'cli', model: M, outcome: 'failed', exit_reason: 'max_iterations_reached' }), 1],
  ...histogram('hermes_turn_duration_seconds', { platform: 'cli', outcome: 'completed' }, 20, 1),
  ...histogram('hermes_turn_duration_seconds', { platform: 'cli', outcome: 'failed' }, 480, 1),
  ...histogram('hermes_turn_api_calls', { platform: 'cli' }, 4, 2),
  ...histogram('hermes_turn_tool_calls', { platform: 'cli' }, 4, 2),

  [series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }), 1],
  [series('hermes_tool_calls_total', { tool: 'read_file', status: 'error' }), 1],
  [series('hermes_tool_calls_total', { tool: 'terminal', status: 'blocked' }), 1],
  [series('hermes_tool_calls_total', { tool: 'terminal', status: 'timeout' }), 1],
  ...histogram('hermes_tool_call_duration_seconds', { tool: 'terminal', status: 'ok' }, 3.412, 1),
  ...histogram('hermes_tool_call_duration_seconds', { tool: 'read_file', status: 'error' }, 0.012, 1),
  ...histogram('hermes_tool_call_duration_seconds', { tool: 'terminal', status: 'blocked' }, 0, 1),
  ...histogram('hermes_tool_call_duration_seconds', { tool: 'terminal', status: 'timeout' }, 420, 1),
  [series('hermes_tool_errors_total', { tool: 'read_file', error_type: 'tool_error' }), 1],
  [series('hermes_tool_errors_total', { tool: 'terminal', error_type: 'plugin_block' }), 1],
  [series('hermes_tool_errors_total', { tool: 'terminal', error_type: 'tool_timeout' }), 1],
  [series('hermes_tool_calls_in_flight', { tool: 'terminal' }), 0],
  [series('hermes_tool_calls_in_flight', { tool: 'read_file' }), 0],
  [series('hermes_tool_calls_in_flight', { tool: 'web_search' }), 1],

  [series('hermes_approval_requests_total', { surface: 'cli', pattern_key: 'rm_rf' }), 1],
  [series('hermes_approval_requests_total', { surface: 'gateway', pattern_key: 'sudo' }), 1],
  [series('hermes_approval_requests_total', { surface: 'smart', pattern_key: 'rm_rf' }), 1],
  [series('hermes_approval_decisions_total', { surface: 'cli', pattern_key: 'rm_rf', choice: 'once' }), 1],
  [series('hermes_approval_decisions_total', { surface: 'gateway', pattern_key: 'sudo', choice: 'deny' }), 1],
  [series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm_rf', choice: 'smart_approve' }), 1],
  ...histogram('hermes_approval_wait_seconds', { surface: 'cli', choice: 'once' }, 2, 1),
  ...histogram('hermes_approval_wait_seconds', { surface: 'gateway', choice: 'deny' }, 6, 1),
  ...histogram('hermes_approval_wait_seconds', { surface: 'smart', choice: 'smart_approve' }, 0.5, 1),
  [series('hermes_approvals_pending', { surface: 'cli' }), 0],
  [series('hermes_approvals_pending', { surface: 'gateway' }), 0],
  [series('hermes_approvals_pending', { surface: 'smart' }), 0],

  [series('hermes_sessions_started_total', { platform: 'cli' }), 1],
  [series('hermes_sessions_finalized_total', { platform: 'cli' }), 1],
  [series('hermes_session_resets_total', { platform: 'telegram' }), 1],
  [series('hermes_sessions_active', { platform: 'cli' }), 0],
  // The finalized session: turns T1 and T2; prompt + output of its two calls (20186 + 412) + (20300 + 150)
  // (the auxiliary call names no turn, so no session); on_session_start at 1000, finalized at 1582.
  // Not priced (no cost_usd, no price table): not in hermes_session_cost_usd.
  ...histogram('hermes_session_turns', { platform: 'cli' }, 2, 1),
  ...histogram('hermes_session_tokens', { platform: 'cli' }, 20186 + 412 + 20300 + 150, 1),
  ...histogram('hermes_session_duration_seconds', { platform: 'cli' }, 1582 - 1000, 1),

  [series('hermes_subagents_started_total', { role: 'leaf' }), 1],
  [series('hermes_subagents_finished_total', { role: 'leaf', status: 'completed' }), 1],
  ...histogram('hermes_subagent_duration_seconds', { role: 'leaf', status: 'completed' }, 41.27, 1),
  [series('hermes_subagents_active', { role: 'leaf' }), 0],
];

const ENVELOPE_EXPECTED: [string, number][] = [
  [series('hermes_api_requests_total', { kind: 'main', provider: 'anthropic', model: 'claude-opus-4', outcome: 'success' }), 1],
  [series('hermes_api_requests_total', { kind: 'main', provider: 'anthropic', model: 'claude-opus-4', outcome: 'error' }), 1],
  ...histogram('hermes_api_request_duration_seconds', { kind: 'main', provider: 'anthropic', model: 'claude-opus-4', outcome: 'success' }, 2.5, 1),
  ...histogram('hermes_api_request_duration_seconds', { kind: 'main', provider: 'anthropic', model: 'claude-opus-4', outcome: 'error' }, 0.8, 1),
  [series('hermes_api_errors_total', { kind: 'main', provider: 'anthropic', model: 'claude-opus-4', reason: 'unknown', error_class: 'OverloadedError', status_code: 'none', retryable: 'unknown' }), 1],
  [series('hermes_cost_unpriced_requests_total', { kind: 'main', provider: 'anthropic', model: 'claude-opus-4', reason: 'no_price' }), 1],
  [series('hermes_tokens_total', { kind: 'main', provider: 'anthropic', model: 'claude-opus-4', token_type: 'input' }), 100],
  [series('hermes_tokens_total', { kind: 'main', provider: 'anthropic', model: 'claude-opus-4', token_type: 'output' }), 50],
  [series('hermes_api_finish_reasons_total', { kind: 'main', provider: 'anthropic', model: 'claude-opus-4', finish_reason: 'unknown' }), 1],
  [series('hermes_api_requests_in_flight', { kind: 'main', provider: 'anthropic' }), 0],
  [series('hermes_tool_calls_total', { tool: 'memory', status: 'ok' }), 1],
  [series('hermes_tool_calls_total', { tool: 'terminal', status: 'error' }), 1],
  ...histogram('hermes_tool_call_duration_seconds', { tool: 'memory', status: 'ok' }, 0.04, 1),
  ...histogram('hermes_tool_call_duration_seconds', { tool: 'terminal', status: 'error' }, 1.5, 1),
  [series('hermes_tool_errors_total', { tool: 'terminal', error_type: 'unknown' }), 1],
  [series('hermes_tool_calls_in_flight', { tool: 'memory' }), 0],
  [series('hermes_tool_calls_in_flight', { tool: 'terminal' }), 0],
  [series('hermes_memory_writes_total', { memory_provider: 'builtin', action: 'append' }), 2],
  [series('hermes_memory_write_bytes_total', { memory_provider: 'builtin', action: 'append' }), 768],
  [series('hermes_turns_finished_total', { platform: 'unknown', model: 'unknown', outcome: 'unknown', exit_reason: 'unknown' }), 1],
  ...histogram('hermes_turn_duration_seconds', { platform: 'unknown', outcome: 'unknown' }, 12.5, 1),
  [series('hermes_session_events_total', { event: 'created' }), 1],
  [series('hermes_session_events_total', { event: 'resumed' }), 1],
  [series('hermes_session_events_total', { event: 'other' }), 1],
  [series('hermes_agent_runs_total', { stop_reason: 'completed' }), 1],
  ...histogram('hermes_agent_run_duration_seconds', { stop_reason: 'completed' }, 13, 1),
];

const AGENT_PREFIXES = [
  'hermes_api_',
  'hermes_tokens_',
  'hermes_cost_',
  'hermes_turn',
  'hermes_tool_',
  'hermes_approval',
  'hermes_session',
  'hermes_subagent',
  'hermes_agent_',
  'hermes_memory_',
];

/** Agent samples without bucket lines (buckets are checked separately), values rounded to 1e-6 against float noise in epoch-second differences. */
function agentSamples(all: Map<string, number>): Map<string, number> {
  const agent = samplesOf(all, ...AGENT_PREFIXES);
  return new Map(
    [...agent].filter(([key]) => !key.includes('_bucket{')).map(([key, value]) => [key, Math.round(value * 1e6) / 1e6]),
  );
}

describe('fixture conversation, flat kwargs shape', () => {
  it('moves exactly the documented agent series', async () => {
    const harness = startTestSidecar();
    const response = await harness.postNdjson(readJsonl('conversation.jsonl'));
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ accepted: 37, rejected: 0, errors: [] });
    const samples = agentSamples(new Map(await harness.samples()));
    expect(Object.fromEntries(samples)).toEqual(Object.fromEntries(CONVERSATION_EXPECTED));
  });

  it('fills histogram buckets at the docs/metrics.md bounds', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson(readJsonl('conversation.jsonl'));
    const samples = await harness.samples();
    const bucket = (name: string, le: string, labels: Record<string, string>) =>
      samples.get(series(`${name}_bucket`, { le, ...labels }));
    // api_duration 1.207 and 0.3 (errors): 0.3 ≤ 0.32 < 1.207 ≤ 1.28
    expect(bucket('hermes_api_request_duration_seconds', '0.32', { ...main, outcome: 'error' })).toBe(1);
    expect(bucket('hermes_api_request_duration_seconds', '1.28', { ...main, outcome: 'error' })).toBe(2);
    // tool timeout 420 s lies between 300 and 600
    expect(bucket('hermes_tool_call_duration_seconds', '300', { tool: 'terminal', status: 'timeout' })).toBe(0);
    expect(bucket('hermes_tool_call_duration_seconds', '600', { tool: 'terminal', status: 'timeout' })).toBe(1);
    // turns made 3 and 1 API attempts
    expect(bucket('hermes_turn_api_calls', '1', { platform: 'cli' })).toBe(1);
    expect(bucket('hermes_turn_api_calls', '2', { platform: 'cli' })).toBe(1);
    expect(bucket('hermes_turn_api_calls', '3', { platform: 'cli' })).toBe(2);
    expect(bucket('hermes_turn_api_calls', '+Inf', { platform: 'cli' })).toBe(2);
  });

  it('counts the session left out of the cost histogram, and buckets the session and output speed', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson(readJsonl('conversation.jsonl'));
    const samples = await harness.samples();
    const unobserved = (reason: string) => samples.get(series('hermes_sidecar_sessions_unobserved_total', { reason }));
    // Its calls are unpriced; the subagent C1 never started a session of its own here.
    expect(unobserved('unpriced')).toBe(1);
    for (const reason of ['expired', 'evicted', 'subagent', 'unstarted']) expect(unobserved(reason)).toBe(0);
    expect(samples.get(series('hermes_sidecar_output_speed_unmeasured_total', { reason: 'no_interval' }))).toBe(0);
    expect(samples.get(series('hermes_sidecar_output_speed_unmeasured_total', { reason: 'no_output_tokens' }))).toBe(0);
    // 412 / 3.342 = 123.3 tokens/s: above 100, at most 125.
    expect(samples.get(series('hermes_api_output_tokens_per_second_bucket', { le: '100', ...main }))).toBe(0);
    expect(samples.get(series('hermes_api_output_tokens_per_second_bucket', { le: '125', ...main }))).toBe(1);
    // 41048 tokens: above 16384, at most 65536; 582 s: above 300, at most 600.
    expect(samples.get(series('hermes_session_tokens_bucket', { le: '16384', platform: 'cli' }))).toBe(0);
    expect(samples.get(series('hermes_session_tokens_bucket', { le: '65536', platform: 'cli' }))).toBe(1);
    expect(samples.get(series('hermes_session_duration_seconds_bucket', { le: '300', platform: 'cli' }))).toBe(0);
    expect(samples.get(series('hermes_session_duration_seconds_bucket', { le: '600', platform: 'cli' }))).toBe(1);
  });

  it('counts received, ignored and unknown hooks', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson(readJsonl('conversation.jsonl'));
    const samples = await harness.samples();
    const received = samplesOf(new Map(samples), 'hermes_sidecar_events_received_total');
    expect(Object.fromEntries(received)).toEqual(
      Object.fromEntries(
        Object.entries({
          on_session_start: 1, pre_llm_call: 2, pre_api_request: 4, api_request_error: 2, post_api_request: 2,
          pre_tool_call: 5, post_tool_call: 4, pre_approval_request: 3, post_approval_response: 3, post_llm_call: 1,
          on_session_end: 2, pre_auxiliary_call: 1, post_auxiliary_call: 1, subagent_start: 1, subagent_stop: 1,
          on_stream_delta: 1, on_session_reset: 1, on_session_finalize: 1, other: 1,
        }).map(([event, count]) => [series('hermes_sidecar_events_received_total', { source: 'flat', event }), count]),
      ),
    );
    expect(samples.get(series('hermes_sidecar_events_ignored_total', { event: 'post_llm_call' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_events_ignored_total', { event: 'on_stream_delta' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_events_ignored_total', { event: 'other' }))).toBe(1);
    expect(samples.get('hermes_sidecar_series')).toBe(
      [...samplesOf(new Map(samples), ...AGENT_PREFIXES).keys()].filter((key) => !/_(bucket|sum)\{/.test(key)).length,
    );
  });
});

describe('envelope variant stream', () => {
  it('moves exactly the documented agent series', async () => {
    const harness = startTestSidecar();
    const response = await harness.postNdjson(readJsonl('envelope.jsonl'));
    expect(response.body).toEqual({ accepted: 16, rejected: 0, errors: [] });
    const samples = await harness.samples();
    expect(Object.fromEntries(agentSamples(new Map(samples)))).toEqual(Object.fromEntries(ENVELOPE_EXPECTED));
    expect(samples.get(series('hermes_sidecar_events_ignored_total', { event: 'agent_start' }))).toBe(1);
  });
});

describe('the canonical sample payloads (test/fixtures/appendix-a.jsonl), posted as one fixture turn', () => {
  it('moves exactly these series', async () => {
    const harness = startTestSidecar();
    const response = await harness.postNdjson(readJsonl('appendix-a.jsonl'));
    expect(response.body).toEqual({ accepted: 16, rejected: 0, errors: [] });
    const samples = agentSamples(new Map(await harness.samples()));
    const a = { kind: 'main', provider: 'openrouter', model: M };
    const x = { kind: 'auxiliary', provider: 'openrouter', model: 'google/gemini-3.5-flash' };
    expect(Object.fromEntries(samples)).toEqual(
      Object.fromEntries([
        [series('hermes_api_requests_total', { ...a, outcome: 'success' }), 1],
        [series('hermes_api_requests_total', { ...a, outcome: 'error' }), 1],
        [series('hermes_api_requests_total', { ...x, outcome: 'success' }), 1],
        ...histogram('hermes_api_request_duration_seconds', { ...a, outcome: 'success' }, 6.842, 1),
        ...histogram('hermes_api_request_duration_seconds', { ...a, outcome: 'error' }, 1.207, 1),
        ...histogram('hermes_api_request_duration_seconds', { ...x, outcome: 'success' }, 0.912, 1),
        ...histogram('hermes_api_time_to_first_chunk_seconds', { ...a, outcome: 'success' }, 1.421, 1),
        ...histogram('hermes_api_output_tokens_per_second', a, Math.round((412 / (6.842 - 1.421)) * 1e6) / 1e6, 1),
        [series('hermes_api_errors_total', { ...a, reason: 'rate_limit', error_class: 'RateLimitError', status_code: '429', retryable: 'true' }), 1],
        [series('hermes_cost_unpriced_requests_total', { ...a, reason: 'no_price' }), 1],
        [series('hermes_cost_unpriced_requests_total', { ...x, reason: 'no_price' }), 1],
        [series('hermes_api_retries_total', { ...a, reason: 'rate_limit' }), 1],
        [series('hermes_tokens_total', { ...a, token_type: 'input' }), 1204],
        [series('hermes_tokens_total', { ...a, token_type: 'cache_read' }), 18030],
        [series('hermes_tokens_total', { ...a, token_type: 'cache_write' }), 952],
        [series('hermes_tokens_total', { ...a, token_type: 'output' }), 412],
        [series('hermes_tokens_total', { ...a, token_type: 'reasoning' }), 0],
        [series('hermes_tokens_total', { ...x, token_type: 'input' }), 310],
        [series('hermes_tokens_total', { ...x, token_type: 'cache_read' }), 0],
        [series('hermes_tokens_total', { ...x, token_type: 'cache_write' }), 0],
        [series('hermes_tokens_total', { ...x, token_type: 'output' }), 9],
        [series('hermes_tokens_total', { ...x, token_type: 'reasoning' }), 0],
        ...histogram('hermes_api_request_prompt_tokens', a, 20186, 1),
        ...histogram('hermes_api_request_prompt_tokens', x, 310, 1),
        [series('hermes_api_finish_reasons_total', { ...a, finish_reason: 'tool_calls' }), 1],
        [series('hermes_api_finish_reasons_total', { ...x, finish_reason: 'stop' }), 1],
        [series('hermes_api_requests_in_flight', { kind: 'main', provider: 'openrouter' }), 0],
        [series('hermes_turns_started_total', { platform: 'cli', model: M }), 1],
        [series('hermes_turns_finished_total', { platform: 'cli', model: M, outcome: 'completed', exit_reason: 'text_response' }), 1],
        ...histogram('hermes_turn_duration_seconds', { platform: 'cli', outcome: 'completed' }, 0, 1),
        ...histogram('hermes_turn_api_calls', { platform: 'cli' }, 2, 1),
        ...histogram('hermes_turn_tool_calls', { platform: 'cli' }, 1, 1),
        [series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }), 1],
        ...histogram('hermes_tool_call_duration_seconds', { tool: 'terminal', status: 'ok' }, 3.412, 1),
        [series('hermes_tool_calls_in_flight', { tool: 'terminal' }), 0],
        [series('hermes_approval_requests_total', { surface: 'gateway', pattern_key: 'rm_rf' }), 1],
        [series('hermes_approval_decisions_total', { surface: 'gateway', pattern_key: 'rm_rf', choice: 'once' }), 1],
        ...histogram('hermes_approval_wait_seconds', { surface: 'gateway', choice: 'once' }, 0, 1),
        [series('hermes_approvals_pending', { surface: 'gateway' }), 0],
        [series('hermes_subagents_started_total', { role: 'leaf' }), 1],
        [series('hermes_subagents_finished_total', { role: 'leaf', status: 'completed' }), 1],
        ...histogram('hermes_subagent_duration_seconds', { role: 'leaf', status: 'completed' }, 41.27, 1),
        [series('hermes_subagents_active', { role: 'leaf' }), 0],
        [series('hermes_sessions_started_total', { platform: 'cli' }), 1],
        [series('hermes_sessions_finalized_total', { platform: 'telegram' }), 1],
        [series('hermes_session_resets_total', { platform: 'telegram' }), 1],
        // on_session_finalize (A.3) closes the session A.1 started
        [series('hermes_sessions_active', { platform: 'cli' }), 0],
        // Observed under the finalization's platform; no observed_at, so one arrival time: 0 s.
        ...histogram('hermes_session_turns', { platform: 'telegram' }, 1, 1),
        ...histogram('hermes_session_tokens', { platform: 'telegram' }, 20186 + 412, 1),
        ...histogram('hermes_session_duration_seconds', { platform: 'telegram' }, 0, 1),
      ]),
    );
  });
});
