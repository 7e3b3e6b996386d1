/**
 * The series budget in bytes (--metrics.max-series-bytes): what a series is charged, the figures
 * the registry exports, the fold past the byte budget, and every byte given back by expiry.
 */
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { nativeBytes, nativeBytesOfCapacity, SeriesBudget, seriesBytes, type SeriesShape } from '../../src/metrics/seriesBudget.js';
import { newNativeBuckets, observeNative, DEFAULT_NATIVE_SETTINGS } from '../../src/metrics/native.js';
import { parseSamples, series } from '../support/exposition.js';
import { defaultConfig } from '../../src/config.js';

const START = 1_700_000_000;
const TTL = 60;

function setup(maxSeriesBytes: number) {
  const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 10_000, maxSeriesBytes, defaultMetrics: false, seriesTtlSeconds: TTL });
  const exposition = createExposition(registry);
  let now = START;
  return {
    registry,
    metrics: registry.metrics,
    advance: (seconds: number) => void (now += seconds),
    sweep: () => {
      const step = registry.expirySteps(now);
      while (step()) {
        // bounded steps
      }
    },
    samples: async () => parseSamples(await renderText(exposition)),
  };
}

const tokens = (model: string) => ({ kind: 'main', provider: 'p', model, token_type: 'input' }) as const;

describe('seriesBytes', () => {
  const counter: SeriesShape = { nameLength: 'hermes_tokens_total'.length, labelNames: ['kind', 'provider', 'model', 'token_type'] };
  const histogram: SeriesShape = { ...counter, bounds: DEFAULT_BUCKETS.api_seconds.map(String) };

  it('charges longer label values more, and a histogram more than a counter of the same labels', () => {
    const short = seriesBytes(counter, ['main', 'p', 'm', 'input']);
    const long = seriesBytes(counter, ['main', 'p', 'm'.repeat(128), 'input']);
    // Each character is held as the value, in the rendered line, the cached label text and the protobuf bytes.
    expect(long - short).toBeGreaterThanOrEqual(127 * 8);
    expect(seriesBytes(histogram, ['main', 'p', 'm', 'input'])).toBeGreaterThan(3 * short);
  });

  it('charges native buckets by the slots their arrays hold, which stop at the bucket limit plus one', () => {
    const native = newNativeBuckets(DEFAULT_NATIVE_SETTINGS);
    expect(nativeBytes(native)).toBe(nativeBytesOfCapacity(0));
    // Spread values, a bucket each at schema 3, past the limit of 160.
    for (let index = 0; index < 400; index += 1) observeNative(native, 1.1 ** index, DEFAULT_NATIVE_SETTINGS);
    expect(native.keys.length).toBe(DEFAULT_NATIVE_SETTINGS.maxBuckets + 1);
    expect(nativeBytes(native)).toBe(nativeBytesOfCapacity(161));
  });
});

describe('the series byte budget', () => {
  it('exports the bytes of the live agent series and the limit, and gives every byte back once they expire', async () => {
    const t = setup(0);
    const idle = t.registry.seriesBytes();
    for (let index = 0; index < 20; index += 1) t.metrics.tokens.inc(tokens(`m${index}`));
    t.metrics.apiRequestDuration.observe({ kind: 'main', provider: 'p', model: 'm0', outcome: 'success' }, 0.5);
    const written = t.registry.seriesBytes();
    expect(written).toBeGreaterThan(idle + 20 * 1000);
    let samples = await t.samples();
    expect(samples.get('hermes_sidecar_series_bytes')).toBe(written);
    expect(samples.get('hermes_sidecar_series_bytes_limit')).toBe(0);
    t.sweep();
    t.advance(TTL);
    t.sweep();
    expect(t.registry.seriesBytes()).toBe(idle);
    samples = await t.samples();
    expect(samples.get('hermes_sidecar_series_bytes')).toBe(idle);
  });

  it('charges native buckets as they grow and takes them back with their series', () => {
    const t = setup(0);
    const labels = { kind: 'main', provider: 'p', model: 'm', outcome: 'success' } as const;
    t.metrics.apiRequestDuration.observe(labels, 1);
    const one = t.registry.seriesBytes();
    for (let index = 0; index < 200; index += 1) t.metrics.apiRequestDuration.observe(labels, 1.1 ** index);
    // 161 slots instead of 8: 153 slots more in the arrays.
    expect(t.registry.seriesBytes() - one).toBe(nativeBytesOfCapacity(161) - nativeBytesOfCapacity(8));
    t.sweep();
    t.advance(TTL);
    t.sweep();
    expect(t.registry.seriesBytes()).toBe(0);
  });

  it('folds a new label set that would pass the budget into its overflow series, counted by reason, and admits again once bytes are back', async () => {
    const probe = setup(0);
    probe.metrics.tokens.inc(tokens('m0'));
    const perSeries = probe.registry.seriesBytes();
    // Room for three series of this shape (the overflow series is charged past the budget).
    const t = setup(3 * perSeries + perSeries / 2);
    for (const model of ['m0', 'm1', 'm2', 'm3', 'm4']) t.metrics.tokens.inc(tokens(model));
    let samples = await t.samples();
    expect(samples.get(series('hermes_tokens_total', tokens('m2')))).toBe(1);
    expect(samples.get(series('hermes_tokens_total', tokens('m3')))).toBeUndefined();
    expect(samples.get(series('hermes_tokens_total', { kind: 'main', provider: 'other', model: 'other', token_type: 'input' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_series_bytes_refused_total', { metric: 'hermes_tokens_total' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_series_overflow_total', { metric: 'hermes_tokens_total' }))).toBe(2);
    expect(samples.get('hermes_sidecar_series')).toBe(4);
    t.sweep();
    t.advance(TTL);
    t.sweep();
    t.metrics.tokens.inc(tokens('m3'));
    samples = await t.samples();
    expect(samples.get(series('hermes_tokens_total', tokens('m3')))).toBe(1);
  });

  it('is set by --metrics.max-series-bytes, with a default that leaves room for the default series cap of ordinary series', () => {
    expect(defaultConfig({ 'metrics.max-series-bytes': '1048576' }).maxSeriesBytes).toBe(1_048_576);
    const config = defaultConfig();
    expect(config.maxSeriesBytes).toBe(96 * 1024 * 1024);
    // 10,000 counters of ordinary label values fit with room to spare.
    const shape: SeriesShape = { nameLength: 'hermes_tokens_total'.length, labelNames: ['kind', 'provider', 'model', 'token_type'] };
    expect(config.maxAgentSeries * seriesBytes(shape, ['main', 'openrouter', 'anthropic/claude-sonnet-4.6', 'cache_read'])).toBeLessThan(config.maxSeriesBytes / 2);
  });
});

describe('SeriesBudget', () => {
  it('grants exactly its limit', () => {
    const budget = new SeriesBudget(2);
    expect([budget.take(10), budget.take(10), budget.take(10)]).toEqual(['taken', 'taken', 'series']);
  });

  it('refuses a slot that would pass its byte budget, and takes bytes back with a slot', () => {
    const budget = new SeriesBudget(10, 100);
    expect([budget.take(60), budget.take(50), budget.take(40)]).toEqual(['taken', 'bytes', 'taken']);
    expect([budget.spent, budget.bytes]).toEqual([2, 100]);
    budget.give(60, true);
    budget.charge(5);
    expect([budget.spent, budget.bytes]).toEqual([1, 45]);
  });
});
