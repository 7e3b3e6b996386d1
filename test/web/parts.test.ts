/** Packing a render's parts into Buffers (src/web/parts.ts). */
import { describe, expect, it } from 'vitest';
import { packParts } from '../../src/web/parts.js';

describe('packParts', () => {
  /** Every span packParts yields, copied as it comes (the next may reuse its Buffer), as text; and the sizes asked for. */
  function packed(parts: readonly (string | Uint8Array)[], bufferFor: (bytes: number) => Buffer) {
    const asked: number[] = [];
    const spans = [...packParts(parts, (bytes) => (asked.push(bytes), bufferFor(bytes)))].map((span) => Buffer.from(span).toString('utf8'));
    return { spans, asked };
  }
  const fresh = (size: number) => (bytes: number) => Buffer.alloc(Math.max(size, bytes));

  it('yields nothing and asks for no Buffer for no parts', () => {
    expect(packed([], fresh(8))).toEqual({ spans: [], asked: [] });
  });

  it('starts a new Buffer for the part that would cross the boundary, keeping each part whole', () => {
    expect(packed(['abc', 'def', 'gh', 'ij'], fresh(8))).toEqual({ spans: ['abcdefgh', 'ij'], asked: [3, 2] });
    expect(packed(['abcde', 'fghi'], fresh(8))).toEqual({ spans: ['abcde', 'fghi'], asked: [5, 4] });
  });

  it('never splits a multi-byte character: one that would end past the boundary moves whole to the next Buffer', () => {
    // 'é' is 2 bytes and '€' 3 in UTF-8: 6 + 2 fills 8 exactly, 7 + 2 does not fit.
    expect(packed(['abcdef', 'é', '€'], fresh(8))).toEqual({ spans: ['abcdefé', '€'], asked: [6, 3] });
    expect(packed(['abcdefg', 'é'], fresh(8))).toEqual({ spans: ['abcdefg', 'é'], asked: [7, 2] });
  });

  it('copies byte parts in as they are, beside strings', () => {
    const { spans } = packed(['a=', Uint8Array.from([0xe2, 0x82, 0xac]), '\n', Buffer.from('bcdefgh')], fresh(8));
    expect(spans).toEqual(['a=€\n', 'bcdefgh']);
  });

  it('gives a part larger than a Buffer a Buffer of its own size', () => {
    expect(packed(['ab', 'x'.repeat(20), 'cd'], fresh(8))).toEqual({ spans: ['ab', 'x'.repeat(20), 'cd'], asked: [2, 20, 2] });
  });

  it('encodes the next span only once the last one was taken, so one scratch Buffer serves every span', () => {
    const scratch = Buffer.alloc(4);
    const spans = packParts(['ab', 'cd', 'ef'], () => scratch);
    const first = spans.next().value;
    expect(first?.toString()).toBe('abcd');
    // The generator waits at the first span: 'ef' is not encoded over it yet.
    expect(scratch.toString()).toBe('abcd');
    const second = spans.next().value;
    expect(second?.toString()).toBe('ef');
    expect(second?.buffer).toBe(scratch.buffer);
    expect(scratch.toString()).toBe('efcd');
    expect(spans.next()).toEqual({ done: true, value: undefined });
  });
});
