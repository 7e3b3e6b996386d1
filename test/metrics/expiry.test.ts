/**
 * Series expiry (--metrics.series-ttl) on an injected clock: idle agent series leave, give their
 * slot back to the series budget and their open label values back to the label caps; series
 * written within the TTL, gauges of open spans above 0 and pre-initialised series stay.
 */
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS, type MetricSpec } from '../../src/metrics/declare.js';
import { defaultLabelRules, type LabelRules } from '../../src/metrics/labels.js';
import { familiesFor, seriesExpiry } from '../../src/metrics/registry.js';
import { CATALOGUE } from '../../src/catalogue.js';
import { parseSamples, series } from '../support/exposition.js';
import { recorderHarness } from '../support/recorders.js';
import { startTestSidecar } from '../support/sidecar.js';
import { API_FAMILIES, ApiRecorder } from '../../src/correlate/recorders/api.js';
import type { ApiCall } from '../../src/contract/events.js';

const TTL = 3600;
const START = 1_700_000_000;

interface Options {
  readonly maxSeries?: number;
  readonly ttl?: number;
  readonly caps?: Partial<Record<keyof LabelRules, number>>;
}

/** The default label rules with these caps. */
function rulesWith(caps: Options['caps']): LabelRules {
  return Object.fromEntries(
    Object.entries(defaultLabelRules()).map(([label, rule]) => [label, { ...rule, cap: caps?.[label as keyof LabelRules] ?? rule.cap }]),
  ) as unknown as LabelRules;
}

/** A registry with its label guard and a clock the test moves. */
function setup(options: Options = {}) {
  const registry = createMetricsRegistry({
    buckets: DEFAULT_BUCKETS,
    maxAgentSeries: options.maxSeries ?? 10_000,
    defaultMetrics: false,
    seriesTtlSeconds: options.ttl ?? TTL,
    labels: rulesWith(options.caps),
  });
  const guard = registry.labels;
  const exposition = createExposition(registry);
  let now = START;
  const { metrics } = registry;
  /** One token count for `model` (raw, through the guard), as the API recorder writes it. */
  const tokens = (model: string, amount = 1) =>
    metrics.tokens.inc({ kind: 'main', provider: 'p', model: guard.value('model', model), token_type: 'input' }, amount);
  return {
    registry,
    guard,
    metrics,
    tokens,
    advance: (seconds: number) => {
      now += seconds;
    },
    /** One whole expiry sweep as of now; returns its number of steps. */
    sweep: () => {
      const step = registry.expirySteps(now);
      let steps = 1;
      while (step()) steps += 1;
      return steps;
    },
    samples: async () => parseSamples(await renderText(exposition)),
  };
}

const tokenSeries = (model: string, provider = 'p') => series('hermes_tokens_total', { kind: 'main', provider, model, token_type: 'input' });
/** The overflow series past the global cap: every open label as `other`. */
const overflowTokens = tokenSeries('other', 'other');
const expired = (metric: string) => series('hermes_sidecar_series_expired_total', { metric });

