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

  it('times the first chunk only for the first attempt of a call to end: later ones span the failed attempts before them', async () => {
    // Hermes 0.21 sets api_start_time once per logical call, before its retry loop
    // (agent/conversation_loop.py, 73e5b5db), and every attempt reports it as started_at.
    const { harness, api } = setup();
    const retried: ApiCall = { ...CALL, requestId: 't1:api:2' };
    const failed = { type: 'api_attempt_failed', call: retried, reason: 'timeout', retryable: true, maxRetries: 3 } as const;
    api.failed({ ...failed, retryCount: 0, timeToFirstChunkSeconds: 0.5 }, START);
    api.failed({ ...failed, retryCount: 1, timeToFirstChunkSeconds: 9 }, START);
    api.succeeded({ type: 'api_attempt_succeeded', call: retried, timeToFirstChunkSeconds: 14 }, START);
    // A call with no failed attempt is timed, and so is a new call after the retried one ended.
    api.succeeded({ type: 'api_attempt_succeeded', call: { ...CALL, requestId: 't1:api:3' }, timeToFirstChunkSeconds: 0.25 }, START);
    api.succeeded({ type: 'api_attempt_succeeded', call: retried, timeToFirstChunkSeconds: 0.75 }, START);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_api_time_to_first_chunk_seconds_count', { ...LABELS, outcome: 'error' }))).toBe(1);
    expect(samples.get(series('hermes_api_time_to_first_chunk_seconds_sum', { ...LABELS, outcome: 'error' }))).toBe(0.5);
    expect(samples.get(series('hermes_api_time_to_first_chunk_seconds_count', { ...LABELS, outcome: 'success' }))).toBe(2);
    expect(samples.get(series('hermes_api_time_to_first_chunk_seconds_sum', { ...LABELS, outcome: 'success' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_time_to_first_chunk_unmeasured_total', { reason: 'after_failed_attempt' }))).toBe(2);
    // every attempt still counts as a request
    expect(samples.get(series('hermes_api_requests_total', { ...LABELS, outcome: 'error' }))).toBe(2);
    expect(samples.get(series('hermes_api_requests_total', { ...LABELS, outcome: 'success' }))).toBe(3);
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

  it('observes the output speed of a streamed call: output tokens over the time after its first chunk', async () => {
    const { harness, api } = setup();
    const streamed = { type: 'api_attempt_succeeded', call: CALL, timeToFirstChunkSeconds: 0.5 } as const;
    // 100 output tokens in 2.5 − 0.5 = 2 s after the first chunk: 50 tokens/s.
    api.succeeded({ ...streamed, durationSeconds: 2.5, usage: { output: 100 } }, START);
    // 0 output tokens in 1 s: 0 tokens/s, a real value.
    api.succeeded({ ...streamed, durationSeconds: 1.5, usage: { output: 0 } }, START);
    // Not streamed (no first chunk): neither observed nor counted.
    api.succeeded({ type: 'api_attempt_succeeded', call: CALL, durationSeconds: 2, usage: { output: 100 } }, START);
    // The first chunk at the end, or after it (a clock step between the two readings); no api_duration.
    api.succeeded({ ...streamed, durationSeconds: 0.5, usage: { output: 100 } }, START);
    api.succeeded({ ...streamed, durationSeconds: 0.25, usage: { output: 100 } }, START);
    api.succeeded({ ...streamed, usage: { output: 100 } }, START);
    // An interval so short the quotient would be infinite.
    api.succeeded({ type: 'api_attempt_succeeded', call: CALL, timeToFirstChunkSeconds: 0, durationSeconds: Number.MIN_VALUE, usage: { output: 100 } }, START);
    // No output count in the usage, or no usage at all.
    api.succeeded({ ...streamed, durationSeconds: 2.5, usage: { input: 10 } }, START);
    api.succeeded({ ...streamed, durationSeconds: 2.5 }, START);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_api_output_tokens_per_second_sum', LABELS))).toBe(50);
    expect(samples.get(series('hermes_api_output_tokens_per_second_count', LABELS))).toBe(2);
    expect(samples.get(series('hermes_api_output_tokens_per_second_bucket', { le: '2.5', ...LABELS }))).toBe(1);
    expect(samples.get(series('hermes_api_output_tokens_per_second_bucket', { le: '40', ...LABELS }))).toBe(1);
    expect(samples.get(series('hermes_api_output_tokens_per_second_bucket', { le: '50', ...LABELS }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_output_speed_unmeasured_total', { reason: 'no_interval' }))).toBe(4);
    expect(samples.get(series('hermes_sidecar_output_speed_unmeasured_total', { reason: 'no_output_tokens' }))).toBe(2);
    for (const [name, value] of samples) if (name.startsWith('hermes_api_output_tokens_per_second')) expect(Number.isFinite(value)).toBe(true);
  });

  it('returns the cost of a successful call for its session to add up', () => {
    const { api } = setup();
    expect(api.succeeded({ type: 'api_attempt_succeeded', call: CALL, cost: { usd: 0.125, status: 'actual' } }, START)).toEqual({ priced: true, pricing: 'hermes', usd: 0.125 });
    // 1 M input at 1 USD and 0.5 M output at 2 USD per million.
    expect(api.succeeded({ type: 'api_attempt_succeeded', call: CALL, usage: { input: 1_000_000, output: 500_000 } }, START)).toEqual({ priced: true, pricing: 'config', usd: 2 });
    expect(api.succeeded({ type: 'api_attempt_succeeded', call: CALL }, START)).toEqual({ priced: false, reason: 'no_usage' });
  });

  it('counts attempts in flight per kind and provider until their post or error arrives', async () => {
    const { harness, api } = setup();
    api.started(CALL);
    api.started({ ...CALL, requestId: 'r2' });
    api.started({ ...CALL, kind: 'auxiliary', requestId: 'r1' });
    api.started({ ...CALL, requestId: undefined });
    let samples = await harness.samples();
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'main', provider: 'openrouter' }))).toBe(2);
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'auxiliary', provider: 'openrouter' }))).toBe(1);
    api.succeeded({ type: 'api_attempt_succeeded', call: CALL }, START);
    api.failed({ type: 'api_attempt_failed', call: { ...CALL, kind: 'auxiliary' } }, START);
    samples = await harness.samples();
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'main', provider: 'openrouter' }))).toBe(1);
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'auxiliary', provider: 'openrouter' }))).toBe(0);
  });
});

