/**
 * Native histogram buckets (src/metrics/native.ts): bucket keys at and around their boundaries at
 * every schema, frexp at the edges of the double range, resolution halving at the bucket limit,
 * the zero bucket, and hostile values that must never yield a non-finite number.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addToBucket,
  bucketKey,
  bucketUpperBound,
  DEFAULT_NATIVE_SETTINGS,
  frexp,
  MAX_SCHEMA,
  MIN_SCHEMA,
  newNativeBuckets,
  observeNative,
  populatedBuckets,
  relativeBucketWidth,
  schemaForFactor,
  spansAndDeltas,
  type NativeHistogramSettings,
} from '../../src/metrics/native.js';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { createExposition, renderProtobuf, renderText } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { parseSamples } from '../support/exposition.js';
import { nativeBytesOfCapacity } from '../../src/metrics/seriesBudget.js';
import { decodeExposition, nativeBuckets as nativeBucketsOf, type DecodedHistogram } from '../support/protobuf.js';

/** The neighbouring doubles of a positive finite value (one ulp up or down). */
function adjacent(value: number, direction: 1 | -1): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  view.setBigUint64(0, view.getBigUint64(0) + BigInt(direction));
  return view.getFloat64(0);
}

const SCHEMAS = [8, 5, 3, 1, 0, -1, -2, -4] as const;

describe('bucketKey', () => {
  it.each(SCHEMAS)('puts every exact power of two at the top of its bucket at schema %i', (schema) => {
    // 2^e ends the bucket with key e·2^s when it is a boundary (schema >= 0, or e divisible by 2^-s).
    for (const exponent of [-1074, -1022, -100, -16, -1, 0, 1, 16, 100, 1023]) {
      const value = 2 ** exponent;
      const perOctave = 2 ** schema;
      // (+ 0 turns Math.ceil's -0 into 0.)
      const expected = schema >= 0 ? exponent * perOctave : Math.ceil(exponent * perOctave) + 0;
      expect(bucketKey(value, schema), `2^${exponent}`).toBe(expected);
    }
  });

  it.each(SCHEMAS)('moves just above a boundary to the next bucket and keeps just below in it at schema %i', (schema) => {
    const step = schema >= 0 ? 1 : 2 ** -schema;
    for (const exponent of [-20, -step, 0, step, 3 * step]) {
      if (schema < 0 && exponent % step !== 0) continue;
      const boundary = 2 ** exponent;
      const key = exponent * 2 ** schema;
      expect(bucketKey(boundary, schema)).toBe(key);
      expect(bucketKey(adjacent(boundary, 1), schema)).toBe(key + 1);
      expect(bucketKey(adjacent(boundary, -1), schema)).toBe(key);
    }
  });

  it('finds the interior boundaries of schema 3 (2^(k/8), upper-inclusive)', () => {
    // Worked by hand: 2^(4/8) = 1.41421…, 2^(5/8) = 1.54221…, 2^(53/8) = 98.70…, 2^(54/8) = 107.63…
    expect(bucketKey(1.5, 3)).toBe(5);
    expect(bucketKey(1.42, 3)).toBe(5);
    expect(bucketKey(1.414, 3)).toBe(4);
    expect(bucketKey(100, 3)).toBe(54);
    expect(bucketKey(0.001, 3)).toBe(-79); // 2^(-80/8) = 0.000977 < 0.001 <= 2^(-79/8) = 0.001065
    expect(bucketUpperBound(54, 3)).toBeCloseTo(107.6347, 4);
  });

  it('keeps hostile values finite: the largest and smallest doubles get integer keys', () => {
    for (const value of [Number.MAX_VALUE, Number.MIN_VALUE, 1e308, 5e-324, 2.2250738585072014e-308]) {
      for (const schema of SCHEMAS) expect(Number.isInteger(bucketKey(value, schema))).toBe(true);
    }
    expect(bucketKey(Number.MAX_VALUE, 0)).toBe(1024);
    expect(bucketKey(Number.MIN_VALUE, 0)).toBe(-1074);
  });
});

