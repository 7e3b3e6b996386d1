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
 * into its overflow series. A series that expires (no write for the series TTL) leaves the
 * table, gives its budget slot back and releases its guarded label values (LabelAdmission).
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

  /** A slot back from an expired series. */
  give(): void {
    if (this.used > 0) this.used -= 1;
  }

  get spent(): number {
    return this.used;
  }
}

/**
 * The label guard's side of a series' life: every live series holds a reference to each guarded
 * value it carries, so a value leaves its label's cap only once no series uses it.
 */
export interface LabelAdmission {
  /**
   * A new series carries `value` of guard label `label`: one more reference, if the value is in
   * its cap (values the guard lets through uncapped, such as known exit reasons, are not counted).
   */
  retain(label: string, value: string): void;
  /** Gives back the reference of a series that left. */
  release(label: string, value: string): void;
  /** Run at the end of each expiry sweep, for what the guard expires itself. */
  sweep?(now: number, ttlSeconds: number): void;
}

/** Admits everything: storage used without a label guard. */
export const ADMIT_ALL: LabelAdmission = { retain: () => undefined, release: () => undefined };

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
  /**
   * Whether a series of this family is removed once it has not been written for the series TTL:
   * agent families written by events. Computed gauges (spans in flight, active sessions) are set
   * from state, and a removed one would lose the count it carries.
   */
  readonly expires?: boolean;
  /** The guard label of each label (by label index) whose values the guard caps; its own name when absent. */
  readonly guards?: readonly (string | undefined)[];
  /** Where the references to guarded label values go; ADMIT_ALL when absent. */
  readonly admission?: LabelAdmission;
  /** Counts one series removed by expiry. */
  readonly onExpire?: () => void;
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

  /** Removes the series of these values, and every level left empty by it. */
  delete(values: readonly string[]): void {
    const last = values.length - 1;
    const path: Map<string, unknown>[] = [this.root];
    for (let index = 0; index < last; index += 1) {
      const next = path[index]?.get(values[index] as string) as Map<string, unknown> | undefined;
      if (next === undefined) return;
      path.push(next);
    }
    path[last < 0 ? 0 : last]?.delete(last < 0 ? '' : (values[last] as string));
    for (let index = last - 1; index >= 0; index -= 1) {
      if ((path[index + 1]?.size ?? 0) > 0) return;
      path[index]?.delete(values[index] as string);
    }
  }
}

/**
 * What the expiry sweep knows of a series, in arrays beside `all` (numbers, not an object per
 * series: a few bytes each at the series cap): the version it last saw, since when that version
 * has not moved (so a write costs no clock reading), and the series' kind.
 */
const NOT_SEEN = -1;
/** Holds a slot of the series budget, given back when it leaves. */
const CHARGED = 1;
/** Pre-initialised (and unlabelled) series exist by declaration and never expire. */
const PINNED = 2;

/** Series looked at between two looks at the clock in one step of an expiry sweep. */
const EXPIRY_CHUNK = 512;

/**
 * A handle's series: resolved once, and again on the first write after series left its table
 * (the handle's may be among them), so a handle never writes into a removed series. An object
 * rather than a closure: recorders keep thousands of handles at the series cap.
 */
class HandleSeries<S extends ScalarSeries | HistogramSeries> {
  private generation: number;
  private series: S;
  /**
   * The labels of a folded handle (its series carries `other` for them); a handle with a series
   * of its own resolves again from that series' label values, so it keeps no labels object.
   */
  private foldedLabels: Labels | undefined;

  constructor(
    private readonly table: SeriesTable<S>,
    labels: Labels,
  ) {
    this.generation = table.generation;
    const { series, folded } = table.resolveLabels(labels);
    this.series = series;
    this.foldedLabels = folded ? labels : undefined;
  }

  /** The series to write now; a folded label set counts a fold on every write, as the label-object path does. */
  current(): S {
    if (this.generation !== this.table.generation) this.resolveAgain();
    if (this.foldedLabels !== undefined) this.table.countFold();
    return this.series;
  }

