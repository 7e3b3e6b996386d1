/**
 * Gzip of a render's parts for /metrics, in libuv's thread pool (off the event loop), through
 * scratch Buffers reused from one scrape to the next.
 */
import { constants, createGzip } from 'node:zlib';
import { CHUNK_BYTES, packParts, type RenderedBody } from './parts.js';

/**
 * Gzip at the fastest level: exposition text compresses well even so, and the CPU a higher level
 * costs competes with ingest on the same machine.
 */
export const GZIP_LEVEL = constants.Z_BEST_SPEED;

/** Compressed output comes in chunks of this size (zlib's default is 16 KiB: four times the chunks to send). */
const GZIP_OUTPUT_CHUNK_BYTES = 64 * 1024;

/**
 * Buffers a compression encodes text into before zlib reads it, reused from one scrape to the
 * next. A fresh Buffer per chunk is memory outside V8's heap that stays resident until a garbage
 * collection, which an idle sidecar may not run for many scrapes: a whole exposition of it per
 * scrape. Concurrent compressions each take their own; at most `keep` are kept between scrapes.
 */
export class ScratchBuffers {
  private readonly free: Buffer[] = [];

  constructor(
    private readonly bytes = CHUNK_BYTES,
    private readonly keep = 2,
  ) {}

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.bytes);
  }

  give(buffer: Buffer): void {
    if (this.free.length < this.keep) this.free.push(buffer);
  }
}

/**
 * Gzips parts (strings or bytes) through one zlib stream, each run of parts encoded into
 * `scratch` (packParts) and written once zlib has consumed the previous run (its write callback),
 * so the scratch is never overwritten while zlib still reads it. A part larger than the scratch is
 * encoded into a Buffer of its own size and written alone.
 */
export async function gzipParts(parts: readonly (string | Uint8Array)[], scratch: Buffer): Promise<RenderedBody> {
  const zip = createGzip({ level: GZIP_LEVEL, chunkSize: GZIP_OUTPUT_CHUNK_BYTES });
  const output: Buffer[] = [];
  let bytes = 0;
  zip.on('data', (chunk: Buffer) => {
    output.push(chunk);
    bytes += chunk.length;
  });
  const ended = new Promise<void>((resolve, reject) => {
    zip.once('end', resolve);
    zip.once('error', reject);
  });
  const consumed = (data: Uint8Array) =>
    new Promise<void>((resolve, reject) => zip.write(data, (error) => (error ? reject(error) : resolve())));
  const runs = packParts(parts, (bytes) => (bytes > scratch.length ? Buffer.allocUnsafe(bytes) : scratch));
  for (const run of runs) await consumed(run);
  zip.end();
  await ended;
  return { chunks: output, bytes };
}

