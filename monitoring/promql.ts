/** Small helpers that keep PromQL in rules and dashboards readable and uniformly selected. */

/**
 * A vector selector: `name{matchers}`. Empty matchers are skipped so callers can pass optional
 * filters without string juggling.
 */
export function series(name: string, ...matchers: readonly string[]): string {
  const present = matchers.filter((matcher) => matcher.length > 0);
  return present.length === 0 ? name : `${name}{${present.join(', ')}}`;
}

/**
 * Which histograms the queries read: `classic` (the `_bucket` series and their `le` label, what a
 * Prometheus scraping text or OpenMetrics stores) or `native` (one native histogram series each,
 * what a Prometheus with `--enable-feature=native-histograms` stores from the protobuf exposition).
 */
export type HistogramKind = 'classic' | 'native';

/** The series a histogram quantile reads: `name_bucket` (classic) or `name` itself (native). */
export function histogramSeries(name: string, kind: HistogramKind): string {
  return kind === 'classic' ? `${name}_bucket` : name;
}

/** The labels a quantile's aggregation keeps: classic buckets must keep `le`, native ones have none. */
export function quantileLabels(labels: readonly string[], kind: HistogramKind): string[] {
  return kind === 'classic' ? ['le', ...labels] : [...labels];
}

/** Joins expression lines written as an array, so multi-line PromQL stays diff-friendly. */
export function lines(...parts: readonly string[]): string {
  return parts.join('\n');
}
