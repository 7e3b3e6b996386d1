/** IdMap (ids of any length, long ones by digest), what an id costs to keep, and keys made of two ids. */
import { describe, expect, it } from 'vitest';
import { compositeKey, IdMap, LONG_ID_CHARS, stringBytes } from '../../src/correlate/idMap.js';

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
