/**
 * "Did you mean …?" for misspelt option names and config keys: the closest known name by edit
 * distance, offered only when it is close enough to be the likely meaning.
 */

/** Spelling that does not change a name: case, and dashes written as underscores. */
const normalise = (name: string): string => name.toLowerCase().replaceAll('-', '_');

/**
 * Levenshtein distance that also counts swapping two neighbours as one edit (optimal string
 * alignment), so `lables` is one edit from `labels`, as a reader would count it.
 */
export function editDistance(a: string, b: string): number {
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      let best = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (beforePrevious[j - 2] ?? 0) + 1);
      current.push(best);
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * The candidate nearest to `typed`, or undefined when none is within a third of the typed
 * name's length (at least one edit): `foo` suggests nothing rather than an unrelated `log`.
 */
export function closest(typed: string, candidates: Iterable<string>): string | undefined {
  const wanted = normalise(typed);
  const limit = Math.max(1, Math.floor(wanted.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(wanted, normalise(candidate));
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}
