/** Packing a render's parts into Buffers (src/web/parts.ts). */
import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, estimatedBytes, packParts, toChunks, type RenderedBody } from '../../src/web/parts.js';

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

describe('toChunks', () => {
  const sizesOf = (body: RenderedBody) => body.chunks.map((chunk) => [chunk.length, chunk.buffer.byteLength - chunk.byteOffset]);

  it('gives a small body one Buffer of its own size, not a whole chunk', () => {
    const parts = ['# HELP a A.\n', Buffer.from('a 1\n'), ...Array.from({ length: 1000 }, (_, index) => `b{x="${index % 10}"} 2\n`)];
    const body = toChunks(parts);
    expect(Buffer.concat(body.chunks).toString()).toBe(parts.map((part) => (typeof part === 'string' ? part : part.toString())).join(''));
    expect(body.bytes).toBe(16 + 11_000);
    expect(sizesOf(body)).toEqual([[11_016, 11_016]]);
  });

  it('fills CHUNK_BYTES Buffers and sizes the last to what is left', () => {
    const line = `${'x'.repeat(1023)}\n`;
    const parts = Array.from({ length: 1024 + 100 }, () => line);
    const body = toChunks(parts);
    expect(sizesOf(body)).toEqual([
      [CHUNK_BYTES, CHUNK_BYTES],
      [100 * 1024, 100 * 1024],
    ]);
    expect(body.bytes).toBe(1124 * 1024);
  });

  it('still holds every byte when characters beyond ASCII make the body longer than its estimate', () => {
    const parts = [...Array.from({ length: 50 }, () => '€'.repeat(1000)), 'end\n'];
    expect(estimatedBytes(parts)).toBe(50_004);
    const body = toChunks(parts);
    expect(body.bytes).toBe(150_004);
    expect(Buffer.concat(body.chunks).toString()).toBe(parts.join(''));
    expect(body.chunks.length).toBeLessThan(10);
  });
});
