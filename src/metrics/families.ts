/**
 * Storage of the catalogue's metric families: typed counter, gauge and histogram tables.
 *
 * Each family keeps its series in creation order, found by their label values (SeriesIndex); a
 * series holds only its numbers, its label values and a version that every write bumps (the
 * serializer in src/exposition/ re-renders a series only when its version moved). Updating a
 * series is one Map lookup per label and an addition. Rendering lives elsewhere: nothing here
 * knows a format.
 *
 * A histogram series may also keep native (exponential) buckets of the same observations
 * (src/metrics/native.ts), for the protobuf exposition.
 *
 * Storage refuses what no sample may hold: non-finite values anywhere, negative increments of
 * counters and negative observations of histograms. Every refusal is counted (`onInvalid`),
 * never silent. Agent families share a global series budget; past it, a new label set folds
 * into its overflow series.
 */

export type Labels = Readonly<Record<string, string>>;
import { MetricSpec } from './declare.js';
import { newNativeBuckets, observeNative, type NativeBuckets, type NativeHistogramSettings } from './native.js';

/**
 * The content-free ids of one observation, its value and when it happened (epoch seconds): the
 * link from a histogram bucket to the call behind it. Built by src/metrics/exemplars.ts, which
 * keeps the ids within OpenMetrics' 128-character limit.
 */
export interface Exemplar {
  readonly labels: Labels;
  readonly value: number;
  readonly timestamp: number;
}

/**
 * The global series cap shared by every agent family. Once it is spent, a new label set is
 * folded into its family's overflow series: every open-set label becomes `other`, closed ones
 * stay, so the overflow series are few and bounded by the closed enumerations.
 */
export class SeriesBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  take(): boolean {
    if (this.used >= this.limit) return false;
    this.used += 1;
    return true;
  }
}

interface SeriesCore {
  /** In the family's label-name order. */
  readonly labelValues: readonly string[];
  /** Bumped by every write: a renderer's cache of this series is stale when it moved. */
  version: number;
}

export interface ScalarSeries extends SeriesCore {
  value: number;
}

export interface HistogramSeries extends SeriesCore {
  /** Per-bucket (non-cumulative) counts; the last one is +Inf. */
  readonly buckets: number[];
  sum: number;
  count: number;
  /** The newest exemplar per bucket (same indices as `buckets`); undefined until the first. */
  exemplars: (Exemplar | undefined)[] | undefined;
  /** The same observations in native (exponential) buckets; undefined for histograms kept classic only. */
  readonly native?: NativeBuckets | undefined;
}

/** What a renderer reads of a family: its declaration and its live series. */
export interface FamilyView {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly labelNames: readonly string[];
  /** Histograms: the finite upper bounds (the +Inf bucket is implied). */
  readonly bounds: readonly number[] | undefined;
  /** Whether series objects keep their identity between scrapes (renderers may cache them). */
  readonly stable: boolean;
  series(): Iterable<ScalarSeries | HistogramSeries>;
}

/** One series of a counter family, resolved once: recorders keep handles for their hottest label sets. */
export interface CounterHandle {
  inc(amount?: number): void;
}

/** One series of a histogram family, resolved once. */
export interface HistogramHandle {
  observe(value: number, exemplar?: Exemplar): void;
}

export interface FamilyOptions {
  readonly spec: MetricSpec;
  /** A disabled (opt-in, not chosen) family takes every write as a no-op and keeps no series. */
  readonly enabled: boolean;
  /** Shared by agent families; undefined for the pipeline's own, which are bounded by construction. */
  readonly budget: SeriesBudget | undefined;
  /** The folding policy: which labels become `foldValue` in the overflow series. */
  readonly foldLabels: readonly string[];
  readonly foldValue: string;
  readonly onFold: () => void;
  /** A refused value (not finite, or negative where it must not be): counted, never stored. */
  readonly onInvalid: () => void;
  /** Histograms: a series halved its native resolution this many times to stay within the bucket limit. */
  readonly onNativeHalvings?: (halvings: number) => void;
}

/**
 * Series by label values, one Map level per label, the last level holding the series: a write
 * finds its series with one lookup per label and builds nothing. Label values reaching storage
 * are mostly the same string objects every time (the label guard's and the closed sets'), whose
 * hashes V8 keeps, where a joined key string was a new string to build, flatten and hash on every
 * write. Unlabelled families keep their one series under ''.
 */
class SeriesIndex<S> {
  private readonly root = new Map<string, unknown>();

  constructor(private readonly labelNames: readonly string[]) {}

  find(labels: Labels): S | undefined {
    const names = this.labelNames;
    const last = names.length - 1;
    let level = this.root;
    for (let index = 0; index < last; index += 1) {
      const next = level.get(labels[names[index] as string] ?? '') as Map<string, unknown> | undefined;
      if (next === undefined) return undefined;
      level = next;
    }
    return level.get(last < 0 ? '' : (labels[names[last] as string] ?? '')) as S | undefined;
  }

  /** The same lookup by values in label-name order. */
  findValues(values: readonly string[]): S | undefined {
    const last = values.length - 1;
    let level = this.root;
    for (let index = 0; index < last; index += 1) {
      const next = level.get(values[index] as string) as Map<string, unknown> | undefined;
      if (next === undefined) return undefined;
      level = next;
    }
    return level.get(last < 0 ? '' : (values[last] as string)) as S | undefined;
  }

  add(values: readonly string[], series: S): void {
    const last = values.length - 1;
    let level = this.root;
    for (let index = 0; index < last; index += 1) {
      const value = values[index] as string;
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) level.set(value, (next = new Map<string, unknown>()));
      level = next;
    }
    level.set(last < 0 ? '' : (values[last] as string), series);
  }
}

