/** IdMap (ids of any length, long ones by digest), what an id costs to keep, and keys made of two ids. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compositeKey, IdMap, isLongId, LONG_ID_CHARS, storedKey, stringBytes } from '../../src/correlate/idMap.js';

describe('IdMap with long ids', () => {
  it('are looked up by digest: equal-length ids that differ only in their last code unit, lone surrogates included, stay apart', () => {
    const map = new IdMap<number>();
    const base = 'x'.repeat(20_000);
    const ids = [`${base}a`, `${base}b`, `${base}\ud800`, `${base}\udc00`, `${base}\ufffd`];
    ids.forEach((id, index) => map.set(id, index));
    expect(map.size).toBe(5);
    ids.forEach((id, index) => expect(map.get(id)).toBe(index));
    // An id as long as the limit is kept as it is; one code unit more and it is looked up by digest.
    const atLimit = 'y'.repeat(LONG_ID_CHARS);
    map.set(atLimit, 7);
    map.set(`${atLimit}y`, 8);
    expect(map.get(atLimit)).toBe(7);
    expect(map.get(`${atLimit}y`)).toBe(8);
    expect(map.delete(`${base}a`)).toBe(true);
    expect(map.get(`${base}a`)).toBeUndefined();
    expect(map.size).toBe(6);
  });
});


describe('stringBytes', () => {
  it('charges two bytes per UTF-16 code unit, whatever the characters', () => {
    expect(stringBytes('')).toBe(0);
    expect(stringBytes('abc')).toBe(6);
    expect(stringBytes('\u00e9\ud83d\ude00')).toBe(6);
  });
});

describe('compositeKey', () => {
  it('keeps keys apart whose parts join to the same text', () => {
    expect(compositeKey('ab', 'c')).not.toBe(compositeKey('a', 'bc'));
    expect(compositeKey('main', 'r1')).toBe(compositeKey('main', 'r1'));
  });
});

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

describe('IdMap with short and long ids', () => {
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
