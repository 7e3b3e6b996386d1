/** Small helpers that keep PromQL in rules and dashboards readable and uniformly selected. */

/**
 * A vector selector: `name{matchers}`. Empty matchers are skipped so callers can pass optional
 * filters without string juggling.
 */
export function series(name: string, ...matchers: readonly string[]): string {
  const present = matchers.filter((matcher) => matcher.length > 0);
  return present.length === 0 ? name : `${name}{${present.join(', ')}}`;
}

/** Joins expression lines written as an array, so multi-line PromQL stays diff-friendly. */
export function lines(...parts: readonly string[]): string {
  return parts.join('\n');
}
