/**
 * Native (exponential) histogram buckets, kept beside each histogram series' classic buckets so
 * one protobuf exposition serves a scraper of either kind.
 *
 * The semantics are client_golang's (prometheus/histogram.go): for schema s the bucket with key k
 * holds the observations v with 2^((k-1)·2^-s) < v <= 2^(k·2^-s) (upper-inclusive, found through
 * frexp as client_golang does); observations at or below the zero threshold go to the zero bucket.
 * When a series holds more populated buckets than the limit, its resolution is halved (the schema
 * decremented, neighbouring bucket pairs merged) until it fits, never below schema -4. Observations
 * are never negative (storage refuses them), so there are positive buckets only.
 *
 * Memory per series: the populated buckets as two sorted typed arrays (key, count), 12 bytes a
 * bucket plus growth slack (the arrays double, up to the bucket limit plus one), bounded by the
 * bucket limit whatever the values: 23 bytes a bucket in all at 84 buckets, where a Map takes 43 (bench/children/nativeMemory.ts, bench section `series`). A new bucket is an insertion into at most 160 entries; finding
 * one is a binary search (whose first steps read the same few keys of a series every time, so they
 * stay in cache however many series take turns); rendering walks them in order with no sort.
 */

/** The finest and coarsest schemas Prometheus accepts. */
export const MAX_SCHEMA = 8;
export const MIN_SCHEMA = -4;
/** client_golang's recommended limit and OpenTelemetry's default exponential histogram size. */
export const MAX_NATIVE_BUCKETS = 160;
/** client_golang's DefNativeHistogramZeroThreshold, 2^-128: a bucket boundary at every schema. */
export const DEFAULT_ZERO_THRESHOLD = 2 ** -128;
/** client_golang's recommended NativeHistogramBucketFactor (schema 3). */
export const DEFAULT_BUCKET_FACTOR = 1.1;

export interface NativeHistogramSettings {
  /** The schema new series start at (finest resolution); a series may lower its own. */
  readonly schema: number;
  /** Observations at or below it count in the zero bucket; positive, so Prometheus always sees a native histogram. */
  readonly zeroThreshold: number;
  /** Most populated buckets a series keeps before it halves its resolution. */
  readonly maxBuckets: number;
}

/** The default settings: schema 3 (bucket factor 1.1), zero threshold 2^-128, 160 buckets. */
export const DEFAULT_NATIVE_SETTINGS: NativeHistogramSettings = {
  schema: schemaForFactor(DEFAULT_BUCKET_FACTOR),
  zeroThreshold: DEFAULT_ZERO_THRESHOLD,
  maxBuckets: MAX_NATIVE_BUCKETS,
};

export interface NativeBuckets {
  schema: number;
  readonly zeroThreshold: number;
  zeroCount: number;
  /** Keys of the populated buckets, ascending, in the first `size` entries. */
  keys: Int32Array;
  /** Their counts (never 0), same indices. */
  counts: Float64Array;
  size: number;
}

const INITIAL_CAPACITY = 8;

/**
 * The schema for a bucket factor, as client_golang's pickSchema: the coarsest schema whose
 * factor 2^(2^-schema) is no larger than the one asked for, within [-4, 8].
 */
export function schemaForFactor(factor: number): number {
  if (!(factor > 1) || !Number.isFinite(factor)) throw new RangeError('a bucket factor must be a finite number above 1');
  const floor = Math.floor(Math.log2(Math.log2(factor)));
  if (floor <= -MAX_SCHEMA) return MAX_SCHEMA;
  if (floor >= -MIN_SCHEMA) return MIN_SCHEMA;
  return floor === 0 ? 0 : -floor;
}

/** The relative width of a bucket at `schema`: 2^(2^-schema) - 1 (0.0905 at schema 3). */
export function relativeBucketWidth(schema: number): number {
  return 2 ** (2 ** -schema) - 1;
}

/**
 * Per positive schema, the frexp fractions in [0.5, 1) where its buckets end: 2^(j·2^-s - 1),
 * correctly rounded. client_golang's literal table was built by repeated multiplication and sits
 * up to 3 ulp below some of these near the top of an octave, so only a value within 3 ulp of such
 * a boundary can land one bucket apart from client_golang; powers of two agree exactly.
 */
const FRACTION_BOUNDS: readonly (readonly number[])[] = Array.from({ length: MAX_SCHEMA + 1 }, (_, schema) =>
  Array.from({ length: 2 ** schema }, (_unused, index) => 2 ** (index / 2 ** schema - 1)),
);

const scratch = new DataView(new ArrayBuffer(8));

