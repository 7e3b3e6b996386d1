/** IdMap: client ids of any length as keys, long ones by digest in a map of their own. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IdMap, isLongId, LONG_ID_CHARS, storedKey, stringBytes } from '../../src/correlate/idMap.js';

describe('storedKey', () => {
  it('keeps an id up to LONG_ID_CHARS as it is, and stores a longer one by its SHA-256', () => {
    const short = 'x'.repeat(LONG_ID_CHARS);
    const long = 'x'.repeat(LONG_ID_CHARS + 1);
    expect([isLongId(short), isLongId(long)]).toEqual([false, true]);
    expect(storedKey(short)).toBe(short);
    expect(storedKey(long)).toBe(createHash('sha256').update(long, 'utf16le').digest('base64'));
  });

  it('gives ids that differ only in lone surrogates different digests', () => {
    const base = 'x'.repeat(LONG_ID_CHARS);
    // Both would encode to the same UTF-8 (U+FFFD); their UTF-16 units differ.
    expect(storedKey(`${base}\uD800`)).not.toBe(storedKey(`${base}\uDC00`));
  });
});

describe('IdMap', () => {
  it('finds, replaces and deletes short and long ids alike', () => {
    const map = new IdMap<number>();
    const long = 'L'.repeat(70_000);
    map.set('a', 1);
    map.set(long, 2);
    map.set('a', 3);
    expect([map.get('a'), map.get(long), map.size]).toEqual([3, 2, 2]);
    expect(map.get('L'.repeat(69_999) + 'M')).toBeUndefined();
    expect(map.delete(long)).toBe(true);
    expect(map.delete(long)).toBe(false);
    expect([map.get(long), map.size]).toEqual([undefined, 1]);
  });

  it('never confuses a short id with the digest a long id is stored under', () => {
    const map = new IdMap<string>();
    const long = 'y'.repeat(LONG_ID_CHARS + 5);
    map.set(long, 'long');
    const digest = storedKey(long);
    expect(map.get(digest)).toBeUndefined();
    map.set(digest, 'short');
    expect([map.get(long), map.get(digest), map.size]).toEqual(['long', 'short', 2]);
  });

  it('serves a caller that keeps the stored key', () => {
    const map = new IdMap<number>();
    const long = 'z'.repeat(LONG_ID_CHARS * 2);
    const key = storedKey(long);
    map.setStored(key, true, 9);
    expect(map.get(long)).toBe(9);
    expect(map.getStored(key, false)).toBeUndefined();
    expect(map.deleteStored(key, true)).toBe(true);
    expect(map.size).toBe(0);
  });
});

describe('stringBytes', () => {
  it('charges two bytes per UTF-16 unit, whatever the characters', () => {
    expect(stringBytes('')).toBe(0);
    expect(stringBytes('abc')).toBe(6);
    expect(stringBytes('😀')).toBe(4);
  });
});