describe('series expiry', () => {
  it('admits a new model once the models that filled the cap have been idle past the TTL', async () => {
    const t = setup({ caps: { model: 3 } });
    for (const model of ['a', 'b', 'c', 'd']) t.tokens(model);
    t.sweep();
    let samples = await t.samples();
    expect(samples.get(tokenSeries('d'))).toBeUndefined();
    expect(samples.get(tokenSeries('other'))).toBe(1);

    t.advance(TTL - 1);
    t.sweep();
    t.tokens('e');
    samples = await t.samples();
    expect(samples.get(tokenSeries('a'))).toBe(1);
    expect(samples.get(tokenSeries('e'))).toBeUndefined();
    expect(samples.get(tokenSeries('other'))).toBe(2);

    t.advance(1);
    t.sweep();
    expect(t.guard.admittedCount('model')).toBe(0);
    t.tokens('e', 5);
    samples = await t.samples();
    expect(samples.get(tokenSeries('a'))).toBeUndefined();
    expect(samples.get(tokenSeries('e'))).toBe(5);
    // The overflow series was written at START + TTL - 1, so it is not idle long enough yet.
    expect(samples.get(tokenSeries('other'))).toBe(2);
    expect(samples.get(expired('hermes_tokens_total'))).toBe(3);
  });

  it('keeps a series written within the TTL, and counts each expired series exactly once', async () => {
    const t = setup();
    t.tokens('kept');
    t.tokens('gone');
    t.sweep();
    t.advance(TTL - 10);
    t.tokens('kept');
    t.sweep();
    t.advance(10);
    t.sweep();
    let samples = await t.samples();
    expect(samples.get(tokenSeries('kept'))).toBe(2);
    expect(samples.get(tokenSeries('gone'))).toBeUndefined();
    expect(samples.get(expired('hermes_tokens_total'))).toBe(1);
    // Later sweeps count nothing more until the kept series is idle a whole TTL after its write.
    t.advance(TTL - 11);
    t.sweep();
    expect((await t.samples()).get(expired('hermes_tokens_total'))).toBe(1);
    t.advance(1);
    t.sweep();
    samples = await t.samples();
    expect(samples.get(tokenSeries('kept'))).toBeUndefined();
    expect(samples.get(expired('hermes_tokens_total'))).toBe(2);
    expect(samples.get(expired('hermes_tool_calls_total'))).toBe(0);
  });

  it('gives budget slots back: a label set folded at the cap gets its own series after expiry', async () => {
    const t = setup({ maxSeries: 2 });
    t.tokens('x');
    t.tokens('y');
    t.tokens('z');
    let samples = await t.samples();
    expect(samples.get(tokenSeries('z'))).toBeUndefined();
    expect(samples.get(overflowTokens)).toBe(1);
    expect(samples.get(series('hermes_sidecar_series_overflow_total', { metric: 'hermes_tokens_total' }))).toBe(1);
    expect(t.registry.agentSeries()).toBe(3);

    t.sweep();
    t.advance(TTL);
    t.sweep();
    expect(t.registry.agentSeries()).toBe(0);
    t.tokens('z');
    t.tokens('w');
    t.tokens('v');
    samples = await t.samples();
    expect(samples.get(tokenSeries('z'))).toBe(1);
    expect(samples.get(tokenSeries('w'))).toBe(1);
    expect(samples.get(tokenSeries('v'))).toBeUndefined();
    expect(samples.get(overflowTokens)).toBe(1);
    expect(samples.get('hermes_sidecar_series')).toBe(3);
    // x, y and the overflow series expired.
    expect(samples.get(expired('hermes_tokens_total'))).toBe(3);
  });

  it('keeps a gauge of open spans while it is above 0, and its label value in the cap', async () => {
    const t = setup({ caps: { tool: 1 } });
    const tool = t.guard.value('tool', 'shell');
    t.metrics.toolCallsInFlight.inc({ tool }, 2);
    t.metrics.toolCalls.inc({ tool, status: 'ok' });
    t.sweep();
    t.advance(10 * TTL);
    t.sweep();
    const samples = await t.samples();
    expect(samples.get(series('hermes_tool_calls_in_flight', { tool: 'shell' }))).toBe(2);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'shell', status: 'ok' }))).toBeUndefined();
    expect(samples.get(expired('hermes_tool_calls_total'))).toBe(1);
    // The gauge still carries "shell", so the cap of one has no room for another tool.
    expect(t.guard.value('tool', 'browser')).toBe('other');
  });

  it('removes a gauge of open spans once it has been at 0 for the TTL, and its label value leaves the cap', async () => {
    const t = setup({ caps: { tool: 1 } });
    const tool = t.guard.value('tool', 'shell');
    t.metrics.toolCallsInFlight.inc({ tool });
    t.sweep();
    t.advance(TTL - 1);
    t.metrics.toolCallsInFlight.dec({ tool });
    t.sweep();
    t.advance(TTL - 1);
    t.sweep();
    // At 0, but not yet for a whole TTL.
    expect((await t.samples()).get(series('hermes_tool_calls_in_flight', { tool: 'shell' }))).toBe(0);
    t.advance(1);
    t.sweep();
    const samples = await t.samples();
    expect(samples.get(series('hermes_tool_calls_in_flight', { tool: 'shell' }))).toBeUndefined();
    expect(samples.get(expired('hermes_tool_calls_in_flight'))).toBe(1);
    expect(t.guard.value('tool', 'browser')).toBe('browser');
  });

  it('declares every agent gauge set from state as computed, and only those wait for 0 to expire', () => {
    const kept = Object.values(CATALOGUE)
      .filter((spec) => seriesExpiry(spec) === 'idle at zero')
      .map((spec) => spec.name)
      .sort();
    expect(kept).toEqual([
      'hermes_api_requests_in_flight',
      'hermes_approvals_pending',
      'hermes_sessions_active',
      'hermes_subagents_active',
      'hermes_tool_calls_in_flight',
    ]);
  });

  it('releases a label value only when no live series of any family carries it', async () => {
    const t = setup({ caps: { model: 1 } });
    const model = t.guard.value('model', 'm1');
    t.metrics.tokens.inc({ kind: 'main', provider: 'p', model, token_type: 'input' });
    t.metrics.apiRequests.inc({ kind: 'main', provider: 'p', model, outcome: 'success' });
    t.sweep();
    t.advance(TTL - 1);
    t.metrics.apiRequests.inc({ kind: 'main', provider: 'p', model, outcome: 'success' });
    t.sweep();
    t.advance(1);
    t.sweep();
    // The token series expired; the request series still carries m1, so m2 has no room.
    const samples = await t.samples();
    expect(samples.get(tokenSeries('m1'))).toBeUndefined();
    expect(samples.get(series('hermes_api_requests_total', { kind: 'main', provider: 'p', model: 'm1', outcome: 'success' }))).toBe(2);
    expect(t.guard.value('model', 'm2')).toBe('other');
    expect(t.guard.admittedCount('model')).toBe(1);
  });

  it('re-resolves a handle whose series expired, so a write through it is never lost', async () => {
    const t = setup({ caps: { model: 1 } });
    const old = t.metrics.apiRequests.handle({ kind: 'main', provider: 'p', model: t.guard.value('model', 'old'), outcome: 'success' });
    old.inc();
    t.sweep();
    t.advance(TTL);
    t.sweep();
    // "old" left the cap; a new model takes its place, and "old" resolves to `other` now.
    expect(t.guard.value('model', 'new')).toBe('new');
    expect(t.guard.value('model', 'old')).toBe('other');
    old.inc(3);
    const samples = await t.samples();
    const requests = (model: string) => series('hermes_api_requests_total', { kind: 'main', provider: 'p', model, outcome: 'success' });
    expect(samples.get(requests('old'))).toBe(3);
    expect(samples.get(expired('hermes_api_requests_total'))).toBe(1);
  });

  it('folds a handle whose slot was taken after its series expired, and gives it its own series again later', async () => {
    const t = setup({ maxSeries: 1 });
    const labels = (model: string) => ({ kind: 'main', provider: 'p', model: t.guard.value('model', model), outcome: 'success' }) as const;
    const requests = (model: string, provider = 'p') => series('hermes_api_requests_total', { kind: 'main', provider, model, outcome: 'success' });
    const a = t.metrics.apiRequests.handle(labels('a'));
    a.inc();
    t.sweep();
    t.advance(TTL);
    t.sweep();
    t.metrics.apiRequests.inc(labels('b'));
    a.inc(2);
    let samples = await t.samples();
    expect(samples.get(requests('a'))).toBeUndefined();
    expect(samples.get(requests('b'))).toBe(1);
    expect(samples.get(requests('other', 'other'))).toBe(2);
    expect(samples.get(series('hermes_sidecar_series_overflow_total', { metric: 'hermes_api_requests_total' }))).toBe(1);
    // b and the overflow series expire; a's next write takes the free slot under its own labels.
    t.sweep();
    t.advance(TTL);
    t.sweep();
    a.inc(4);
    samples = await t.samples();
    expect(samples.get(requests('a'))).toBe(4);
    expect(samples.get(requests('other', 'other'))).toBeUndefined();
    expect(samples.get(series('hermes_sidecar_series_overflow_total', { metric: 'hermes_api_requests_total' }))).toBe(1);
  });

  it('re-creates the series of a handle written again after expiry, starting from 0', async () => {
    const t = setup();
    const handle = t.metrics.toolCallDuration.handle({ tool: t.guard.value('tool', 'grep'), status: 'ok' });
    handle.observe(1);
    t.sweep();
    t.advance(TTL);
    t.sweep();
    let samples = await t.samples();
    expect(samples.get(series('hermes_tool_call_duration_seconds_count', { tool: 'grep', status: 'ok' }))).toBeUndefined();
    handle.observe(0.5);
    samples = await t.samples();
    expect(samples.get(series('hermes_tool_call_duration_seconds_count', { tool: 'grep', status: 'ok' }))).toBe(1);
    expect(samples.get(series('hermes_tool_call_duration_seconds_sum', { tool: 'grep', status: 'ok' }))).toBe(0.5);
  });

  it('releases a value resolved without any series once it has been unused for the TTL', () => {
    const t = setup({ caps: { model: 1 }, maxSeries: 1 });
    t.tokens('first');
    // The budget is spent: "second" cannot have a series of its own, so nothing carries it.
    t.metrics.apiRequests.inc({ kind: 'main', provider: 'p', model: t.guard.value('model', 'first'), outcome: 'success' });
    expect(t.guard.admittedCount('model')).toBe(1);
    t.sweep();
    t.advance(TTL);
    t.sweep();
    expect(t.guard.admittedCount('model')).toBe(0);
    expect(t.guard.value('model', 'second')).toBe('second');
  });

  it('keeps every series when the TTL is 0, and pre-initialised series always', async () => {
    const t = setup({ ttl: 0 });
    t.tokens('a');
    t.sweep();
    t.advance(365 * 86_400);
    t.sweep();
    const samples = await t.samples();
    expect(samples.get(tokenSeries('a'))).toBe(1);
    // Pre-initialised pipeline series (at 0 from the start) are there whatever the TTL.
    const ttl = setup();
    ttl.sweep();
    ttl.advance(10 * TTL);
    ttl.sweep();
    expect((await ttl.samples()).get(series('hermes_sidecar_label_overflow_total', { label: 'tool' }))).toBe(0);
  });

  it('sweeps a large table in bounded steps, and keeps a series written between the step that noted it and the last', async () => {
    const t = setup();
    const types = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const;
    const write = (index: number, type: (typeof types)[number]) =>
      t.metrics.tokens.inc({ kind: 'main', provider: 'p', model: t.guard.value('model', `m${index}`), token_type: type });
    for (let index = 0; index < 256; index += 1) for (const type of types) write(index, type);
    t.sweep();
    t.advance(TTL);
    const step = t.registry.expirySteps(START + TTL);
    let steps = 1;
    // Written after every step: between the step that notes it idle and the one that removes.
    while (step()) {
      write(0, 'input');
      steps += 1;
    }
    const samples = await t.samples();
    expect(samples.get(tokenSeries('m0'))).toBe(steps);
    expect(samples.get(expired('hermes_tokens_total'))).toBe(256 * 5 - 1);
    // 1280 series take three steps of 512, besides one step per other expiring family.
    const expiringFamilies = (Object.values(CATALOGUE) as MetricSpec[]).filter((spec) => seriesExpiry(spec) !== 'never' && spec.optIn === undefined).length;
    expect(steps).toBe(expiringFamilies + 2 + 1);
  });
});

