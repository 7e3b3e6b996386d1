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

/**
 * Ids with control characters (Unicode category Cc: U+0000–U+001F, U+007F–U+009F) or lone
 * surrogates are left out rather than repaired: a repaired id would not match the one in Hermes'
 * own logs. One pass over the code units: this runs for every observation with an exemplar, and
 * `isWellFormed()` plus a `\p{Cc}` regular expression cost twice as much.
 */
function usable(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const unit = value.charCodeAt(index);
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) return false;
    if (unit < 0xd800 || unit > 0xdfff) continue;
    // A high surrogate must be followed by a low one; a low one on its own is lone.
    const next = value.charCodeAt(index + 1);
    if (unit > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return false;
    index += 1;
  }
  return true;
}

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