describe('ApiRecorder under series expiry', () => {
  const TTL = 3600;
  const modelCall = (model: string, kind: ApiCall['kind'] = 'main'): ApiCall => ({ kind, provider: 'openrouter', model, requestId: `r-${model}`, turnId: 't1' });
  const requests = (model: string, kind = 'main') => series('hermes_api_requests_total', { kind, provider: 'openrouter', model, outcome: 'success' });

  function expiring() {
    const harness = recorderHarness({ seriesTtlSeconds: TTL });
    const api = new ApiRecorder(harness.context, familiesFor(harness.metrics, API_FAMILIES));
    const succeed = (model: string, kind: ApiCall['kind'] = 'main') => api.succeeded({ type: 'api_attempt_succeeded', call: modelCall(model, kind), durationSeconds: 1 }, START);
    return { harness, api, succeed };
  }

  it('keeps only the series of models still live once the idle ones expired, and counts a returning model afresh', async () => {
    const { harness, api, succeed } = expiring();
    const idle = Array.from({ length: 10 }, (_, index) => `idle-${index}`);
    for (const model of idle) succeed(model);
    succeed('idle-0', 'auxiliary');
    succeed('live');
    expect(api.callSeriesCount).toBe(12);
    // The first sweep starts every series' idle time; the second, a TTL later, removes the idle ones.
    harness.expire();
    harness.advance(TTL);
    succeed('live');
    harness.expire();
    expect(harness.context.labels.admittedCount('model')).toBe(1);
    // The guard forgot values: the next call drops the cached series and resolves afresh.
    succeed('live');
    expect(api.callSeriesCount).toBe(1);

    succeed('idle-0');
    succeed('idle-0');
    succeed('live');
    expect(api.callSeriesCount).toBe(2);
    const samples = await harness.samples();
    expect(samples.get(requests('idle-0'))).toBe(2);
    expect(samples.get(requests('idle-0', 'auxiliary'))).toBeUndefined();
    expect(samples.get(requests('idle-1'))).toBeUndefined();
    expect(samples.get(requests('live'))).toBe(4);
  });

  it('keeps no handle keyed by a finish or failover reason, however many come and go while their model stays live', () => {
    const { harness, api } = expiring();
    const live = modelCall('live');
    const succeed = (finishReason: string) => api.succeeded({ type: 'api_attempt_succeeded', call: live, durationSeconds: 1, finishReason }, START);
    const fail = (reason: string) => api.failed({ type: 'api_attempt_failed', call: live, durationSeconds: 1, reason }, START);
    succeed('stop');
    fail('timeout');
    const steady = api.handleCount;
    for (let period = 0; period < 3; period += 1) {
      for (let index = 0; index < 10; index += 1) {
        succeed(`finish-${period}-${index}`);
        fail(`reason-${period}-${index}`);
      }
      // Written by label object: a new reason adds no handle.
      expect(api.handleCount).toBe(steady);
      harness.expire();
      harness.advance(TTL);
      succeed('stop');
      fail('timeout');
      harness.expire();
      expect(api.handleCount).toBe(steady);
    }
    expect(api.callSeriesCount).toBe(1);
  });

  it('stays within the model cap over many TTL periods of new models', () => {
    const { harness, api, succeed } = expiring();
    for (let period = 0; period < 5; period += 1) {
      for (let index = 0; index < 256; index += 1) succeed(`model-${period}-${index}`);
      // Each period's 256 models have labels of their own: the last period's gave theirs back.
      expect(harness.context.labels.admittedCount('model')).toBe(256);
      expect(api.callSeriesCount).toBe(256);
      harness.expire();
      harness.advance(TTL);
      harness.expire();
    }
    // The guard forgot the last period's models: the next call starts the cache afresh.
    succeed('model-after');
    expect(api.callSeriesCount).toBe(1);
  });
});
