/**
 * Storage and exposition of the catalogue's metric families.
 *
 * Each family keeps its series in one Map keyed by the label values; a series holds its numbers
 * and its label text, escaped once when the series is created. Updating a series is a key build,
 * a Map lookup and an addition; rendering is string joins over precomputed pieces. (prom-client's
 * own metrics validated every label name and re-hashed every label object on each update, a
 * third of the ingest CPU, and built /metrics by concatenation: see bench/RESULTS.md.)
 *
 * The families also enforce what prom-client did not: values must be finite (and not negative
 * for counters and histograms), and live label sets of agent families share a global budget.
 */
import type { MetricSpec } from './catalogue.js';

type Labels = Readonly<Record<string, string>>;

const isCountable = (value: number): boolean => Number.isFinite(value) && value >= 0;

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

/** Text exposition escaping of a label value: backslash, double quote and newline. */
function escapeLabelValue(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

/** Prometheus text format of a sample value. */
function formatValue(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

interface Series {
  /** `a="x",b="y"` (no braces), escaped once. */
  readonly labelText: string;
  value: number;
  /** Histograms: per-bucket (non-cumulative) counts, the sum and the count. */
  readonly buckets: number[] | undefined;
  sum: number;
  count: number;
}

/** One series of a family, resolved once: recorders keep handles for their hottest label sets. */
export interface SeriesHandle {
  inc(amount?: number): void;
  observe(value: number): void;
}

export interface FamilyOptions {
  readonly spec: MetricSpec;
  readonly bounds: readonly number[] | undefined;
  /** Shared by agent families; undefined for the pipeline's own, which are bounded by construction. */
  readonly budget: SeriesBudget | undefined;
  /** The folding policy: which labels become `foldValue` in the overflow series. */
  readonly foldLabels: readonly string[];
  readonly foldValue: string;
  readonly onFold: () => void;
  /** A refused value (not finite, or negative where it must not be): counted, never stored. */
  readonly onInvalid: () => void;
}

export class Family {
  readonly spec: MetricSpec;
  private readonly series = new Map<string, Series>();
  private readonly labelNames: readonly string[];
  private readonly foldable: readonly string[];
  private readonly bounds: readonly number[] | undefined;
  private readonly boundTexts: readonly string[];
  private readonly header: string;

  constructor(private readonly options: FamilyOptions) {
    this.spec = options.spec;
    this.labelNames = options.spec.labelNames;
    this.foldable = options.foldLabels;
    this.bounds = options.bounds;
    this.boundTexts = [...(options.bounds ?? []).map(formatValue), '+Inf'];
    this.header = `# HELP ${this.spec.name} ${this.spec.help.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')}\n# TYPE ${this.spec.name} ${this.spec.type}\n`;
    // An unlabelled metric has exactly one series: it exists, at 0, from the start.
    if (this.labelNames.length === 0) this.create('', {});
  }

  get size(): number {
    return this.series.size;
  }

  inc(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.seriesFor(labels).value += amount;
    else this.options.onInvalid();
  }

  dec(labels: Labels, amount = 1): void {
    if (isCountable(amount)) this.seriesFor(labels).value -= amount;
    else this.options.onInvalid();
  }

  set(labels: Labels, value: number): void {
    if (Number.isFinite(value)) this.seriesFor(labels).value = value;
    else this.options.onInvalid();
  }

  observe(labels: Labels, value: number): void {
    if (isCountable(value)) this.observeInto(this.seriesFor(labels), value);
    else this.options.onInvalid();
  }

  /**
   * The series of these labels, resolved now (or its overflow series when the budget is spent):
   * later updates through the handle skip the key build and the lookup.
   */
  handle(labels: Labels): SeriesHandle {
    const { series, folded } = this.resolve(labels);
    // A folded label set counts a fold on every write, exactly as the label-object path does.
    const fold = folded ? this.options.onFold : undefined;
    return {
      inc: (amount = 1) => {
        if (!isCountable(amount)) return this.options.onInvalid();
        fold?.();
        series.value += amount;
      },
      observe: (value) => {
        if (!isCountable(value)) return this.options.onInvalid();
        fold?.();
        this.observeInto(series, value);
      },
    };
  }

  private observeInto(series: Series, value: number): void {
    const buckets = series.buckets;
    const bounds = this.bounds;
    if (buckets === undefined || bounds === undefined) return;
    let index = 0;
    while (index < bounds.length && value > (bounds[index] ?? Number.POSITIVE_INFINITY)) index += 1;
    buckets[index] = (buckets[index] ?? 0) + 1;
    series.sum += value;
    series.count += 1;
  }

  private keyOf(labels: Labels): string {
    // Label values are sanitized (no control characters), so NUL never occurs inside one.
    let key = '';
    for (const name of this.labelNames) key += `${labels[name] ?? ''}\u0000`;
    return key;
  }

  private seriesFor(labels: Labels): Series {
    const { series, folded } = this.resolve(labels);
    if (folded) this.options.onFold();
    return series;
  }

  /** The series of these labels, created while the budget lasts, else their overflow series. */
  private resolve(labels: Labels): { series: Series; folded: boolean } {
    const key = this.keyOf(labels);
    const existing = this.series.get(key);
    if (existing !== undefined) return { series: existing, folded: false };
    const budget = this.options.budget;
    if (budget === undefined || budget.take()) return { series: this.create(key, labels), folded: false };
    return { series: this.overflowSeries(labels), folded: true };
  }

  /** The series a label set folds into when the budget is spent: open labels become `other`. */
  private overflowSeries(labels: Labels): Series {
    const folded: Record<string, string> = { ...labels };
    for (const name of this.foldable) folded[name] = this.options.foldValue;
    const key = this.keyOf(folded);
    // Overflow series are admitted past the budget: there are few, and refusing them would lose counts.
    return this.series.get(key) ?? this.create(key, folded);
  }

  private create(key: string, labels: Labels): Series {
    const labelText = this.labelNames.map((name) => `${name}="${escapeLabelValue(labels[name] ?? '')}"`).join(',');
    const histogram = this.spec.type === 'histogram';
    const series: Series = {
      labelText,
      value: 0,
      buckets: histogram ? new Array<number>(this.boundTexts.length).fill(0) : undefined,
      sum: 0,
      count: 0,
    };
    this.series.set(key, series);
    return series;
  }

  /** Appends this family's exposition text (header and samples) to `out`. */
  render(out: string[]): void {
    out.push(this.header);
    const name = this.spec.name;
    if (this.spec.type !== 'histogram') {
      for (const series of this.series.values()) {
        out.push(series.labelText === '' ? `${name} ${formatValue(series.value)}\n` : `${name}{${series.labelText}} ${formatValue(series.value)}\n`);
      }
      return;
    }
    for (const series of this.series.values()) this.renderHistogram(out, name, series);
  }

  private renderHistogram(out: string[], name: string, series: Series): void {
    const buckets = series.buckets ?? [];
    const labels = series.labelText === '' ? '' : `,${series.labelText}`;
    let cumulative = 0;
    for (let index = 0; index < this.boundTexts.length; index += 1) {
      cumulative += buckets[index] ?? 0;
      out.push(`${name}_bucket{le="${this.boundTexts[index] ?? '+Inf'}"${labels}} ${cumulative}\n`);
    }
    const braces = series.labelText === '' ? '' : `{${series.labelText}}`;
    out.push(`${name}_sum${braces} ${formatValue(series.sum)}\n`, `${name}_count${braces} ${series.count}\n`);
  }
}
