/**
 * Gzip of a render's parts for /metrics, through scratch Buffers reused from one scrape to the
 * next: in libuv's thread pool (off the event loop), or on the loop for a small exposition.
 */
import { constants, createGzip, gzipSync } from 'node:zlib';
import { CHUNK_BYTES, estimatedBytes, packParts, type RenderedBody } from './parts.js';

/**
 * Gzip at the fastest level: exposition text compresses well even so, and the CPU a higher level
 * costs competes with ingest on the same machine.
 */
export const GZIP_LEVEL = constants.Z_BEST_SPEED;

/** Compressed output comes in chunks of this size (zlib's default is 16 KiB: four times the chunks to send). */
const GZIP_OUTPUT_CHUNK_BYTES = 64 * 1024;

/**
 * Bodies up to this many bytes are compressed on the event loop, in about a millisecond at
 * GZIP_LEVEL. The thread pool starts four threads on its first use, and zlib allocates its state
 * (about 270 KiB per compression) in the thread that runs it, so every pool thread keeps an
 * allocator arena of its own resident: about 1 MiB that an idle sidecar's exposition of some
 * 60 KB never needed.
 */
export const LOOP_GZIP_MAX_BYTES = 256 * 1024;

/** UTF-8 bytes per UTF-16 code unit, at most. */
const MAX_BYTES_PER_CODE_UNIT = 3;

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
 * Gzips parts (strings or bytes). A body of at most LOOP_GZIP_MAX_BYTES that fits in `scratch`
 * whatever its characters is encoded there and compressed on the event loop. Any other goes
 * through one zlib stream in the thread pool, each run of parts encoded into `scratch` (packParts)
 * and written once zlib has consumed the previous run (its write callback), so the scratch is
 * never overwritten while zlib still reads it; a part larger than the scratch is encoded into a
 * Buffer of its own size and written alone.
 */
export async function gzipParts(parts: readonly (string | Uint8Array)[], scratch: Buffer): Promise<RenderedBody> {
  const estimate = estimatedBytes(parts);
  if (estimate <= LOOP_GZIP_MAX_BYTES && estimate * MAX_BYTES_PER_CODE_UNIT <= scratch.length) return gzipOnLoop(parts, scratch);
  return gzipInPool(parts, scratch);
}

function gzipOnLoop(parts: readonly (string | Uint8Array)[], scratch: Buffer): RenderedBody {
  // One run: the body fits in the scratch.
  const [body = scratch.subarray(0, 0)] = packParts(parts, () => scratch);
  const compressed = gzipSync(body, { level: GZIP_LEVEL });
  return { chunks: [compressed], bytes: compressed.length };
}

async function gzipInPool(parts: readonly (string | Uint8Array)[], scratch: Buffer): Promise<RenderedBody> {
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

