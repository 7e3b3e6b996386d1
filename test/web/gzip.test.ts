/** Gzip of a render's parts through reused scratch Buffers (src/web/gzip.ts). */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipParts, ScratchBuffers } from '../../src/web/gzip.js';

describe('gzipParts', () => {
  it('compresses strings and bytes through a scratch smaller than the whole, byte for byte', async () => {
    const parts: (string | Uint8Array)[] = [];
    for (let index = 0; index < 200; index += 1) parts.push(`series_${index} ${index}\n`, Buffer.from(`bytes ${index} é\n`, 'utf8'));
    // Larger than the scratch on its own, and a multi-byte character across a run boundary.
    parts.push('x'.repeat(300), '€'.repeat(40));
    const expected = Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : part)));
    const body = await gzipParts(parts, Buffer.alloc(64));
    expect(body.bytes).toBe(body.chunks.reduce((total, chunk) => total + chunk.length, 0));
    expect(gunzipSync(Buffer.concat(body.chunks)).equals(expected)).toBe(true);
  });

  it('gives each of two concurrent compressions its own scratch, and keeps at most two', async () => {
    const scratch = new ScratchBuffers(32, 2);
    const [first, second, third] = [scratch.take(), scratch.take(), scratch.take()];
    expect(new Set([first, second, third]).size).toBe(3);
    const texts = ['a'.repeat(1000), 'b'.repeat(1000)];
    const bodies = await Promise.all(texts.map((text, index) => gzipParts([text.slice(0, 500), text.slice(500)], index === 0 ? first : second)));
    expect(bodies.map((body) => gunzipSync(Buffer.concat(body.chunks)).toString())).toEqual(texts);
    for (const buffer of [first, second, third]) scratch.give(buffer);
    expect([scratch.take(), scratch.take()]).toEqual([second, first]);
    expect(scratch.take()).not.toBe(third);
  });
});
