/**
 * The protobuf exposition: family views in, `io.prometheus.client.MetricFamily` messages out,
 * each preceded by its length as a varint (`encoding=delimited`), the format Prometheus asks for
 * when it scrapes native histograms. Field numbers are those of client_model's metrics.proto.
 *
 * As client_golang sends them: a family's name is the sample name (a counter keeps its `_total`);
 * a histogram carries its classic buckets (cumulative, without the +Inf bucket, which is the
 * sample count) with their newest exemplars, and, when its storage keeps them, its native buckets
 * (schema, zero threshold and count, positive spans and deltas) in the same message, so a scraper
 * of either kind reads it; label pairs are sorted by name; a family without series is left out.
 *
 * The wire encoding is protobufjs' Writer. Like the text serializer, this one keeps each series'
 * encoded Metric message while the series' version has not moved, so a scrape encodes only the
 * series written since the previous one.
 */
import protobuf from 'protobufjs/minimal.js';
import type { Exemplar, FamilyView, HistogramSeries, ScalarSeries } from '../metrics/registry.js';
import { spansAndDeltas } from '../metrics/native.js';


type Writer = protobuf.Writer;

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const tag = (field: number, wire: number): number => (field << 3) | wire;

/** io.prometheus.client.MetricType */
const METRIC_TYPE: Readonly<Record<FamilyView['type'], number>> = { counter: 0, gauge: 1, histogram: 4 };

// Field numbers, message by message (metrics.proto).
const FAMILY_NAME = 1;
const FAMILY_HELP = 2;
const FAMILY_TYPE = 3;
const FAMILY_METRIC = 4;
const METRIC_LABEL = 1;
const METRIC_GAUGE = 2;
const METRIC_COUNTER = 3;
const METRIC_HISTOGRAM = 7;
const LABEL_NAME = 1;
const LABEL_VALUE = 2;
const SCALAR_VALUE = 1;
const HISTOGRAM_SAMPLE_COUNT = 1;
const HISTOGRAM_SAMPLE_SUM = 2;
const HISTOGRAM_BUCKET = 3;
const HISTOGRAM_SCHEMA = 5;
const HISTOGRAM_ZERO_THRESHOLD = 6;
const HISTOGRAM_ZERO_COUNT = 7;
const HISTOGRAM_POSITIVE_SPAN = 12;
const HISTOGRAM_POSITIVE_DELTA = 13;
const BUCKET_CUMULATIVE_COUNT = 1;
const BUCKET_UPPER_BOUND = 2;
const BUCKET_EXEMPLAR = 3;
const SPAN_OFFSET = 1;
const SPAN_LENGTH = 2;
const EXEMPLAR_LABEL = 1;
const EXEMPLAR_VALUE = 2;
const EXEMPLAR_TIMESTAMP = 3;
const TIMESTAMP_SECONDS = 1;
const TIMESTAMP_NANOS = 2;

function writeLabelPair(writer: Writer, field: number, name: string, value: string): void {
  writer.uint32(tag(field, LENGTH_DELIMITED)).fork();
  writer.uint32(tag(LABEL_NAME, LENGTH_DELIMITED)).string(name);
  writer.uint32(tag(LABEL_VALUE, LENGTH_DELIMITED)).string(value);
  writer.ldelim();
}

function writeExemplar(writer: Writer, field: number, exemplar: Exemplar): void {
  writer.uint32(tag(field, LENGTH_DELIMITED)).fork();
  for (const name of Object.keys(exemplar.labels).sort()) writeLabelPair(writer, EXEMPLAR_LABEL, name, exemplar.labels[name] ?? '');
  writer.uint32(tag(EXEMPLAR_VALUE, FIXED64)).double(exemplar.value);
  const seconds = Math.floor(exemplar.timestamp);
  const nanos = Math.min(999_999_999, Math.round((exemplar.timestamp - seconds) * 1e9));
  writer.uint32(tag(EXEMPLAR_TIMESTAMP, LENGTH_DELIMITED)).fork();
  writer.uint32(tag(TIMESTAMP_SECONDS, VARINT)).int64(seconds);
  writer.uint32(tag(TIMESTAMP_NANOS, VARINT)).int32(nanos);
  writer.ldelim();
  writer.ldelim();
}

