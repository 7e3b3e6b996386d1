/** The API recorder: attempts by outcome, durations, tokens, cost, errors and retries, calls in flight. */
import { describe, expect, it } from 'vitest';
import type { ApiCall } from '../../../src/contract/events.js';
import { API_FAMILIES, ApiRecorder } from '../../../src/correlate/recorders/api.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness, START } from '../../support/recorders.js';

const CALL: ApiCall = { kind: 'main', provider: 'openrouter', model: 'gpt-x', requestId: 'r1', turnId: 't1' };
const LABELS = { kind: 'main', provider: 'openrouter', model: 'gpt-x' };

function setup() {
  const harness = recorderHarness({ prices: [{ provider: 'openrouter', model: 'gpt-x', input: 1, output: 2 }] });
  return { harness, api: new ApiRecorder(harness.context, familiesFor(harness.metrics, API_FAMILIES)) };
}

describe('ApiRecorder', () => {
  it('records a successful attempt: outcome, duration, first chunk, finish reason, tokens, prompt, context use and cost', async () => {
    const { harness, api } = setup();
    api.succeeded(
      {
        type: 'api_attempt_succeeded',
        call: CALL,
        durationSeconds: 1.5,
        timeToFirstChunkSeconds: 0.25,
        finishReason: 'stop',
        usage: { input: 1_000_000, cacheRead: 500_000, output: 250_000, reasoning: 50_000 },
        contextLength: 3_000_000,
      },
      START,
    );
    const samples = await harness.samples();
    expect(samples.get(series('hermes_api_requests_total', { ...LABELS, outcome: 'success' }))).toBe(1);
    expect(samples.get(series('hermes_api_request_duration_seconds_sum', { ...LABELS, outcome: 'success' }))).toBe(1.5);
    expect(samples.get(series('hermes_api_time_to_first_chunk_seconds_sum', { ...LABELS, outcome: 'success' }))).toBe(0.25);
    expect(samples.get(series('hermes_api_finish_reasons_total', { ...LABELS, finish_reason: 'stop' }))).toBe(1);
    expect(samples.get(series('hermes_tokens_total', { ...LABELS, token_type: 'input' }))).toBe(1_000_000);
    expect(samples.get(series('hermes_tokens_total', { ...LABELS, token_type: 'cache_read' }))).toBe(500_000);
    expect(samples.get(series('hermes_tokens_total', { ...LABELS, token_type: 'output' }))).toBe(250_000);
    expect(samples.get(series('hermes_tokens_total', { ...LABELS, token_type: 'reasoning' }))).toBe(50_000);
    // A token type not reported is not counted as 0.
    expect(samples.get(series('hermes_tokens_total', { ...LABELS, token_type: 'cache_write' }))).toBeUndefined();
    // Prompt tokens (1.5 M of input and cache reads) over a 3 M window.
    expect(samples.get(series('hermes_api_context_utilization_ratio_sum', LABELS))).toBe(0.5);
    // The price table: 1 M input at 1 USD and 0.25 M output at 2 USD; cache reads have no price,
    // so the call cannot be priced.
    expect(samples.get(series('hermes_cost_unpriced_requests_total', { ...LABELS, reason: 'no_price' }))).toBe(1);
  });

  it("counts Hermes' own price of a call under pricing=hermes", async () => {
    const { harness, api } = setup();
    api.succeeded({ type: 'api_attempt_succeeded', call: CALL, usage: { input: 10 }, cost: { usd: 0.125, status: 'actual' } }, START);
    api.succeeded({ type: 'api_attempt_succeeded', call: CALL, usage: { input: 1_000_000, output: 1_000_000 } }, START);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_cost_usd_total', { ...LABELS, pricing: 'hermes' }))).toBe(0.125);
    expect(samples.get(series('hermes_cost_usd_total', { ...LABELS, pricing: 'config' }))).toBe(3);
  });

  it('records a failed attempt: error labels, and a retry or an exhausted call by the retry fields', async () => {
    const { harness, api } = setup();
    const failed = { type: 'api_attempt_failed', call: CALL, reason: 'rate_limit', errorType: 'RateLimitError', statusCode: 429 } as const;
    api.failed({ ...failed, retryable: true, retryCount: 1, maxRetries: 3, durationSeconds: 2 }, START);
    api.failed({ ...failed, retryable: true, retryCount: 3, maxRetries: 3 }, START);
    api.failed({ ...failed, retryable: false }, START);
    api.failed({ type: 'api_attempt_failed', call: CALL }, START);
    const samples = await harness.samples();
    const error = { ...LABELS, reason: 'rate_limit', error_class: 'RateLimitError', status_code: '429' };
    expect(samples.get(series('hermes_api_requests_total', { ...LABELS, outcome: 'error' }))).toBe(4);
    expect(samples.get(series('hermes_api_errors_total', { ...error, retryable: 'true' }))).toBe(2);
    expect(samples.get(series('hermes_api_errors_total', { ...error, retryable: 'false' }))).toBe(1);
    expect(samples.get(series('hermes_api_errors_total', { ...LABELS, reason: 'unknown', error_class: 'unknown', status_code: 'none', retryable: 'unknown' }))).toBe(1);
    expect(samples.get(series('hermes_api_retries_total', { ...LABELS, reason: 'rate_limit' }))).toBe(1);
    expect(samples.get(series('hermes_api_retries_exhausted_total', { ...LABELS, reason: 'rate_limit' }))).toBe(2);
    // Without the retry fields neither is counted.
    expect(samples.get(series('hermes_api_retries_total', { ...LABELS, reason: 'unknown' }))).toBeUndefined();
    expect(samples.get(series('hermes_api_request_duration_seconds_sum', { ...LABELS, outcome: 'error' }))).toBe(2);
  });

  it('counts attempts in flight per kind and provider until their post or error arrives', async () => {
    const { harness, api } = setup();
    api.started(CALL);
    api.started({ ...CALL, requestId: 'r2' });
    api.started({ ...CALL, kind: 'auxiliary', requestId: 'r1' });
    api.started({ ...CALL, requestId: undefined });
    api.collect();
    let samples = await harness.samples();
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'main', provider: 'openrouter' }))).toBe(2);
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'auxiliary', provider: 'openrouter' }))).toBe(1);
    api.succeeded({ type: 'api_attempt_succeeded', call: CALL }, START);
    api.failed({ type: 'api_attempt_failed', call: { ...CALL, kind: 'auxiliary' } }, START);
    api.collect();
    samples = await harness.samples();
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'main', provider: 'openrouter' }))).toBe(1);
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'auxiliary', provider: 'openrouter' }))).toBe(0);
  });
});