/** Go's math.Frexp for a positive finite value: [fraction in [0.5, 1), exponent], value = fraction · 2^exponent. */
export function frexp(value: number): [number, number] {
  scratch.setFloat64(0, value);
  const high = scratch.getUint32(0);
  const biased = (high >>> 20) & 0x7ff;
  if (biased === 0) {
    // Subnormal: scaled into the normal range first (exact, a power of two).
    const [fraction, exponent] = frexp(value * 2 ** 64);
    return [fraction, exponent - 64];
  }
  scratch.setUint32(0, (high & 0x800fffff) | (1022 << 20));
  return [scratch.getFloat64(0), biased - 1022];
}

/**
 * Per positive schema, for each of FRACTION_CELLS equal cells of [0.5, 1) (the top
 * FRACTION_CELL_BITS bits of the mantissa), how many of its FRACTION_BOUNDS lie below the cell's
 * start. Cells are narrower (2^-11) than the closest two bounds of any schema (0.00135 at schema
 * 8), so a cell holds at most one bound, and one comparison with it finishes the search: Go's
 * sort.SearchFloat64s in a table read, where a binary search over random observations
 * mispredicted a branch at every step (a quarter of a native observation's time).
 */
const FRACTION_CELL_BITS = 10;
const FRACTION_CELLS = 1 << FRACTION_CELL_BITS;

const BOUNDS_BELOW_CELL: readonly Uint16Array[] = FRACTION_BOUNDS.map((bounds) => {
  const below = new Uint16Array(FRACTION_CELLS);
  let count = 0;
  for (let cell = 0; cell < FRACTION_CELLS; cell += 1) {
    const start = 0.5 + cell / (2 * FRACTION_CELLS);
    while (count < bounds.length && (bounds[count] as number) < start) count += 1;
    below[cell] = count;
  }
  return below;
});

/**
 * A double and its two 32-bit halves, sharing one buffer: reading a value's exponent bits is a
 * store and a load, with no byte swap (DataView reads big-endian by default).
 */
const bitsFloat = new Float64Array(1);
const bitsWords = new Uint32Array(bitsFloat.buffer);
/** Which of the two words holds the sign, exponent and top of the mantissa on this machine. */
const HIGH_WORD = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** The key of the bucket holding a positive finite value at `schema`. */
export function bucketKey(value: number, schema: number): number {
  bitsFloat[0] = value;
  const high = bitsWords[HIGH_WORD] as number;
  const biased = (high >>> 20) & 0x7ff;
  if (schema > 0 && biased !== 0) {
    // frexp inline (normal values): fraction in [0.5, 1), exponent = biased - 1022.
    bitsWords[HIGH_WORD] = (high & 0x800fffff) | (1022 << 20);
    const fraction = bitsFloat[0];
    const bounds = FRACTION_BOUNDS[schema] as readonly number[];
    const cell = (high >>> (20 - FRACTION_CELL_BITS)) & (FRACTION_CELLS - 1);
    let index = (BOUNDS_BELOW_CELL[schema] as Uint16Array)[cell] as number;
    if (index < bounds.length && (bounds[index] as number) < fraction) index += 1;
    return index + (biased - 1023) * bounds.length;
  }
  return slowBucketKey(value, schema);
}

/** bucketKey for subnormal values and schemas of 0 and below (off the hot path: its own function keeps bucketKey small enough to inline). */
function slowBucketKey(value: number, schema: number): number {
  const [fraction, exponent] = frexp(value);
  if (schema > 0) {
    const bounds = FRACTION_BOUNDS[schema] as readonly number[];
    return searchBounds(bounds, fraction) + (exponent - 1) * bounds.length;
  }
  // An exact power of two ends its bucket: it belongs below.
  const key = fraction === 0.5 ? exponent - 1 : exponent;
  const offset = (1 << -schema) - 1;
  return (key + offset) >> -schema;
}