  private resolveAgain(): void {
    this.generation = this.table.generation;
    const own = this.series.labelValues;
    const labels = this.foldedLabels;
    const { series, folded } = labels === undefined ? this.table.resolveValues(own) : this.table.resolveLabels(labels);
    this.series = series;
    // Folded now (the budget is spent): keep its own labels, to resolve them again after the next expiry.
    if (!folded) this.foldedLabels = undefined;
    else this.foldedLabels ??= Object.fromEntries(this.table.labelNames.map((name, index) => [name, own[index] ?? ''])) as Labels;
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
  private all: S[] = [];
  /** The expiry sweep's notes on each series, same indices as `all`. */
  private seenVersions: number[] = [];
  private idleSince: number[] = [];
  private kinds: number[] = [];
  private readonly foldIndices: readonly number[];
  /** The guard label of each folded label, same order as `foldIndices`. */
  private readonly foldGuards: readonly string[];
  private readonly admission: LabelAdmission;
  /**
   * Bumped whenever series leave: a handle holding a series checks it on every write and
   * resolves its labels again when it moved, so it never writes into a removed series.
   */
  generation = 0;

  constructor(protected readonly options: FamilyOptions) {
    this.spec = options.spec;
    this.name = options.spec.name;
    this.help = options.spec.help;
    this.labelNames = options.spec.labelNames;
    this.enabled = options.enabled;
    this.scope = options.spec.scope;
    this.index = new SeriesIndex<S>(this.labelNames);
    this.foldIndices = options.foldLabels.map((label) => this.labelNames.indexOf(label)).filter((index) => index >= 0);
    this.foldGuards = this.foldIndices.map((index) => options.guards?.[index] ?? (this.labelNames[index] as string));
    this.admission = options.admission ?? ADMIT_ALL;
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
    if (!this.enabled || this.index.find(labels) !== undefined) return;
    this.create(this.valuesOf(labels), { charged: false, pinned: true });
  }

  /** An unlabelled metric has exactly one series: it exists, at 0, from the start. */
  protected createUnlabelled(): void {
    if (this.labelNames.length === 0 && this.enabled) this.create([], { charged: false, pinned: true });
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

  /** `resolve` for a handle (HandleSeries). */
  resolveLabels(labels: Labels): { readonly series: S; readonly folded: boolean } {
    return this.resolve(labels);
  }

  /** `resolve` by label values in label-name order (a removed series' own), for a handle. */
  resolveValues(values: readonly string[]): { readonly series: S; readonly folded: boolean } {
    const existing = this.index.findValues(values);
    if (existing !== undefined) return { series: existing, folded: false };
    const budget = this.options.budget;
    if (budget === undefined || budget.take()) return { series: this.create([...values], { charged: budget !== undefined, pinned: false }), folded: false };
    return { series: this.overflowSeries([...values]), folded: true };
  }

  /** Counts one write folded into an overflow series. */
  countFold(): void {
    this.options.onFold();
  }

  /** The series of these labels, new while the budget lasts; undefined once it is spent (the caller folds). */
  private findOrCreate(labels: Labels): S | undefined {
    const existing = this.index.find(labels);
    if (existing !== undefined) return existing;
    const budget = this.options.budget;
    if (budget !== undefined && !budget.take()) return undefined;
    return this.create(this.valuesOf(labels), { charged: budget !== undefined, pinned: false });
  }

  private retainValues(values: readonly string[]): void {
    this.foldIndices.forEach((index, position) => this.admission.retain(this.foldGuards[position] as string, values[index] as string));
  }

  private releaseValues(values: readonly string[]): void {
    this.foldIndices.forEach((index, position) => this.admission.release(this.foldGuards[position] as string, values[index] as string));
  }

  private valuesOf(labels: Labels): string[] {
    return this.labelNames.map((name) => labels[name] ?? '');
  }

  /** The series a label set folds into when the budget is spent: open labels become `other`. */
  private overflowSeries(values: string[]): S {
    for (const index of this.foldIndices) values[index] = this.options.foldValue;
    // Overflow series are admitted past the budget: there are few, and refusing them would lose counts.
    return this.index.findValues(values) ?? this.create(values, { charged: false, pinned: false });
  }

  /** Adds a series, with a reference to each guarded value it carries. */
  private create(values: readonly string[], kind: { charged: boolean; pinned: boolean }): S {
    this.retainValues(values);
    const series = this.newSeries(values);
    this.index.add(values, series);
    this.all.push(series);
    // Not seen by a sweep yet: the first sweep that sees it starts its idle time.
    this.seenVersions.push(NOT_SEEN);
    this.idleSince.push(0);
    this.kinds.push((kind.charged ? CHARGED : 0) | (kind.pinned ? PINNED : 0));
    return series;
  }

  /**
   * The steps of one expiry sweep at `now` (epoch seconds): each looks at up to EXPIRY_CHUNK
   * series, noting which have not been written for `ttlSeconds`; the last removes them all at
   * once (a scrape between two steps sees the table whole). A series written between the step
   * that noted it and the last is kept. The table's own figures are untouched when it does not
   * expire.
   */
  expirySteps(now: number, ttlSeconds: number): () => boolean {
    const expired: S[] = [];
    let next = 0;
    return () => {
      if (this.options.expires !== true || ttlSeconds <= 0) return false;
      const end = Math.min(this.all.length, next + EXPIRY_CHUNK);
      for (; next < end; next += 1) {
        const series = this.all[next] as S;
        if (((this.kinds[next] as number) & PINNED) !== 0) continue;
        if (this.seenVersions[next] !== series.version) {
          this.seenVersions[next] = series.version;
          this.idleSince[next] = now;
        } else if (now - (this.idleSince[next] as number) >= ttlSeconds) expired.push(series);
      }
      if (next < this.all.length) return true;
      this.remove(new Set(expired));
      return false;
    };
  }

  /** Removes the expired series that are still idle: index, budget slot, label references. */
  private remove(candidates: ReadonlySet<S>): void {
    if (candidates.size === 0) return;
    const keptSeries: S[] = [];
    const keptSeen: number[] = [];
    const keptIdle: number[] = [];
    const keptKinds: number[] = [];
    let removed = 0;
    this.all.forEach((series, index) => {
      const seen = this.seenVersions[index] as number;
      const kind = this.kinds[index] as number;
      if (!candidates.has(series) || seen !== series.version) {
        keptSeries.push(series);
        keptSeen.push(seen);
        keptIdle.push(this.idleSince[index] as number);
        keptKinds.push(kind);
        return;
      }
      this.index.delete(series.labelValues);
      if ((kind & CHARGED) !== 0) this.options.budget?.give();
      this.releaseValues(series.labelValues);
      this.options.onExpire?.();
      removed += 1;
    });
    if (removed === 0) return;
    this.all = keptSeries;
    this.seenVersions = keptSeen;
    this.idleSince = keptIdle;
    this.kinds = keptKinds;
    this.generation += 1;
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
    const target = new HandleSeries(this, labels);
    return {
      observe: (value, exemplar) => {
        if (!this.countable(value)) return;
        this.observeInto(target.current(), value, exemplar);
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