function writeHistogram(writer: Writer, bounds: readonly number[], series: HistogramSeries): void {
  writer.uint32(tag(METRIC_HISTOGRAM, LENGTH_DELIMITED)).fork();
  writer.uint32(tag(HISTOGRAM_SAMPLE_COUNT, VARINT)).uint64(series.count);
  writer.uint32(tag(HISTOGRAM_SAMPLE_SUM, FIXED64)).double(series.sum);
  let cumulative = 0;
  for (let index = 0; index < bounds.length; index += 1) {
    cumulative += series.buckets[index] ?? 0;
    writer.uint32(tag(HISTOGRAM_BUCKET, LENGTH_DELIMITED)).fork();
    writer.uint32(tag(BUCKET_CUMULATIVE_COUNT, VARINT)).uint64(cumulative);
    writer.uint32(tag(BUCKET_UPPER_BOUND, FIXED64)).double(bounds[index] as number);
    const exemplar = series.exemplars?.[index];
    if (exemplar !== undefined) writeExemplar(writer, BUCKET_EXEMPLAR, exemplar);
    writer.ldelim();
  }
  const native = series.native;
  if (native !== undefined) {
    writer.uint32(tag(HISTOGRAM_SCHEMA, VARINT)).sint32(native.schema);
    writer.uint32(tag(HISTOGRAM_ZERO_THRESHOLD, FIXED64)).double(native.zeroThreshold);
    writer.uint32(tag(HISTOGRAM_ZERO_COUNT, VARINT)).uint64(native.zeroCount);
    const { spans, deltas } = spansAndDeltas(native);
    for (const span of spans) {
      writer.uint32(tag(HISTOGRAM_POSITIVE_SPAN, LENGTH_DELIMITED)).fork();
      writer.uint32(tag(SPAN_OFFSET, VARINT)).sint32(span.offset);
      writer.uint32(tag(SPAN_LENGTH, VARINT)).uint32(span.length);
      writer.ldelim();
    }
    if (deltas.length > 0) {
      writer.uint32(tag(HISTOGRAM_POSITIVE_DELTA, LENGTH_DELIMITED)).fork();
      for (const delta of deltas) writer.sint64(delta);
      writer.ldelim();
    }
  }
  writer.ldelim();
}

/** One series as a `metric` field of its MetricFamily: tag, length and the Metric message. */
function encodeMetric(family: FamilyView, series: ScalarSeries | HistogramSeries, labelOrder: readonly number[]): Uint8Array {
  const writer = protobuf.Writer.create();
  writer.uint32(tag(FAMILY_METRIC, LENGTH_DELIMITED)).fork();
  for (const index of labelOrder) {
    writeLabelPair(writer, METRIC_LABEL, family.labelNames[index] as string, series.labelValues[index] ?? '');
  }
  if (family.type === 'histogram') {
    writeHistogram(writer, family.bounds ?? [], series as HistogramSeries);
  } else {
    writer.uint32(tag(family.type === 'counter' ? METRIC_COUNTER : METRIC_GAUGE, LENGTH_DELIMITED)).fork();
    writer.uint32(tag(SCALAR_VALUE, FIXED64)).double((series as ScalarSeries).value);
    writer.ldelim();
  }
  writer.ldelim();
  return writer.finish();
}

function encodeHeader(family: FamilyView): Uint8Array {
  const writer = protobuf.Writer.create();
  writer.uint32(tag(FAMILY_NAME, LENGTH_DELIMITED)).string(family.name);
  writer.uint32(tag(FAMILY_HELP, LENGTH_DELIMITED)).string(family.help);
  writer.uint32(tag(FAMILY_TYPE, VARINT)).int32(METRIC_TYPE[family.type]);
  return writer.finish();
}

const lengthPrefix = (length: number): Uint8Array => protobuf.Writer.create().uint32(length).finish();

interface FamilyCache {
  readonly header: Uint8Array;
  /** Indices of the family's labels in name order: label pairs are written sorted. */
  readonly labelOrder: readonly number[];
}

/** Renders families as delimited MetricFamily messages; keep one per listener so its cache serves every scrape. */
export class ProtobufSerializer {
  private readonly series = new WeakMap<object, { version: number; bytes: Uint8Array }>();
  private readonly families = new WeakMap<FamilyView, FamilyCache>();

  /** The exposition as byte parts whose concatenation is the whole body. */
  serialize(families: readonly FamilyView[]): Uint8Array[] {
    const parts: Uint8Array[] = [];
    for (const family of families) this.serializeFamily(family, parts);
    return parts;
  }

  private serializeFamily(family: FamilyView, parts: Uint8Array[]): void {
    const { header, labelOrder } = this.familyCache(family);
    const metrics: Uint8Array[] = [];
    let length = header.length;
    for (const series of family.series()) {
      const bytes = this.metricOf(family, series, labelOrder);
      metrics.push(bytes);
      length += bytes.length;
    }
    if (metrics.length === 0) return;
    parts.push(lengthPrefix(length), header);
    for (const bytes of metrics) parts.push(bytes);
  }

  private familyCache(family: FamilyView): FamilyCache {
    const cached = this.families.get(family);
    if (cached !== undefined) return cached;
    const labelOrder = family.labelNames.map((_, index) => index).sort((a, b) => compare(family.labelNames[a] as string, family.labelNames[b] as string));
    const entry = { header: encodeHeader(family), labelOrder };
    if (family.stable) this.families.set(family, entry);
    return entry;
  }

  private metricOf(family: FamilyView, series: ScalarSeries | HistogramSeries, labelOrder: readonly number[]): Uint8Array {
    if (!family.stable) return encodeMetric(family, series, labelOrder);
    const cached = this.series.get(series);
    if (cached !== undefined && cached.version === series.version) return cached.bytes;
    const bytes = encodeMetric(family, series, labelOrder);
    this.series.set(series, { version: series.version, bytes });
    return bytes;
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
