/**
 * Exemplars: the content-free ids of one call attached to the histogram bucket it landed in, so
 * an SRE can go from a slow bucket to the call behind it. Ids are exemplar labels only, never
 * series labels.
 *
 * OpenMetrics caps an exemplar's label set at 128 characters (names plus values). Ids are taken
 * in the caller's priority order; one that would not fit is left out whole, since a truncated id
 * matches nothing.
 */
import type { Exemplar } from './families.js';

export const MAX_EXEMPLAR_CHARACTERS = 128;

// Ids with control characters or lone surrogates are left out rather than repaired: a repaired
// id would not match the one in Hermes' own logs. Two builtins check an id (about 50 ns on the
// event path), less than a loop over its code units costs; an id of printable ASCII (every id
// Hermes makes) passes one non-Unicode expression first, which costs less than the two.
const CONTROL_CHARACTERS = /\p{Cc}/u;

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const usable = (value: string): boolean => PRINTABLE_ASCII.test(value) || (value.isWellFormed() && !CONTROL_CHARACTERS.test(value));

/**
 * An exemplar of `value` at `timestamp` (epoch seconds) carrying the ids that are present and
 * fit, in order; undefined when none does.
 */
export function exemplarOf(
  ids: readonly (readonly [name: string, value: string | undefined])[],
  value: number,
  timestamp: number,
): Exemplar | undefined {
  let labels: Record<string, string> | undefined;
  // UTF-16 length bounds the code-point count from above, so staying within it stays within the limit.
  let room = MAX_EXEMPLAR_CHARACTERS;
  for (const [name, id] of ids) {
    if (id === undefined) continue;
    const length = name.length + id.length;
    if (length > room || !usable(id)) continue;
    labels ??= {};
    labels[name] = id;
    room -= length;
  }
  return labels === undefined ? undefined : { labels, value, timestamp };
}
