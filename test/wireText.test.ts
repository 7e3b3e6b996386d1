import { describe, expect, it } from 'vitest';
import { cutToBytes, DEFAULT_MAX_RAW_LABEL_BYTES, fitsBytes, OTHER, UNKNOWN } from '../src/wireText.js';

describe('fitsBytes', () => {
  it('counts UTF-8 bytes, not UTF-16 units', () => {
    expect(fitsBytes('é'.repeat(512), 1024)).toBe(true);
    expect(fitsBytes('é'.repeat(513), 1024)).toBe(false);
    // Three bytes per unit: 341 units of U+20AC are 1023 bytes, 342 are 1026.
    expect(fitsBytes('€'.repeat(341), 1024)).toBe(true);
    expect(fitsBytes('€'.repeat(342), 1024)).toBe(false);
    // A surrogate pair is four bytes for two units.
    expect(fitsBytes('😀'.repeat(256), 1024)).toBe(true);
    expect(fitsBytes('😀'.repeat(256) + 'a', 1024)).toBe(false);
  });

  it('settles by length alone at both ends', () => {
    expect(fitsBytes('a'.repeat(1025), 1024)).toBe(false);
    expect(fitsBytes('€'.repeat(341), 1023)).toBe(true);
    expect(fitsBytes('', 0)).toBe(true);
    expect(fitsBytes('a', 0)).toBe(false);
  });
});

describe('cutToBytes', () => {
  it('cuts between characters: a multi-byte value is cut to whole characters within the limit', () => {
    expect(cutToBytes('é'.repeat(10), 5)).toBe('éé');
    expect(cutToBytes('😀😀', 7)).toBe('😀');
    expect(cutToBytes('😀😀', 3)).toBe('');
    expect(cutToBytes('a€b', 4)).toBe('a€');
    expect(cutToBytes('a€b', 3)).toBe('a');
  });

  it('returns a value that fits as it is', () => {
    const fitting = 'x'.repeat(DEFAULT_MAX_RAW_LABEL_BYTES);
    expect(cutToBytes(fitting, DEFAULT_MAX_RAW_LABEL_BYTES)).toBe(fitting);
    expect(cutToBytes('abc', 3)).toBe('abc');
  });

  it('never returns more than the limit, for any cut point in mixed widths', () => {
    const text = 'aé€😀'.repeat(50);
    for (let limit = 0; limit <= Buffer.byteLength(text); limit += 1) {
      const cut = cutToBytes(text, limit);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(limit);
      expect(text.startsWith(cut)).toBe(true);
      // Whole characters only: within three bytes of the limit (the widest character is four).
      expect(limit - Buffer.byteLength(cut)).toBeLessThan(4);
      expect(cut.isWellFormed()).toBe(true);
    }
  });
});

describe('fallback values', () => {
  it('are the two spellings every label and rule uses', () => {
    expect([UNKNOWN, OTHER]).toEqual(['unknown', 'other']);
    expect(DEFAULT_MAX_RAW_LABEL_BYTES).toBe(1024);
  });
});
