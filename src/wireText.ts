/**
 * Text from the wire before anything stores it: the two values a label takes when the sender's
 * value is missing or outside a closed set, and the UTF-8 byte bound of a raw string. The event
 * contract (contract/) and the label guard (metrics/labels.ts) both speak it, so it sits below
 * both: the contract never reaches into the storage for it.
 */

export const UNKNOWN = 'unknown';
export const OTHER = 'other';
export type Fallback = typeof UNKNOWN | typeof OTHER;

/** Default of --ingest.max-label-value-bytes: the longest raw name read, cached or sanitized. */
export const DEFAULT_MAX_RAW_LABEL_BYTES = 1024;

/**
 * Whether `text` is at most `maxBytes` long in UTF-8. A UTF-16 unit is 1 to 3 bytes (a surrogate
 * pair 4 for two units), so the length alone settles most strings without encoding them.
 */
export function fitsBytes(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return false;
  if (text.length * 3 <= maxBytes) return true;
  return Buffer.byteLength(text, 'utf8') <= maxBytes;
}

/** The longest prefix of `text` that is at most `maxBytes` in UTF-8, cut between characters. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (fitsBytes(text, maxBytes)) return text;
  // No more than maxBytes units can fit; encode only those.
  const bytes = Buffer.from(text.slice(0, maxBytes), 'utf8');
  let end = Math.min(maxBytes, bytes.length);
  // Back off continuation bytes (10xxxxxx) so the cut falls before a character's first byte.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.toString('utf8', 0, end);
}
