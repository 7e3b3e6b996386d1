/**
 * A Map keyed by client ids, safe for ids of any length, and what an id costs to keep.
 *
 * V8 hashes a string of more than 16,383 characters by its length alone, so in a plain Map every
 * long id of one length shares one bucket and each lookup compares against all of them: with a
 * few thousand 65 KB ids, a lookup costs thousands of comparisons and a sweep deleting them all is
 * quadratic. Ids longer than LONG_ID_CHARS are therefore looked up by a SHA-256 digest of their
 * UTF-16 code units (lone surrogates included, so two distinct ids never share a digest the way
 * their UTF-8 forms could), in a Map of their own, so a digest can never equal a short id.
 */
import { createHash } from 'node:crypto';

/** Ids up to this many UTF-16 code units are keys as they are: far below V8's limit, and above any id Hermes makes. */
export const LONG_ID_CHARS = 1024;

/**
 * Bytes a string may take in memory: V8 stores one or two bytes per UTF-16 code unit (two as soon
 * as one unit needs it), so two per unit is an upper bound whatever the string holds.
 */
export function stringBytes(text: string): number {
  return 2 * text.length;
}

const digestOf = (id: string): string => createHash('sha256').update(id, 'utf16le').digest('base64');

/** Whether an id is looked up by its digest. */
export const isLongId = (id: string): boolean => id.length > LONG_ID_CHARS;

/** The key an id is stored under: the id itself, or its digest when it is long. */
export const storedKey = (id: string): string => (isLongId(id) ? digestOf(id) : id);

/**
 * Client id → V. The methods taking a stored key and `long` (whether its id was long) serve a
 * caller that keeps the stored key, so a long id is hashed once per event, not once per lookup.
 */
export class IdMap<V> {
  private readonly short = new Map<string, V>();
  private readonly long = new Map<string, V>();

  get size(): number {
    return this.short.size + this.long.size;
  }

  get(id: string): V | undefined {
    return this.getStored(storedKey(id), isLongId(id));
  }

  set(id: string, value: V): void {
    this.setStored(storedKey(id), isLongId(id), value);
  }

  delete(id: string): boolean {
    return this.deleteStored(storedKey(id), isLongId(id));
  }

  getStored(key: string, long: boolean): V | undefined {
    return long ? this.long.get(key) : this.short.get(key);
  }

  setStored(key: string, long: boolean, value: V): void {
    if (long) this.long.set(key, value);
    else this.short.set(key, value);
  }

  deleteStored(key: string, long: boolean): boolean {
    return long ? this.long.delete(key) : this.short.delete(key);
  }
}

/**
 * A map key made of two opaque ids. The length prefix keeps it injective whatever the ids
 * contain.
 */
export function compositeKey(first: string, second: string): string {
  return `${first.length}:${first}${second}`;
}
