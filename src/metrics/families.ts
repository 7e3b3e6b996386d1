/**
 * Storage of the catalogue's metric families: typed counter, gauge and histogram tables on the
 * series table they share (src/metrics/seriesTable.ts: index, budget, folding, expiry).
 *
 * A series holds only its numbers, its label values and a version that every write bumps (the
 * serializer in src/exposition/ re-renders a series only when its version moved). Updating a
 * series is one Map lookup per label and an addition. Rendering lives elsewhere: nothing here
 * knows a format.
 *
 * A histogram series may also keep native (exponential) buckets of the same observations
 * (src/metrics/native.ts), for the protobuf exposition; their arrays grow with the buckets in
 * use, and the series byte budget is charged as they do.
 */
import { newNativeBuckets, observeNative, type NativeHistogramSettings } from './native.js';
import { nativeBytes, nativeBytesOfCapacity } from './seriesBudget.js';
import { HandleSeries, SeriesTable, type FamilyOptions } from './seriesTable.js';
import type { CounterHandle, Exemplar, HistogramHandle, HistogramSeries, Labels, ScalarSeries } from './series.js';

export type { CounterHandle, Exemplar, FamilyView, HistogramHandle, HistogramSeries, Labels, ScalarSeries } from './series.js';
export { ADMIT_ALL, type Expiry, type FamilyOptions, type LabelAdmission } from './seriesTable.js';
export { SeriesBudget } from './seriesBudget.js';

/** Counters and gauges: one number per series. */
abstract class ScalarTable extends SeriesTable<ScalarSeries> {
  readonly bounds = undefined;

  constructor(options: FamilyOptions) {
    super(options);
    this.createUnlabelled();
  }

  protected newSeries(labelValues: readonly string[]): ScalarSeries {
    return { labelValues, version: 0, value: 0 };
  }
}

export class CounterStorage extends ScalarTable {
  readonly type = 'counter';

  inc(labels: Labels, amount = 1): void {
    if (!this.countable(amount) || !this.enabled) return;
    const series = this.seriesFor(labels);
    series.value += amount;
    series.version += 1;
  }

  /** The series of these labels, resolved now: later updates skip the key build and the lookup. */
  handle(labels: Labels): CounterHandle {
    if (!this.enabled) return { inc: (amount = 1) => void this.countable(amount) };
    const target = new HandleSeries(this, labels);
    return {
      inc: (amount = 1) => {
        if (!this.countable(amount)) return;
        const series = target.current();
        series.value += amount;
        series.version += 1;
      },
    };
  }
}

export class GaugeStorage extends ScalarTable {
  readonly type = 'gauge';

  set(labels: Labels, value: number): void {
    if (!this.finite(value) || !this.enabled) return;
    const series = this.seriesFor(labels);
    if (series.value === value) return;
    series.value = value;
    series.version += 1;
  }

  inc(labels: Labels, amount = 1): void {
    if (!this.finite(amount) || !this.enabled) return;
    const series = this.seriesFor(labels);
    series.value += amount;
    series.version += 1;
  }

  dec(labels: Labels, amount = 1): void {
    if (!this.countable(amount) || !this.enabled) return;
    const series = this.seriesFor(labels);
    series.value -= amount;
    series.version += 1;
  }

  private finite(value: number): boolean {
    if (Number.isFinite(value)) return true;
    this.options.onInvalid();
    return false;
  }
}

export class HistogramStorage extends SeriesTable<HistogramSeries> {
  readonly type = 'histogram';
  readonly bounds: readonly number[];
  /** The bounds then +Inf, as doubles: the search for an observation's bucket stops at the sentinel with one comparison a step. */
  private readonly searchBounds: Float64Array;

  /** `native`: keep native buckets beside the classic ones, with these settings (undefined: classic only). */
  constructor(
    options: FamilyOptions,
    bounds: readonly number[],
    private readonly native?: NativeHistogramSettings,
  ) {
    super(options);
    this.bounds = bounds;
    this.searchBounds = Float64Array.from([...bounds, Number.POSITIVE_INFINITY]);
    this.createUnlabelled();
  }

  protected newSeries(labelValues: readonly string[]): HistogramSeries {
    const buckets = new Array<number>(this.bounds.length + 1).fill(0);
    const native = this.native === undefined ? undefined : newNativeBuckets(this.native);
    return { labelValues, version: 0, buckets, sum: 0, count: 0, exemplars: undefined, native };
  }

  protected override extraBytes(series: HistogramSeries): number {
    return series.native === undefined ? 0 : nativeBytes(series.native);
  }

  protected override newSeriesExtraBytes(): number {
    return this.native === undefined ? 0 : nativeBytesOfCapacity(0);
  }

  observe(labels: Labels, value: number, exemplar?: Exemplar): void {
    if (this.countable(value) && this.enabled) this.observeInto(this.seriesFor(labels), value, exemplar);
  }

  handle(labels: Labels): HistogramHandle {
    if (!this.enabled) return { observe: (value) => void this.countable(value) };
    const target = new HandleSeries(this, labels);
    return {
      observe: (value, exemplar) => {
        if (!this.countable(value)) return;
        this.observeInto(target.current(), value, exemplar);
      },
    };
  }

  private observeInto(series: HistogramSeries, value: number, exemplar: Exemplar | undefined): void {
    // Values are finite here (countable), so the +Inf sentinel ends the search.
    const bounds = this.searchBounds;
    let index = 0;
    while (value > (bounds[index] as number)) index += 1;
    series.buckets[index] = (series.buckets[index] as number) + 1;
    series.sum += value;
    series.count += 1;
    series.version += 1;
    if (series.native !== undefined) {
      const capacity = series.native.keys.length;
      const halvings = observeNative(series.native, value, this.native as NativeHistogramSettings);
      if (halvings > 0) this.options.onNativeHalvings?.(halvings);
      if (series.native.keys.length !== capacity) this.charge(nativeBytes(series.native) - nativeBytesOfCapacity(capacity));
    }
    if (exemplar !== undefined) {
      series.exemplars ??= new Array<Exemplar | undefined>(series.buckets.length).fill(undefined);
      series.exemplars[index] = exemplar;
    }
  }
}

export type Family = CounterStorage | GaugeStorage | HistogramStorage;