describe('bucketKey against its definition', () => {
  it.each(SCHEMAS)('puts a value v in the bucket k with 2^((k-1)·2^-s) < v <= 2^(k·2^-s) at schema %i', (schema) => {
    fc.assert(
      fc.property(fc.double({ min: Number.MIN_VALUE, max: Number.MAX_VALUE, noNaN: true }), (value) => {
        const key = bucketKey(value, schema);
        // Bounds computed independently in log space; a value within a few ulp of a boundary is
        // only checked to be on one of its two sides.
        const position = Math.log2(value) * 2 ** schema;
        const slack = 1e-9 * Math.max(1, Math.abs(position));
        expect(position).toBeLessThanOrEqual(key + slack);
        expect(position).toBeGreaterThan(key - 1 - slack);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('bucketKey through the per-cell table', () => {
  /** The definition for a positive schema: frexp, then the first bound >= the fraction, by a linear scan. */
  function referenceKey(value: number, schema: number): number {
    const [fraction, exponent] = frexp(value);
    const perOctave = 2 ** schema;
    let index = 0;
    while (index < perOctave && 2 ** (index / perOctave - 1) < fraction) index += 1;
    return index + (exponent - 1) * perOctave;
  }

  const POSITIVE_SCHEMAS = [8, 7, 6, 5, 4, 3, 2, 1] as const;

  it.each(POSITIVE_SCHEMAS)('agrees with the definition at, one ulp around and one cell around every bound of schema %i', (schema) => {
    const perOctave = 2 ** schema;
    const mismatches: string[] = [];
    for (const octave of [-30, -1, 0, 1, 40]) {
      for (let index = 0; index < perOctave; index += 1) {
        const bound = 2 ** (index / perOctave + octave);
        for (const value of [bound, adjacent(bound, 1), adjacent(bound, -1), bound * (1 + 2 ** -11), bound * (1 - 2 ** -11)]) {
          if (bucketKey(value, schema) !== referenceKey(value, schema)) mismatches.push(`${value} at schema ${schema}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('agrees with the definition for any normal or subnormal double at every positive schema', () => {
    fc.assert(
      fc.property(fc.double({ min: Number.MIN_VALUE, max: Number.MAX_VALUE, noNaN: true }), fc.constantFrom(...POSITIVE_SCHEMAS), (value, schema) => {
        expect(bucketKey(value, schema)).toBe(referenceKey(value, schema));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('frexp', () => {
  it.each([
    [1, 0.5, 1],
    [0.75, 0.75, 0],
    [8, 0.5, 4],
    [5e-324, 0.5, -1073],
    [Number.MAX_VALUE, 1 - 2 ** -53, 1024],
  ])('frexp(%d) = [%d, %i]', (value, fraction, exponent) => {
    expect(frexp(value)).toEqual([fraction, exponent]);
  });
});

describe('schemaForFactor', () => {
  it.each([
    [1.1, 3],
    [2, 0],
    [4, -1],
    [1.0001, 8],
    [2 ** 16, -4],
    [1e9, -4],
    [1.5, 1],
    [1.2, 2],
  ])('factor %d → schema %i', (factor, schema) => {
    expect(schemaForFactor(factor)).toBe(schema);
    // The chosen schema's buckets are never wider than asked for (except where the schema range clamps it).
    if (schema > MIN_SCHEMA && schema < MAX_SCHEMA) expect(relativeBucketWidth(schema) + 1).toBeLessThanOrEqual(factor);
  });

  it('refuses a factor of 1 or less', () => {
    expect(() => schemaForFactor(1)).toThrow(RangeError);
    expect(() => schemaForFactor(Number.NaN)).toThrow(RangeError);
  });
});

describe('observeNative', () => {
  it('counts observations at or below the zero threshold in the zero bucket', () => {
    const settings: NativeHistogramSettings = { schema: 3, zeroThreshold: 0.001, maxBuckets: 160 };
    const buckets = newNativeBuckets(settings);
    for (const value of [0, 0.0005, 0.001, 0.0011]) observeNative(buckets, value, settings);
    expect(buckets.zeroCount).toBe(3);
    expect([...populatedBuckets(buckets)]).toEqual([[bucketKey(0.0011, 3), 1]]);
  });

  it('halves the resolution when the bucket limit is passed, merging key k into ceil(k/2)', () => {
    const settings: NativeHistogramSettings = { schema: 3, zeroThreshold: DEFAULT_NATIVE_SETTINGS.zeroThreshold, maxBuckets: 4 };
    const buckets = newNativeBuckets(settings);
    // Keys at schema 3: 1 → 0, 1.1 → 2, 1.5 → 5, 2 → 8; then 3 → 13 makes five buckets.
    const values = [1, 1.1, 1.1, 1.5, 2];
    for (const value of values) expect(observeNative(buckets, value, settings)).toBe(0);
    expect(buckets.schema).toBe(3);
    // Schema 2: 0 → 0, 2 → 1, 5 → 3, 8 → 4, 13 → 7: still five, so once more to schema 1: 0, 1, 2, 2, 4.
    expect(observeNative(buckets, 3, settings)).toBe(2);
    expect(buckets.schema).toBe(1);
    expect(populatedBuckets(buckets)).toEqual(new Map([[0, 1], [1, 2], [2, 2], [4, 1]]));
  });

  it('halves until the series fits and every observation is still counted', () => {
    const settings: NativeHistogramSettings = { schema: 3, zeroThreshold: DEFAULT_NATIVE_SETTINGS.zeroThreshold, maxBuckets: 3 };
    const buckets = newNativeBuckets(settings);
    const values = [1, 1.1, 1.1, 1.5, 2, 3];
    let halvings = 0;
    for (const value of values) halvings += observeNative(buckets, value, settings);
    expect(buckets.size).toBeLessThanOrEqual(3);
    expect([...populatedBuckets(buckets).values()].reduce((a, b) => a + b, 0)).toBe(values.length);
    expect(halvings).toBe(3 - buckets.schema);
    // Each value is in the bucket its key at the final schema names.
    const expected = new Map<number, number>();
    for (const value of values) expected.set(bucketKey(value, buckets.schema), (expected.get(bucketKey(value, buckets.schema)) ?? 0) + 1);
    expect(populatedBuckets(buckets)).toEqual(expected);
  });

  it('never goes below schema -4, even when the limit cannot be met', () => {
    const settings: NativeHistogramSettings = { schema: 3, zeroThreshold: DEFAULT_NATIVE_SETTINGS.zeroThreshold, maxBuckets: 1 };
    const buckets = newNativeBuckets(settings);
    for (const value of [1e-300, 1e300, Number.MAX_VALUE]) observeNative(buckets, value, settings);
    expect(buckets.schema).toBe(MIN_SCHEMA);
    expect(buckets.size).toBe(2);
    const { spans, deltas } = spansAndDeltas(buckets);
    expect([...spans.flatMap((span) => [span.offset, span.length]), ...deltas].every(Number.isFinite)).toBe(true);
  });
});

describe('addToBucket', () => {
  it('keeps the populated buckets sorted and counted as a Map would, through growth', () => {
    const buckets = newNativeBuckets(DEFAULT_NATIVE_SETTINGS);
    const reference = new Map<number, number>();
    let state = 12345;
    for (let index = 0; index < 2000; index += 1) {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      const key = (state % 301) - 150;
      addToBucket(buckets, key, 1);
      reference.set(key, (reference.get(key) ?? 0) + 1);
    }
    const sorted = new Map([...reference].sort(([a], [b]) => a - b));
    expect([...populatedBuckets(buckets)]).toEqual([...sorted]);
    expect(buckets.size).toBe(reference.size);
  });

  it('finds the bucket of any key among buckets with gaps of any width, as a Map would', () => {
    // Runs of neighbouring keys with gaps between them, and lone keys far out, inserted in any order.
    const key = fc.oneof(fc.integer({ min: -12, max: 12 }), fc.integer({ min: -3000, max: 3000 }), fc.constantFrom(-(2 ** 31), 2 ** 31 - 1));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 400 }), (writes) => {
        const buckets = newNativeBuckets(DEFAULT_NATIVE_SETTINGS);
        const reference = new Map<number, number>();
        for (const [at, count] of writes) {
          addToBucket(buckets, at, count);
          reference.set(at, (reference.get(at) ?? 0) + count);
        }
        const sorted = [...reference].sort(([a], [b]) => a - b);
        expect([...populatedBuckets(buckets)]).toEqual(sorted);
      }),
      { numRuns: 500 },
    );
  });
});

describe('spansAndDeltas', () => {
  it('lays populated buckets out as spans with gaps and count deltas', () => {
    const buckets = newNativeBuckets(DEFAULT_NATIVE_SETTINGS);
    for (const [key, count] of [[5, 2], [-3, 1], [6, 7], [-2, 4], [40, 1]] as const) addToBucket(buckets, key, count);
    expect(spansAndDeltas(buckets)).toEqual({
      spans: [
        { offset: -3, length: 2 },
        { offset: 6, length: 2 },
        { offset: 33, length: 1 },
      ],
      deltas: [1, 3, -2, 5, -6],
    });
  });

  it('has no spans for a histogram without positive buckets', () => {
    expect(spansAndDeltas(newNativeBuckets(DEFAULT_NATIVE_SETTINGS))).toEqual({ spans: [], deltas: [] });
  });
});

describe('native buckets in the registry', () => {
  it('keeps none with nativeHistograms false: the protobuf histogram is classic and its series is charged classic bytes only', async () => {
    const registryOf = (nativeHistograms: false | undefined) =>
      createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false, ...(nativeHistograms === undefined ? {} : { nativeHistograms }) });
    const classic = registryOf(false);
    const native = registryOf(undefined);
    const labels = { tool: 't', status: 'ok' } as const;
    for (const registry of [classic, native]) for (const seconds of [0.5, 1, 2, 4]) registry.metrics.toolCallDuration.observe(labels, seconds);
    const histogramOf = async (registry: typeof classic) =>
      decodeExposition(await renderProtobuf(createExposition(registry)))
        .find((family) => family.name === 'hermes_tool_call_duration_seconds')
        ?.metric.find((metric) => metric.histogram?.sampleCount === 4)?.histogram;
    const withoutNative = await histogramOf(classic);
    expect(withoutNative?.sampleSum).toBe(7.5);
    // Prometheus reads a histogram as native only with a zero threshold, a zero count or spans.
    expect([withoutNative?.zeroThreshold, withoutNative?.zeroCount, withoutNative?.positiveSpan]).toEqual([0, 0, []]);
    const withNative = await histogramOf(native);
    expect([withNative?.schema, withNative?.zeroThreshold]).toEqual([3, DEFAULT_NATIVE_SETTINGS.zeroThreshold]);
    // The same series without its native arrays: exactly their bytes less.
    expect(native.seriesBytes() - classic.seriesBytes()).toBe(nativeBytesOfCapacity(8));
    const samples = parseSamples(await renderText(createExposition(classic)));
    expect(samples.get('hermes_tool_call_duration_seconds_count{tool="t",status="ok"}')).toBe(4);
  });

  it('keeps them in catalogue histograms with the configured settings and counts every halving', async () => {
    const registry = createMetricsRegistry({
      buckets: DEFAULT_BUCKETS,
      maxAgentSeries: 100,
      defaultMetrics: false,
      nativeHistograms: { schema: 3, zeroThreshold: DEFAULT_NATIVE_SETTINGS.zeroThreshold, maxBuckets: 2 },
    });
    const labels = { tool: 't', status: 'ok' } as const;
    // Schema 3 keys 0, 8, 16 (1 s, 2 s, 4 s): the third bucket halves to schema 2 (0, 4, 8), then 1 (0, 2, 4), then 0 (0, 1, 2), then -1 (0, 1, 1).
    for (const seconds of [1, 2, 4]) registry.metrics.toolCallDuration.observe(labels, seconds);
    const samples = parseSamples(await renderText(createExposition(registry)));
    expect(samples.get('hermes_sidecar_native_resolution_reductions_total')).toBe(4);
    const families = decodeExposition(await renderProtobuf(createExposition(registry)));
    const histogram = families.find((family) => family.name === 'hermes_tool_call_duration_seconds')?.metric.find((metric) => metric.histogram?.sampleCount === 3)?.histogram;
    expect(histogram?.schema).toBe(-1);
    expect(nativeBucketsOf(histogram as DecodedHistogram)).toEqual(new Map([[0, 1], [1, 2]]));
  });
});
