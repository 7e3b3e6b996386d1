/**
 * The series table every family kind shares: its series in creation order, found by label values
 * (SeriesIndex), the global series budget (in label sets and in bytes) and folding past it, and
 * series expiry. It is the one owner of a series' life: a series is created here (taking a budget
 * slot, its bytes and a reference to each guarded value it carries) and removed here (giving all
 * three back), and a handle resolved here follows its series across removals by the table's
 * generation.
 *
 * Storage refuses what no sample may hold (non-finite values anywhere, negative increments of
 * counters and negative observations of histograms), counted, never silent; and a closed label
 * value its declaration does not list (closedLabels.ts), written as `other` so the write counts.
 */
import type { MetricSpec } from './declare.js';
import type { HistogramSeries, Labels, ScalarSeries, FamilyView } from './series.js';
import { SeriesIndex } from './seriesIndex.js';
import { seriesBytes, type SeriesBudget, type SeriesShape } from './seriesBudget.js';
import { ClosedLabels } from './closedLabels.js';

/**
 * The label guard's side of a series' life (src/metrics/labels.ts): every live series holds a
 * reference to each guarded value it carries, so a value leaves its label's cap only once no
 * series uses it, and the guard's sweep runs as the last step of each expiry sweep.
 */
export interface LabelAdmission {
  /** A new series carries `value` of guard label `label`: one more reference, if the value is in its cap. */
  retain(label: string, value: string): void;
  /** Gives back the reference of a series that left. */
  release(label: string, value: string): void;
  /** Run at the end of each expiry sweep, for what the guard expires itself. */
  sweep?(now: number, ttlSeconds: number): void;
}

/** Admits everything: storage used without a label guard. */
export const ADMIT_ALL: LabelAdmission = { retain: () => undefined, release: () => undefined };

/**
 * Which series of a family leave once idle for the series TTL: `idle`, any (agent families
 * written by events); `idle at zero`, those at 0 (gauges of open spans or sessions: one at 0
 * counts nothing, and its label values go back to their caps; one above 0 stays, as removing it
 * would lose what it counts); `never` (the pipeline's own families).
 */
export type Expiry = 'idle' | 'idle at zero' | 'never';

export interface FamilyOptions {
  readonly spec: MetricSpec;
  /** A disabled (opt-in, not chosen) family takes every write as a no-op and keeps no series. */
  readonly enabled: boolean;
  /** Shared by agent families; undefined for the pipeline's own, which are bounded by construction. */
  readonly budget: SeriesBudget | undefined;
  /** The folding policy: which labels become `foldValue` in the overflow series. */
  readonly foldLabels: readonly string[];
  readonly foldValue: string;
  /**
   * The storage's counts, written by the registry that declares them (storage declares no
   * metric): a write folded into an overflow series, a refused value (not finite, or negative
   * where it must not be; never stored), a new label set refused by the byte budget (then
   * folded), a halving of a series' native resolution, a series removed by expiry.
   */
  readonly onFold: () => void;
  readonly onInvalid: () => void;
  readonly onBytesRefused?: () => void;
  readonly onNativeHalvings?: (halvings: number) => void;
  readonly onExpire?: () => void;
  /** `never` when absent. */
  readonly expiry?: Expiry;
  /** The guard label of each label (by label index) whose values the guard caps; its own name when absent. */
  readonly guards?: readonly (string | undefined)[];
  /** Where the references to guarded label values go; ADMIT_ALL when absent. */
  readonly admission?: LabelAdmission;
  /** The declared values of each closed label by label index (undefined for the others); unchecked when absent. */
  readonly closedValues?: readonly (readonly string[] | undefined)[];
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

type AnySeries = ScalarSeries | HistogramSeries;

/**
 * A handle's series: resolved once, and again on the first write after series left its table
 * (the handle's may be among them), so a handle never writes into a removed series and keeps
 * nothing of one alive. An object rather than a closure: recorders keep thousands of handles at
 * the series cap.
 */
export class HandleSeries<S extends AnySeries> {
  private generation: number;
  private series: S;
  /**
   * The labels of a folded handle (its series carries `other` for them); a handle with a series
   * of its own resolves again from that series' label values, so it keeps no labels object.
   */
  private foldedLabels: Labels | undefined;
  /** Whether its labels carried an undeclared closed value (its series carries `other` instead). */
  private readonly refused: boolean;

