/**
 * The global series budget, and what a series costs in memory, in bytes: the figure the byte
 * budget (--metrics.max-series-bytes) adds up. A series is charged for everything that lives as
 * long as it does: its object and label values, its place in the family's index and sweep notes, its
 * classic and native bucket arrays, and the renderings a scrape caches for it (one text rendering,
 * src/exposition/serializer.ts, and its protobuf bytes, src/exposition/protobuf.ts), charged from
 * the start so a series costs the same whether a scraper has seen it yet or not.
 *
 * The constants are calibrated on 64-bit Node 20: the figures are within 10 % of the live heap and
 * Buffers measured for counters, classic and native histograms with short and 128-character label
 * values (tools/series-bytes.ts).
 */
import type { NativeBuckets } from './native.js';

/** The series object, its label-value array, its index entry and its four sweep notes. */
const SERIES_BYTES = 400;
/** Per label: a slot of the label-value array and one level of the index (a Map entry). */
const PER_LABEL_BYTES = 48;
/** A string's header; its characters follow (one byte each when Latin-1, two otherwise). */
const STRING_HEADER_BYTES = 24;
/** A cached rendering's entry and string headers (text and protobuf). */
const RENDERING_BYTES = 160;
/**
 * The label pairs' text kept for a series' renderings beyond the lines themselves: the escaped
 * pairs the serializer caches (built piece by piece, so held as a rope of its parts) and the
 * strings the protobuf encoder writes from, measured at about five times their length.
 */
const LABEL_TEXT_COPIES = 5;
/** A sample value as text or in protobuf, at most (shortest round-trip spelling of a double). */
const VALUE_BYTES = 24;
/** A typed array's object and buffer headers. */
const TYPED_ARRAY_BYTES = 200;
/** The native buckets' object beside its two arrays. */
const NATIVE_OBJECT_BYTES = 64;
/** Per native bucket slot: a key (4 bytes), a count (8), their share of allocation slack, and the protobuf bytes of a populated one. */
const NATIVE_SLOT_BYTES = 19;
/** A histogram's fixed share beyond its buckets: its object's extra fields and the protobuf message's fixed parts. */
const HISTOGRAM_BYTES = 600;

/** What every series of one family shares: the parts of its renderings that do not depend on label values. */
export interface SeriesShape {
  /** The sample name's length (the family name; `_bucket`, `_sum` and `_count` are added for histograms). */
  readonly nameLength: number;
  readonly labelNames: readonly string[];
  /** Histograms: the spellings of the finite bounds, in order; undefined for counters and gauges. */
  readonly bounds?: readonly string[];
}

const stringBytes = (text: string): number => {
  // eslint-disable-next-line no-control-regex -- Latin-1 is the one-byte representation V8 uses
  const oneByte = !/[^\u0000-\u00ff]/.test(text);
  return STRING_HEADER_BYTES + text.length * (oneByte ? 1 : 2);
};

/** Bytes of the label pairs as written in a rendering: `name="value",` each (escaping aside). */
function labelTextBytes(shape: SeriesShape, values: readonly string[]): number {
  let bytes = 0;
  shape.labelNames.forEach((name, index) => {
    bytes += name.length + Buffer.byteLength(values[index] ?? '', 'utf8') + 4;
  });
  return bytes;
}

/** The bytes of one series when it is created: everything but native buckets, which grow with observations. */
export function seriesBytes(shape: SeriesShape, values: readonly string[]): number {
  let bytes = SERIES_BYTES + shape.labelNames.length * PER_LABEL_BYTES;
  for (const value of values) bytes += stringBytes(value);
  const labels = labelTextBytes(shape, values);
  bytes += LABEL_TEXT_COPIES * labels;
  if (shape.bounds === undefined) {
    // One sample line in text, one Metric message in protobuf.
    return bytes + RENDERING_BYTES + 2 * (shape.nameLength + labels + VALUE_BYTES) + labels;
  }
  // The classic buckets (one number each, +Inf included), then one line per bucket, sum and count.
  const buckets = shape.bounds.length + 1;
  bytes += HISTOGRAM_BYTES + 16 + 8 * buckets;
  let text = 2 * (shape.nameLength + 8 + labels + VALUE_BYTES);
  for (const bound of shape.bounds) text += shape.nameLength + 16 + bound.length + labels + VALUE_BYTES;
  text += shape.nameLength + 20 + labels + VALUE_BYTES;
  // Protobuf: the labels once, then a count and an upper bound per bucket.
  const protobuf = labels + 2 * VALUE_BYTES + buckets * 2 * 10;
  return bytes + RENDERING_BYTES + text + protobuf;
}

/**
 * The bytes of a series' native buckets: the arrays as allocated (they grow by doubling, up to
 * the bucket limit) and their protobuf encoding (about three bytes a bucket, charged by capacity so the figure moves only when the arrays do).
 */
export function nativeBytes(native: NativeBuckets): number {
  return nativeBytesOfCapacity(native.keys.length);
}

/** nativeBytes of buckets whose arrays hold `capacity` entries (a key of 4 bytes and a count of 8 each). */
export function nativeBytesOfCapacity(capacity: number): number {
  return NATIVE_OBJECT_BYTES + 2 * TYPED_ARRAY_BYTES + capacity * NATIVE_SLOT_BYTES;
}

/**
 * The global series budget shared by every agent family, in label sets (--metrics.max-series)
 * and in bytes (--metrics.max-series-bytes, seriesBytes above). Once either is spent, a new label
 * set is folded into its family's overflow series: every open-set label becomes `other`, closed
 * ones stay, so the overflow series are few and bounded by the closed enumerations.
 */
export class SeriesBudget {
  private used = 0;
  private usedBytes = 0;

  /** `maxBytes`: 0 or absent for no byte budget. */
  constructor(
    readonly limit: number,
    readonly maxBytes = 0,
  ) {}

  /** A slot and `bytes` for a new label set: 'taken', or which budget refuses it. */
  take(bytes: number): 'taken' | 'series' | 'bytes' {
    if (this.used >= this.limit) return 'series';
    if (this.maxBytes > 0 && this.usedBytes + bytes > this.maxBytes) return 'bytes';
    this.used += 1;
    this.usedBytes += bytes;
    return 'taken';
  }

  /**
   * Bytes charged without asking: an overflow series (admitted past the budget, as refusing it
   * would lose counts), a pinned one, or native buckets that grew (negative: shrank).
   */
  charge(bytes: number): void {
    this.usedBytes += bytes;
  }

  /** The bytes (and the slot, when it held one) of a series that left. */
  give(bytes: number, slot: boolean): void {
    if (slot && this.used > 0) this.used -= 1;
    this.usedBytes = Math.max(0, this.usedBytes - bytes);
  }

  get spent(): number {
    return this.used;
  }

  /** Bytes charged for the live series of the families sharing this budget (seriesBytes). */
  get bytes(): number {
    return this.usedBytes;
  }
}

/**
 * Default of --metrics.max-series-bytes: room for the default 10,000 series of ordinary label
 * values (about 2 KiB each with their renderings, 6 KiB for a native histogram), so the count cap
 * binds first there; label values at their longest and the widest native histograms reach it
 * first, and then it, not the count, bounds what the series hold.
 */
export const DEFAULT_MAX_SERIES_BYTES = 96 * 1024 * 1024;
