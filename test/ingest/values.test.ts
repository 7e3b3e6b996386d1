/**
 * Finite, plausible values: out-of-bound numbers are absent, counted by
 * field; no sample on /metrics is ever NaN or ±Inf except the +Inf bucket bound.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BOUNDS } from '../../src/contract/bounds.js';
import { series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';

const main = { kind: 'main', provider: 'p', model: 'm' };

/** Sample lines whose value is not finite, other than the +Inf bucket bound. */
function nonFiniteSamples(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .filter((line) => /\s(?:NaN|[+-]Inf)$/.test(line) || /\s(?:NaN|[+-]?Inf)\s/.test(line));
}

describe('value bounds', () => {
  it('1e308 durations and token counts sent twice leave every sum finite, and are counted by field', async () => {
    const harness = startTestSidecar();
    const huge = { event: 'post_api_request', provider: 'p', model: 'm', api_duration: 1e308, usage: { input_tokens: 1e308, output_tokens: 5 } };
    await harness.postNdjson([huge, huge]);
    const text = await harness.scrape();
    expect(nonFiniteSamples(text)).toEqual([]);
    const samples = await harness.samples();
    // The events still count; only the implausible values are absent.
    expect(samples.get(series('hermes_api_requests_total', { ...main, outcome: 'success' }))).toBe(2);
    expect(samples.get(series('hermes_tokens_total', { ...main, token_type: 'output' }))).toBe(10);
    expect(samples.get(series('hermes_tokens_total', { ...main, token_type: 'input' }))).toBeUndefined();
    expect(samples.get(series('hermes_api_request_duration_seconds_count', { ...main, outcome: 'success' }))).toBeUndefined();
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'duration' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'tokens' }))).toBe(2);
  });

  it('heartbeat totals of 1e300 do not pin the drop counter', async () => {
    const harness = startTestSidecar();
    const heartbeat = (total: number) => ({ event: 'plugin_heartbeat', instance: 'i', data: { interval_seconds: 5, dropped: { post_tool_call: { queue_full: total } } } });
    await harness.postNdjson([heartbeat(3), heartbeat(1e300), heartbeat(5)]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'post_tool_call', reason: 'queue_full' }))).toBe(5);
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'dropped_total' }))).toBe(1);
  });

  it('a far-future observed_at records no 1e15-second turn: the duration is absent and counted', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      { event: 'pre_llm_call', turn_id: 'T1', platform: 'cli', observed_at: 1000 },
      { event: 'on_session_end', turn_id: 'T1', platform: 'cli', completed: true, observed_at: 1e15 },
      { event: 'pre_llm_call', turn_id: 'T2', platform: 'cli', observed_at: 1000 },
      { event: 'on_session_end', turn_id: 'T2', platform: 'cli', completed: true, observed_at: 1000 + BOUNDS.durationSeconds + 1 },
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_turn_duration_seconds_count', { platform: 'cli', outcome: 'completed' }))).toBeUndefined();
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'observed_at' }))).toBe(1);
    // T1 fell back to its arrival time, still decades after its start; T2 lasted a week and a second.
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'duration' }))).toBe(2);
  });

  it('property: whatever numbers arrive in any numeric field, no sample is NaN or ±Inf', async () => {
    const number = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(1e308, -1e308, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, 2 ** 63, 0, -0, 1e15),
    );
    const lines = fc.tuple(number, number, number, number, number, number).map(([a, b, c, d, e, f]) => [
      { event: 'post_api_request', provider: 'p', model: 'm', api_duration: a, started_at: b, first_chunk_at: c, usage: { input_tokens: d, prompt_tokens: e, cache_read_tokens: f, output_tokens: a, reasoning_tokens: b } },
      { event: 'api_request_error', provider: 'p', model: 'm', api_duration: c, status_code: d, retry_count: e, max_retries: f },
      { event: 'post_tool_call', tool_name: 't', status: 'ok', duration_ms: d },
      { event: 'pre_llm_call', turn_id: 'T', platform: 'cli', observed_at: a },
      { event: 'on_session_end', turn_id: 'T', platform: 'cli', completed: true, observed_at: b },
      { event: 'turn_end', turn_duration_ms: c, turn_start_time_ms: d, turn_end_time_ms: e },
      { event: 'subagent_stop', child_role: 'leaf', child_status: 'completed', duration_ms: f },
      { event: 'agent_end', stop_reason: 'done', run_duration_ms: a },
      { event: 'memory_write', memory_provider: 'x', action: 'add', size_bytes: b },
      { event: 'plugin_heartbeat', instance: 'i', seq: undefined, data: { interval_seconds: c, acked_seq: d, dropped: { post_tool_call: { queue_full: e } } } },
    ]);
    const harness = startTestSidecar();
    await fc.assert(
      fc.asyncProperty(lines, async (batch) => {
        // Two rounds: sums of two large finite values must stay finite too.
        await harness.postNdjson(batch);
        await harness.postNdjson(batch);
        expect(nonFiniteSamples(await harness.scrape())).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it('cost_usd of 1e308 sent twice leaves hermes_cost_usd_total finite; the values are absent and counted', async () => {
    const harness = startTestSidecar();
    const priced = (usd: number) => ({ event: 'post_api_request', provider: 'p', model: 'm', cost_usd: usd, cost_status: 'actual' });
    await harness.postNdjson([priced(0.25), priced(1e308), priced(1e308)]);
    expect(nonFiniteSamples(await harness.scrape())).toEqual([]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_cost_usd_total', { ...main, pricing: 'hermes' }))).toBe(0.25);
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'cost_usd' }))).toBe(2);
    // Without a usable price the calls are unpriced, never guessed (no usage was sent).
    expect(samples.get(series('hermes_cost_unpriced_requests_total', { ...main, reason: 'no_usage' }))).toBe(2);
  });

  it('counters fed the largest allowed value on every event stay finite and exact', async () => {
    const harness = startTestSidecar();
    const maximal = {
      event: 'post_api_request',
      provider: 'p',
      model: 'm',
      api_duration: BOUNDS.durationSeconds,
      cost_usd: BOUNDS.costUsd,
      usage: { input_tokens: BOUNDS.tokens, output_tokens: BOUNDS.tokens },
    };
    const events = 10_000;
    for (let sent = 0; sent < events; sent += 2_500) await harness.postNdjson(Array.from({ length: 2_500 }, () => maximal));
    expect(nonFiniteSamples(await harness.scrape())).toEqual([]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_cost_usd_total', { ...main, pricing: 'hermes' }))).toBe(events * BOUNDS.costUsd);
    expect(samples.get(series('hermes_tokens_total', { ...main, token_type: 'input' }))).toBe(events * BOUNDS.tokens);
    expect(samples.get(series('hermes_api_request_duration_seconds_sum', { ...main, outcome: 'success' }))).toBe(events * BOUNDS.durationSeconds);
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'cost_usd' }))).toBe(0);
  });
});