/** The series table every kind shares: keys, the budget and folding. */
abstract class SeriesTable<S extends ScalarSeries | HistogramSeries> implements FamilyView {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly stable = true;
  readonly spec: MetricSpec;
  readonly enabled: boolean;
  readonly scope: MetricSpec['scope'];
  abstract readonly type: FamilyView['type'];
  abstract readonly bounds: readonly number[] | undefined;
  private readonly index: SeriesIndex<S>;
  /** Every series in creation order: what a scrape walks. */
  private readonly all: S[] = [];
  private readonly foldIndices: readonly number[];

  constructor(protected readonly options: FamilyOptions) {
    this.spec = options.spec;
    this.name = options.spec.name;
    this.help = options.spec.help;
    this.labelNames = options.spec.labelNames;
    this.enabled = options.enabled;
    this.scope = options.spec.scope;
    this.index = new SeriesIndex<S>(this.labelNames);
    this.foldIndices = options.foldLabels.map((label) => this.labelNames.indexOf(label)).filter((index) => index >= 0);
  }

  get size(): number {
    return this.all.length;
  }

  series(): Iterable<S> {
    return this.all;
  }

  protected abstract newSeries(labelValues: readonly string[]): S;

  /** Creates the series of these labels at 0 if it does not exist yet (pre-initialisation). */
  preinit(labels: Labels): void {
    if (this.enabled) this.resolve(labels);
  }

  /** An unlabelled metric has exactly one series: it exists, at 0, from the start. */
  protected createUnlabelled(): void {
    if (this.labelNames.length === 0 && this.enabled) this.create([]);
  }

  /** The series of these labels (or its overflow series), counting a fold when it folded. */
  protected seriesFor(labels: Labels): S {
    const series = this.findOrCreate(labels);
    if (series !== undefined) return series;
    this.options.onFold();
    return this.overflowSeries(this.valuesOf(labels));
  }

  /** The series of these labels, created while the budget lasts, else their overflow series. */
  protected resolve(labels: Labels): { series: S; folded: boolean } {
    const series = this.findOrCreate(labels);
    if (series !== undefined) return { series, folded: false };
    return { series: this.overflowSeries(this.valuesOf(labels)), folded: true };
  }

  /** The series of these labels, new while the budget lasts; undefined once it is spent (the caller folds). */
  private findOrCreate(labels: Labels): S | undefined {
    const existing = this.index.find(labels);
    if (existing !== undefined) return existing;
    const budget = this.options.budget;
    if (budget !== undefined && !budget.take()) return undefined;
    return this.create(this.valuesOf(labels));
  }

  private valuesOf(labels: Labels): string[] {
    return this.labelNames.map((name) => labels[name] ?? '');
  }

  /** The series a label set folds into when the budget is spent: open labels become `other`. */
  private overflowSeries(values: string[]): S {
    for (const index of this.foldIndices) values[index] = this.options.foldValue;
    // Overflow series are admitted past the budget: there are few, and refusing them would lose counts.
    return this.index.findValues(values) ?? this.create(values);
  }

  private create(values: readonly string[]): S {
    const series = this.newSeries(values);
    this.index.add(values, series);
    this.all.push(series);
    return series;
  }

  /** True when `value` may be added to a monotonic total; counts the refusal otherwise. */
  protected countable(value: number): boolean {
    if (Number.isFinite(value) && value >= 0) return true;
    this.options.onInvalid();
    return false;
  }
}

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
    const { series, folded } = this.resolve(labels);
    // A folded label set counts a fold on every write, exactly as the label-object path does.
    const fold = folded ? this.options.onFold : undefined;
    return {
      inc: (amount = 1) => {
        if (!this.countable(amount)) return;
        fold?.();
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

  /** `native`: keep native buckets beside the classic ones, with these settings (undefined: classic only). */
  constructor(
    options: FamilyOptions,
    bounds: readonly number[],
    private readonly native?: NativeHistogramSettings,
  ) {
    super(options);
    this.bounds = bounds;
    this.createUnlabelled();
  }

  protected newSeries(labelValues: readonly string[]): HistogramSeries {
    const buckets = new Array<number>(this.bounds.length + 1).fill(0);
    const native = this.native === undefined ? undefined : newNativeBuckets(this.native);
    return { labelValues, version: 0, buckets, sum: 0, count: 0, exemplars: undefined, native };
  }

  observe(labels: Labels, value: number, exemplar?: Exemplar): void {
    if (this.countable(value) && this.enabled) this.observeInto(this.seriesFor(labels), value, exemplar);
  }

  handle(labels: Labels): HistogramHandle {
    if (!this.enabled) return { observe: (value) => void this.countable(value) };
    const { series, folded } = this.resolve(labels);
    const fold = folded ? this.options.onFold : undefined;
    return {
      observe: (value, exemplar) => {
        if (!this.countable(value)) return;
        fold?.();
        this.observeInto(series, value, exemplar);
      },
    };
  }

  private observeInto(series: HistogramSeries, value: number, exemplar: Exemplar | undefined): void {
    const bounds = this.bounds;
    let index = 0;
    while (index < bounds.length && value > (bounds[index] ?? Number.POSITIVE_INFINITY)) index += 1;
    series.buckets[index] = (series.buckets[index] ?? 0) + 1;
    series.sum += value;
    series.count += 1;
    series.version += 1;
    if (series.native !== undefined) {
      const halvings = observeNative(series.native, value, this.native as NativeHistogramSettings);
      if (halvings > 0) this.options.onNativeHalvings?.(halvings);
    }
    if (exemplar !== undefined) {
      series.exemplars ??= new Array<Exemplar | undefined>(series.buckets.length).fill(undefined);
      series.exemplars[index] = exemplar;
    }
  }
}

export type Family = CounterStorage | GaugeStorage | HistogramStorage;