describe('series expiry through a recorder', () => {
  it('gives the 257th model its own label once the first 256 have expired', async () => {
    const harness = recorderHarness({ seriesTtlSeconds: TTL });
    const api = new ApiRecorder(harness.context, familiesFor(harness.metrics, API_FAMILIES));
    const call = (model: string): ApiCall => ({ kind: 'main', provider: 'openrouter', model, requestId: `r-${model}`, turnId: 't1' });
    const succeed = (model: string) => api.succeeded({ type: 'api_attempt_succeeded', call: call(model), durationSeconds: 1 }, START);
    const requests = (model: string) => series('hermes_api_requests_total', { kind: 'main', provider: 'openrouter', model, outcome: 'success' });
    for (let index = 0; index < 256; index += 1) succeed(`model-${index}`);
    succeed('model-256');
    harness.expire();
    let samples = await harness.samples();
    expect(samples.get(requests('model-255'))).toBe(1);
    expect(samples.get(requests('model-256'))).toBeUndefined();
    expect(samples.get(requests('other'))).toBe(1);

    harness.advance(TTL);
    harness.expire();
    succeed('model-256');
    succeed('model-0');
    samples = await harness.samples();
    expect(samples.get(requests('model-256'))).toBe(1);
    expect(samples.get(requests('model-0'))).toBe(1);
    expect(samples.get(requests('model-1'))).toBeUndefined();
    expect(samples.get(requests('other'))).toBeUndefined();
    // Each model had a request counter and a duration histogram (finish reason unknown too);
    // 257 label sets of each expired (the 256 models and the overflow `other`).
    expect(samples.get(series('hermes_sidecar_series_expired_total', { metric: 'hermes_api_requests_total' }))).toBe(257);
    expect(samples.get(series('hermes_sidecar_series_expired_total', { metric: 'hermes_api_request_duration_seconds' }))).toBe(257);
  });
});