  constructor(
    private readonly table: SeriesTable<S>,
    labels: Labels,
  ) {
    this.generation = table.generation;
    const { series, folded, refused } = table.resolveLabels(labels);
    this.series = series;
    this.refused = refused;
    this.foldedLabels = folded ? labels : undefined;
  }

  /**
   * The series to write now; a folded label set counts a fold, and a refused closed value a
   * refusal, on every write, as the label-object path does.
   */
  current(): S {
    if (this.generation !== this.table.generation) this.resolveAgain();
    if (this.foldedLabels !== undefined) this.table.countFold();
    if (this.refused) this.table.countRefusal();
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

/** The series table every kind shares: keys, the budget, folding and expiry. */
export abstract class SeriesTable<S extends AnySeries> implements FamilyView {
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
  private readonly closedLabels: ClosedLabels;
  private shapeOf: SeriesShape | undefined;
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
    this.closedLabels = new ClosedLabels(options.closedValues ?? []);
  }

  get size(): number {
    return this.all.length;
  }

  series(): Iterable<S> {
    return this.all;
  }

  protected abstract newSeries(labelValues: readonly string[]): S;

  /** Bytes a series holds beyond its shape's (native buckets): 0 but for native histograms. */
  protected extraBytes(_series: S): number {
    return 0;
  }

  /** extraBytes of a new series. */
  protected newSeriesExtraBytes(): number {
    return 0;
  }

  /** The bytes a new series of these values is charged. */
  private newSeriesBytes(values: readonly string[]): number {
    return seriesBytes(this.shape, values) + this.newSeriesExtraBytes();
  }

  /** What the family's series share, for their byte sizes (built on first use: subclasses set `bounds` after this constructor). */
  private get shape(): SeriesShape {
    return (this.shapeOf ??= {
      nameLength: this.name.length,
      labelNames: this.labelNames,
      bounds: this.bounds?.map((bound) => String(bound)),
    });
  }

  /** The bytes `series` is charged now. */
  protected bytesOf(series: S): number {
    return seriesBytes(this.shape, series.labelValues) + this.extraBytes(series);
  }

  /** Charges (or, negative, gives back) bytes a series took since it was created. */
  protected charge(bytes: number): void {
    this.options.budget?.charge(bytes);
  }

  /** Creates the series of these labels at 0 if it does not exist yet (pre-initialisation). */
  preinit(labels: Labels): void {
    if (!this.enabled || this.index.find(labels) !== undefined) return;
    this.create(this.valuesOf(labels), { charged: false, pinned: true });
  }

  /** An unlabelled metric has exactly one series: it exists, at 0, from the start. */
  protected createUnlabelled(): void {
    if (this.labelNames.length === 0 && this.enabled) this.create([], { charged: false, pinned: true });
  }

  /** The series of these labels (or its overflow series), counting a fold when it folded and a refused closed value. */
  protected seriesFor(labels: Labels): S {
    const found = this.index.find(labels);
    if (found !== undefined) return found;
    const { series, folded, refused } = this.resolveNew(labels);
    if (refused) this.options.onInvalid();
    if (folded) this.options.onFold();
    return series;
  }

  /**
   * The series of these labels, created while the budget lasts, else their overflow series; for a
   * handle (HandleSeries), which counts the fold and the refusal at each write.
   */
  resolveLabels(labels: Labels): { readonly series: S; readonly folded: boolean; readonly refused: boolean } {
    const found = this.index.find(labels);
    if (found !== undefined) return { series: found, folded: false, refused: false };
    return this.resolveNew(labels);
  }

  /** A label set no series holds yet: its declared values, or `other` for a closed value its declaration does not list. */
  private resolveNew(labels: Labels): { readonly series: S; readonly folded: boolean; readonly refused: boolean } {
    const values = this.valuesOf(labels);
    const refused = this.closedLabels.refuseUndeclared(values);
    // A refused value became `other`, whose series may exist already.
    const series = (refused ? this.index.findValues(values) : undefined) ?? this.createWithin(values);
    if (series !== undefined) return { series, folded: false, refused };
    return { series: this.overflowSeries(values), folded: true, refused };
  }

  /** The same by label values in label-name order (a removed series' own), for a handle. */
  resolveValues(values: readonly string[]): { readonly series: S; readonly folded: boolean } {
    const series = this.index.findValues(values) ?? this.createWithin([...values]);
    if (series !== undefined) return { series, folded: false };
    return { series: this.overflowSeries([...values]), folded: true };
  }

  /** Counts one write folded into an overflow series. */
  countFold(): void {
    this.options.onFold();
  }

  /** Counts one write whose closed label value was refused. */
  countRefusal(): void {
    this.options.onInvalid();
  }

  /** A new series of these values while the budget lasts; undefined once it is spent (the caller folds). */
  private createWithin(values: string[]): S | undefined {
    const budget = this.options.budget;
    if (budget === undefined) return this.create(values, { charged: false, pinned: false });
    const verdict = budget.take(this.newSeriesBytes(values));
    if (verdict === 'taken') return this.create(values, { charged: true, pinned: false });
    if (verdict === 'bytes') this.options.onBytesRefused?.();
    return undefined;
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

  /**
   * Adds a series, with a reference to each guarded value it carries; its bytes are charged to
   * the budget (already, by `take`, when it holds a slot).
   */
  private create(values: readonly string[], kind: { charged: boolean; pinned: boolean }): S {
    this.foldIndices.forEach((index, position) => this.admission.retain(this.foldGuards[position] as string, values[index] as string));
    const series = this.newSeries(values);
    if (!kind.charged) this.charge(this.newSeriesBytes(values));
    this.index.add(values, series);
    this.all.push(series);
    // Not seen by a sweep yet: the first sweep that sees it starts its idle time.
    this.seenVersions.push(NOT_SEEN);
    this.idleSince.push(0);
    this.kinds.push((kind.charged ? CHARGED : 0) | (kind.pinned ? PINNED : 0));
    return series;
  }

  /** Whether a series may leave once idle: any (`idle`), or one at 0 (`idle at zero`). */
  private mayLeave(series: S): boolean {
    const expiry = this.options.expiry ?? 'never';
    return expiry === 'idle' || (expiry === 'idle at zero' && (series as ScalarSeries).value === 0);
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
      if ((this.options.expiry ?? 'never') === 'never' || ttlSeconds <= 0) return false;
      const end = Math.min(this.all.length, next + EXPIRY_CHUNK);
      for (; next < end; next += 1) {
        const series = this.all[next] as S;
        if (((this.kinds[next] as number) & PINNED) !== 0) continue;
        if (this.seenVersions[next] !== series.version) {
          this.seenVersions[next] = series.version;
          this.idleSince[next] = now;
        } else if (now - (this.idleSince[next] as number) >= ttlSeconds && this.mayLeave(series)) expired.push(series);
      }
      if (next < this.all.length) return true;
      this.remove(new Set(expired));
      return false;
    };
  }

  /** Removes the expired series that are still idle: index, budget slot and bytes, label references. */
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
      this.options.budget?.give(this.bytesOf(series), (kind & CHARGED) !== 0);
      this.foldIndices.forEach((at, position) => this.admission.release(this.foldGuards[position] as string, series.labelValues[at] as string));
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
