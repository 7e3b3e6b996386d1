/**
 * The protobuf exposition (src/exposition/protobuf.ts), decoded back with protobufjs' reflection
 * from client_model's field numbers (test/support/metrics.proto): exact values for counters,
 * gauges, classic buckets with exemplars and native buckets, label pairs sorted, empty families
 * left out, and the per-series cache giving the same bytes as a fresh encoding.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProtobufSerializer } from '../../src/exposition/protobuf.js';
import { Serializer } from '../../src/exposition/serializer.js';
import { OPEN, type MetricSpec } from '../../src/metrics/declare.js';
import { CounterStorage, GaugeStorage, HistogramStorage, type FamilyOptions } from '../../src/metrics/families.js';
import { DEFAULT_ZERO_THRESHOLD, type NativeHistogramSettings } from '../../src/metrics/native.js';
import { parseSamples } from '../support/exposition.js';
import { classicSamples, decodeExposition, nativeBuckets, sortedLabelSamples } from '../support/protobuf.js';

function options(name: string, type: MetricSpec['type'], labelNames: readonly string[]): FamilyOptions {
  const spec: MetricSpec = { name, help: `${name} help, "quoted" \\ and ünïcödé`, type, labelNames, scope: 'self', labels: Object.fromEntries(labelNames.map((label) => [label, OPEN])), preinit: false };
  return { spec, enabled: true, budget: undefined, foldLabels: [], foldValue: 'other', onFold: () => undefined, onInvalid: () => undefined };
}

const NATIVE: NativeHistogramSettings = { schema: 3, zeroThreshold: DEFAULT_ZERO_THRESHOLD, maxBuckets: 160 };

function families() {
  const calls = new CounterStorage(options('demo_calls_total', 'counter', ['tool', 'outcome']));
  calls.inc({ tool: 'terminal', outcome: 'ok' }, 41);
  calls.inc({ tool: 'ünïcödé "x"', outcome: 'error' }, 0.5);
  const depth = new GaugeStorage(options('demo_depth', 'gauge', []));
  depth.set({}, -2.5);
  const unused = new CounterStorage(options('demo_unused_total', 'counter', ['reason']));
  const duration = new HistogramStorage(options('demo_duration_seconds', 'histogram', ['tool']), [0.5, 1, 5], NATIVE);
  for (const value of [0, 1, 2, 100]) duration.observe({ tool: 'terminal' }, value);
  duration.observe({ tool: 'terminal' }, 1.5, { labels: { turn_id: 'T1', tool_call_id: 'call_1' }, value: 1.5, timestamp: 1796133401.25 });
  const idle = new HistogramStorage(options('demo_idle_seconds', 'histogram', []), [1], NATIVE);
  const classic = new HistogramStorage(options('demo_classic_bytes', 'histogram', []), [10], undefined);
  classic.observe({}, 3);
  return { calls, depth, unused, duration, idle, classic };
}

describe('protobuf exposition', () => {
  it('decodes to exactly the families written, with native buckets beside the classic ones', () => {
    const all = families();
    const decoded = decodeExposition(Buffer.concat(new ProtobufSerializer().serialize(Object.values(all))));
    expect(decoded.map((family) => [family.name, family.type])).toEqual([
      // demo_unused_total has no series and is left out.
      ['demo_calls_total', 'COUNTER'],
      ['demo_depth', 'GAUGE'],
      ['demo_duration_seconds', 'HISTOGRAM'],
      ['demo_idle_seconds', 'HISTOGRAM'],
      ['demo_classic_bytes', 'HISTOGRAM'],
    ]);
    const [calls, depth, duration, idle, classic] = decoded;
    expect(calls?.help).toBe('demo_calls_total help, "quoted" \\ and ünïcödé');
    expect(calls?.metric.map((metric) => [metric.label, metric.counter?.value])).toEqual([
      // Sorted by name: outcome before tool.
      [[{ name: 'outcome', value: 'ok' }, { name: 'tool', value: 'terminal' }], 41],
      [[{ name: 'outcome', value: 'error' }, { name: 'tool', value: 'ünïcödé "x"' }], 0.5],
    ]);
    expect(depth?.metric[0]?.gauge?.value).toBe(-2.5);

    const histogram = duration?.metric[0]?.histogram;
    expect(histogram?.sampleCount).toBe(5);
    expect(histogram?.sampleSum).toBe(104.5);
    // Cumulative classic buckets, no +Inf bucket (the sample count is it): ≤0.5: 0; ≤1: 0, 1; ≤5: 0, 1, 1.5, 2.
    expect(histogram?.bucket.map((bucket) => [bucket.upperBound, bucket.cumulativeCount])).toEqual([
      [0.5, 1],
      [1, 2],
      [5, 4],
    ]);
    expect(histogram?.bucket[2]?.exemplar).toEqual({
      label: [{ name: 'tool_call_id', value: 'call_1' }, { name: 'turn_id', value: 'T1' }],
      value: 1.5,
      timestamp: { seconds: 1796133401, nanos: 250_000_000 },
    });
    expect(histogram?.schema).toBe(3);
    expect(histogram?.zeroThreshold).toBe(2 ** -128);
    expect(histogram?.zeroCount).toBe(1);
    // Schema 3 keys, by hand: 1 = 2^(0/8) → 0; 1.5 ≤ 2^(5/8) = 1.542 → 5; 2 = 2^(8/8) → 8; 100 ≤ 2^(54/8) = 107.6 → 54.
    expect(histogram?.positiveSpan).toEqual([
      { offset: 0, length: 1 },
      { offset: 4, length: 1 },
      { offset: 2, length: 1 },
      { offset: 45, length: 1 },
    ]);
    expect(histogram?.positiveDelta).toEqual([1, 0, 0, 0]);
    expect(nativeBuckets(histogram as NonNullable<typeof histogram>)).toEqual(new Map([[0, 1], [5, 1], [8, 1], [54, 1]]));

    // An unobserved histogram is still native: its zero threshold is positive.
    expect(idle?.metric[0]?.histogram).toMatchObject({ sampleCount: 0, schema: 3, zeroThreshold: 2 ** -128, zeroCount: 0, positiveSpan: [], positiveDelta: [] });
    // Storage without native buckets sends a classic histogram only (zero threshold 0, no spans).
    expect(classic?.metric[0]?.histogram).toMatchObject({ sampleCount: 1, sampleSum: 3, zeroThreshold: 0, positiveSpan: [], positiveDelta: [] });
  });

  it('carries the same classic samples as the text format', () => {
    const views = Object.values(families());
    const text = sortedLabelSamples(parseSamples(new Serializer().serialize(views, 'text').join('')));
    expect(classicSamples(decodeExposition(Buffer.concat(new ProtobufSerializer().serialize(views))))).toEqual(text);
  });

  it('re-encodes only what moved, and the cached bytes equal a fresh encoding', () => {
    const all = families();
    const views = Object.values(all);
    const serializer = new ProtobufSerializer();
    const first = serializer.serialize(views);
    expect(serializer.serialize(views)).toEqual(first);
    const unchanged = serializer.serialize(views);
    // Unwritten series are the very same byte arrays as before.
    expect(unchanged.filter((part) => first.includes(part)).length).toBeGreaterThan(views.length);
    all.duration.observe({ tool: 'terminal' }, 0.25);
    all.calls.inc({ tool: 'terminal', outcome: 'ok' });
    const after = Buffer.concat(serializer.serialize(views));
    expect(after).toEqual(Buffer.concat(new ProtobufSerializer().serialize(views)));
    const decoded = decodeExposition(after);
    expect(decoded[0]?.metric[0]?.counter?.value).toBe(42);
    expect(decoded[2]?.metric[0]?.histogram?.sampleCount).toBe(6);
  });

  it('round-trips any label value and any finite counter or gauge value', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary', maxLength: 40 }), fc.double({ noNaN: true, noDefaultInfinity: true })), { minLength: 1, maxLength: 8 }), (writes) => {
        const gauge = new GaugeStorage(options('demo_any', 'gauge', ['value']));
        const expected = new Map<string, number>();
        for (const [label, value] of writes) {
          gauge.set({ value: label }, value);
          expected.set(label, value);
        }
        const [family] = decodeExposition(Buffer.concat(new ProtobufSerializer().serialize([gauge])));
        const decoded = new Map(family?.metric.map((metric) => [metric.label[0]?.value ?? '', metric.gauge?.value ?? Number.NaN]));
        // -0 and 0 are one gauge value to storage (it skips a set that does not change the value).
        expect([...decoded].map(([label, value]) => [label, value + 0])).toEqual([...expected].map(([label, value]) => [label, value + 0]));
      }),
      { numRuns: 300 },
    );
  });
});