/** Smallest index whose bound is >= fraction (Go's sort.SearchFloat64s). */
function searchBounds(bounds: readonly number[], fraction: number): number {
  let low = 0;
  let high = bounds.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((bounds[middle] as number) < fraction) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The upper bound of bucket `key` at `schema`: 2^(key·2^-schema). */
export function bucketUpperBound(key: number, schema: number): number {
  return 2 ** (key * 2 ** -schema);
}

export function newNativeBuckets(settings: NativeHistogramSettings): NativeBuckets {
  return { schema: settings.schema, zeroThreshold: settings.zeroThreshold, zeroCount: 0, keys: new Int32Array(0), counts: new Float64Array(0), size: 0 };
}

/** Index of the first key >= `key` among the populated buckets. */
function lowerBound(buckets: NativeBuckets, key: number): number {
  let low = 0;
  let high = buckets.size;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((buckets.keys[middle] as number) < key) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Adds `count` observations to bucket `key`, inserting it in key order when it is new. The arrays
 * double as they fill, but not past `maxCapacity` (the bucket limit plus the one bucket a series
 * holds before it halves), so a series at the limit keeps 161 slots, not 256.
 */
export function addToBucket(buckets: NativeBuckets, key: number, count: number, maxCapacity = Number.POSITIVE_INFINITY): void {
  const index = lowerBound(buckets, key);
  if (index < buckets.size && buckets.keys[index] === key) {
    (buckets.counts[index] as number) += count;
    return;
  }
  if (buckets.size === buckets.keys.length) {
    const length = buckets.keys.length;
    // Past the cap only one at a time: at the coarsest schema a series may hold more than the limit.
    const capacity = Math.max(length + 1, Math.min(Math.max(INITIAL_CAPACITY, length * 2), maxCapacity));
    const keys = new Int32Array(capacity);
    const counts = new Float64Array(capacity);
    keys.set(buckets.keys);
    counts.set(buckets.counts);
    buckets.keys = keys;
    buckets.counts = counts;
  }
  buckets.keys.copyWithin(index + 1, index, buckets.size);
  buckets.counts.copyWithin(index + 1, index, buckets.size);
  buckets.keys[index] = key;
  buckets.counts[index] = count;
  buckets.size += 1;
}

/** The populated buckets as key → count (tests, benchmarks). */
export function populatedBuckets(buckets: NativeBuckets): Map<number, number> {
  const map = new Map<number, number>();
  for (let index = 0; index < buckets.size; index += 1) map.set(buckets.keys[index] as number, buckets.counts[index] as number);
  return map;
}

/**
 * Halves the resolution: schema - 1, bucket k merged into ceil(k/2) (client_golang's
 * doubleBucketWidth). ceil(k/2) keeps the key order, so neighbours merge in place.
 */
function halveResolution(buckets: NativeBuckets): void {
  const { keys, counts } = buckets;
  let size = 0;
  for (let index = 0; index < buckets.size; index += 1) {
    // + 0 turns Math.ceil's -0 into 0.
    const key = Math.ceil((keys[index] as number) / 2) + 0;
    if (size > 0 && keys[size - 1] === key) {
      (counts[size - 1] as number) += counts[index] as number;
      continue;
    }
    keys[size] = key;
    counts[size] = counts[index] as number;
    size += 1;
  }
  buckets.size = size;
  buckets.schema -= 1;
}

/**
 * Counts one observation (finite, not negative: the caller refused the rest). Returns how many
 * times the series halved its resolution to stay within the bucket limit (0 almost always).
 */
export function observeNative(buckets: NativeBuckets, value: number, settings: NativeHistogramSettings): number {
  if (value <= buckets.zeroThreshold) {
    buckets.zeroCount += 1;
    return 0;
  }
  addToBucket(buckets, bucketKey(value, buckets.schema), 1, settings.maxBuckets + 1);
  let halvings = 0;
  while (buckets.size > settings.maxBuckets && buckets.schema > MIN_SCHEMA) {
    halveResolution(buckets);
    halvings += 1;
  }
  return halvings;
}

export interface BucketSpan {
  /** Gap to the previous span's end (for the first span, its first key). */
  readonly offset: number;
  readonly length: number;
}

/** The populated buckets as the protobuf exposition lays them out: spans and count deltas, in key order. */
export function spansAndDeltas(buckets: NativeBuckets): { spans: BucketSpan[]; deltas: number[] } {
  const spans: BucketSpan[] = [];
  const deltas: number[] = [];
  let previousCount = 0;
  let previousKey: number | undefined;
  let spanStart = 0;
  let spanOffset = 0;
  for (let index = 0; index < buckets.size; index += 1) {
    const key = buckets.keys[index] as number;
    if (previousKey === undefined || key !== previousKey + 1) {
      if (previousKey !== undefined) spans.push({ offset: spanOffset, length: previousKey + 1 - spanStart });
      spanOffset = previousKey === undefined ? key : key - previousKey - 1;
      spanStart = key;
    }
    const count = buckets.counts[index] as number;
    deltas.push(count - previousCount);
    previousCount = count;
    previousKey = key;
  }
  if (previousKey !== undefined) spans.push({ offset: spanOffset, length: previousKey + 1 - spanStart });
  return { spans, deltas };
}