describe('series expiry in the sidecar', () => {
  it('runs in sidecar.sweep() on the injected clock, over the real ingest path', async () => {
    const harness = startTestSidecar({ 'metrics.series-ttl': '600', 'metrics.max-series': '4' });
    const call = (tool: string) => ({ event: 'post_tool_call', tool_name: tool, status: 'ok', duration_ms: 10 });
    const calls = (tool: string) => series('hermes_tool_calls_total', { tool, status: 'ok' });
    // Two label sets per tool (calls and duration): a cap of 4 holds two tools.
    await harness.postNdjson([call('a'), call('b'), call('c')]);
    await harness.sidecar.sweep();
    let samples = await harness.samples();
    expect(samples.get(calls('c'))).toBeUndefined();
    expect(samples.get(calls('other'))).toBe(1);
    harness.clock.advance(600);
    await harness.sidecar.sweep();
    await harness.postNdjson([call('c')]);
    samples = await harness.samples();
    expect(samples.get(calls('a'))).toBeUndefined();
    expect(samples.get(calls('c'))).toBe(1);
    expect(samples.get('hermes_sidecar_series')).toBe(2);
    expect(samples.get(series('hermes_sidecar_series_expired_total', { metric: 'hermes_tool_calls_total' }))).toBe(3);
  });
});
