/**
 * Decoding the protobuf exposition for tests and benchmarks: the delimited MetricFamily stream
 * read back with protobufjs' reflection from test/support/metrics.proto (client_model's field
 * numbers), so a test checks the encoder against the schema rather than against itself.
 */
import protobuf from 'protobufjs';

export interface DecodedLabel {
  readonly name: string;
  readonly value: string;
}

export interface DecodedExemplar {
  readonly label: readonly DecodedLabel[];
  readonly value: number;
  readonly timestamp?: { readonly seconds: number; readonly nanos: number };
}

export interface DecodedHistogram {
  readonly sampleCount: number;
  readonly sampleSum: number;
  readonly bucket: readonly { readonly cumulativeCount: number; readonly upperBound: number; readonly exemplar?: DecodedExemplar }[];
  readonly schema: number;
  readonly zeroThreshold: number;
  readonly zeroCount: number;
  readonly positiveSpan: readonly { readonly offset: number; readonly length: number }[];
  readonly positiveDelta: readonly number[];
}

export interface DecodedMetric {
  readonly label: readonly DecodedLabel[];
  readonly counter?: { readonly value: number };
  readonly gauge?: { readonly value: number };
  readonly histogram?: DecodedHistogram;
}

export interface DecodedFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'COUNTER' | 'GAUGE' | 'SUMMARY' | 'UNTYPED' | 'HISTOGRAM' | 'GAUGE_HISTOGRAM';
  readonly metric: readonly DecodedMetric[];
}

const root = protobuf.loadSync(new URL('./metrics.proto', import.meta.url).pathname);
const MetricFamily = root.lookupType('io.prometheus.client.MetricFamily');

/** protobufjs fills absent message fields with null: left out instead, so an absent field reads as undefined. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== null).map(([key, inner]) => [key, withoutNulls(inner)]));
}

/** Every MetricFamily of a delimited stream, with default values filled in and 64-bit numbers as numbers. */
export function decodeExposition(bytes: Uint8Array): DecodedFamily[] {
  const reader = protobuf.Reader.create(bytes);
  const families: DecodedFamily[] = [];
  while (reader.pos < reader.len) {
    const message = MetricFamily.decodeDelimited(reader);
    families.push(withoutNulls(MetricFamily.toObject(message, { longs: Number, enums: String, defaults: true, arrays: true })) as DecodedFamily);
  }
  return families;
}

/** A native histogram's buckets as key → count, from its spans and deltas. */
export function nativeBuckets(histogram: DecodedHistogram): Map<number, number> {
  const buckets = new Map<number, number>();
  let key = 0;
  let count = 0;
  let delta = 0;
  for (const span of histogram.positiveSpan) {
    key += span.offset;
    for (let index = 0; index < span.length; index += 1) {
      count += histogram.positiveDelta[delta] ?? Number.NaN;
      delta += 1;
      buckets.set(key, count);
      key += 1;
    }
  }
  return buckets;
}

/** The samples Prometheus ingests from a native scrape: one per counter or gauge series, one per native histogram series. */
export function nativeSampleCount(families: readonly DecodedFamily[]): number {
  let samples = 0;
  for (const family of families) {
    for (const metric of family.metric) {
      const histogram = metric.histogram;
      // A histogram without a zero threshold nor native buckets is read as classic: buckets + _sum + _count (+Inf added).
      const native = histogram === undefined || histogram.zeroThreshold > 0 || histogram.zeroCount > 0 || histogram.positiveDelta.length > 0;
      samples += native ? 1 : histogram.bucket.length + 3;
    }
  }
  return samples;
}

const labelKey = (name: string, labels: readonly DecodedLabel[]): string => {
  const pairs = [...labels]
    .filter((label) => label.value !== '')
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((label) => `${label.name}="${label.value}"`);
  return pairs.length === 0 ? name : `${name}{${pairs.join(',')}}`;
};

/**
 * The classic samples a protobuf exposition carries (counters, gauges, histogram buckets with the
 * +Inf bucket from the count, `_sum`, `_count`), keyed by `name{labels}` with labels sorted by
 * name and empty ones left out, as Prometheus would store them.
 */
export function classicSamples(families: readonly DecodedFamily[]): Map<string, number> {
  const samples = new Map<string, number>();
  for (const family of families) {
    for (const metric of family.metric) {
      const histogram = metric.histogram;
      if (histogram === undefined) {
        samples.set(labelKey(family.name, metric.label), (metric.counter ?? metric.gauge)?.value ?? Number.NaN);
        continue;
      }
      for (const bucket of histogram.bucket) {
        samples.set(labelKey(`${family.name}_bucket`, [...metric.label, { name: 'le', value: String(bucket.upperBound) }]), bucket.cumulativeCount);
      }
      samples.set(labelKey(`${family.name}_bucket`, [...metric.label, { name: 'le', value: '+Inf' }]), histogram.sampleCount);
      samples.set(labelKey(`${family.name}_sum`, metric.label), histogram.sampleSum);
      samples.set(labelKey(`${family.name}_count`, metric.label), histogram.sampleCount);
    }
  }
  return samples;
}

/** Text-format samples (test/support/exposition.ts parseSamples) keyed the way classicSamples keys them. */
export function sortedLabelSamples(samples: ReadonlyMap<string, number>): Map<string, number> {
  const sorted = new Map<string, number>();
  for (const [series, value] of samples) {
    const brace = series.indexOf('{');
    if (brace < 0) {
      sorted.set(series, value);
      continue;
    }
    const labels = [...series.slice(brace + 1, -1).matchAll(/([A-Za-z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((match) => ({
      name: match[1] as string,
      value: (match[2] as string).replaceAll('\\n', '\n').replaceAll('\\"', '"').replaceAll('\\\\', '\\'),
    }));
    sorted.set(labelKey(series.slice(0, brace), labels), value);
  }
  return sorted;
}
