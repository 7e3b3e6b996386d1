/**
 * Counts open entries per label set for a gauge read at scrape time, and reports each label set's
 * change since the last scrape. A table calls `opened` and `closed` as its entries come and go
 * (closed through the table's one removal path, spans.ts), so a scrape reads counts instead of
 * scanning every open entry. Writing changes rather than values keeps label sets that the series
 * budget folds into one overflow series summed there (a `set` per label set would overwrite), and
 * a label set reported for the first time is written even at 0, so a series exists from its first
 * span on, scraped in between or not. Label values are guarded, so the label sets remembered are
 * bounded by the label caps.
 */
export class GaugeTally<L extends { readonly [label: string]: string }> {
  private readonly counts = new Map<string, { readonly labels: L; open: number; reported: number; isNew: boolean }>();

  /**
   * `keyOf` tells label sets apart. A tally of one label passes that label's value: every span
   * opened runs through it, and joining the values was the larger part of opening a span.
   */
  constructor(private readonly keyOf: (labels: L) => string = joinedKey) {}

  /** Counts a span being opened. */
  opened(labels: L): void {
    const key = this.keyOf(labels);
    const count = this.counts.get(key);
    if (count === undefined) this.counts.set(key, { labels, open: 1, reported: 0, isNew: true });
    else count.open += 1;
  }

  /** Counts a span that left its table (each span once, after its `opened`). */
  closed(labels: L): void {
    const count = this.counts.get(this.keyOf(labels));
    if (count !== undefined) count.open -= 1;
  }

  /** [labels, change] for every label set whose count changed, or that was never reported. */
  private changes(): [L, number][] {
    const changes: [L, number][] = [];
    for (const count of this.counts.values()) {
      if (count.isNew || count.open !== count.reported) changes.push([count.labels, count.open - count.reported]);
      count.reported = count.open;
      count.isNew = false;
    }
    return changes;
  }

  /**
   * Moves `gauge` by every change since the last report: the one scrape-time update of a gauge of
   * open spans. A label set never reported is written even when its change is 0, so its series
   * exists from its first span.
   */
  report(gauge: TallyGauge<L>): void {
    for (const [labels, change] of this.changes()) {
      if (change < 0) gauge.dec(labels, -change);
      else gauge.inc(labels, change);
    }
  }
}

/** The gauge a tally reports to (a gauge family of the recorder's declaration). */
export interface TallyGauge<L> {
  inc(labels: L, amount?: number): void;
  dec(labels: L, amount?: number): void;
}

// Guarded values hold no control characters, so NUL separates them unambiguously.
function joinedKey(labels: { readonly [label: string]: string }): string {
  let key = '';
  for (const label in labels) key += `${labels[label]}\u0000`;
  return key;
}
