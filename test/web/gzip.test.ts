/** Gzip of a render's parts through reused scratch Buffers (src/web/gzip.ts). */
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CHUNK_BYTES } from '../../src/web/parts.js';
import { GZIP_LEVEL, gzipParts, LOOP_GZIP_MAX_BYTES, ScratchBuffers } from '../../src/web/gzip.js';

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

  /** Which settles first: the compression, or the event loop's next turn (the thread pool answers only on a later one). */
  const settledFirst = (body: Promise<unknown>) => Promise.race([body.then(() => 'compression'), nextTurn().then(() => 'next turn')]);

  it('compresses an exposition of up to LOOP_GZIP_MAX_BYTES on the event loop, before its next turn, byte for byte', async () => {
    expect(LOOP_GZIP_MAX_BYTES).toBe(256 * 1024);
    const line = 'hermes_sidecar_events_total{event="pre_tool_call"} 12\n';
    const parts = [...Array.from({ length: Math.floor(LOOP_GZIP_MAX_BYTES / line.length) }, () => line), Buffer.from('é\n')];
    const text = parts.map((part) => part.toString()).join('');
    const body = gzipParts(parts, Buffer.allocUnsafe(CHUNK_BYTES));
    expect(await settledFirst(body)).toBe('compression');
    const { chunks, bytes } = await body;
    expect(Buffer.concat(chunks).equals(gzipSync(text, { level: GZIP_LEVEL }))).toBe(true);
    expect(bytes).toBe(Buffer.concat(chunks).length);
    expect(gunzipSync(Buffer.concat(chunks)).toString()).toBe(text);
  });

  it('compresses a larger exposition, or one that might not fit the scratch, in the thread pool', async () => {
    const large = ['x'.repeat(LOOP_GZIP_MAX_BYTES + 1)];
    // 120,000 code units fit the 256 KiB limit but could need 360,000 bytes: more than this scratch.
    const mayNotFit = ['€'.repeat(120_000)];
    for (const [parts, scratch] of [[large, CHUNK_BYTES], [mayNotFit, 300_000]] as const) {
      const body = gzipParts(parts, Buffer.allocUnsafe(scratch));
      expect(await settledFirst(body)).toBe('next turn');
      expect(gunzipSync(Buffer.concat((await body).chunks)).toString()).toBe(parts[0]);
    }
  });

  it('compresses an empty exposition on the loop too', async () => {
    expect(gunzipSync(Buffer.concat((await gzipParts([], Buffer.allocUnsafe(64))).chunks)).length).toBe(0);
  });
});
