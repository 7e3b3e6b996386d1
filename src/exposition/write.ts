/**
 * Sending a rendered exposition: parts are gathered into chunks of about 64 KiB and written as
 * they are joined, instead of building one string of the whole text. Up to 4 MiB may wait in
 * the socket (or gzip stream) before the writer waits for it to drain: waiting at every 16 KiB
 * high-water mark let ingest run between some 200 chunks of a 14 MB answer and stretched a 30 ms
 * scrape to seconds (tools/ingest-scrape-timing.ts). Gzip runs in a zlib stream (libuv's thread
 * pool), off the event loop.
 */
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createGzip } from 'node:zlib';

const CHUNK_CHARACTERS = 64 * 1024;
/** zlib compresses each written chunk as one thread-pool job: few large ones, few event-loop turns. */
const GZIP_CHUNK_CHARACTERS = 1024 * 1024;
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** Waits until `sink` wants more, or has closed (a scraper that went away). */
function drained(sink: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      sink.off('drain', done);
      sink.off('close', done);
      sink.off('error', done);
      resolve();
    };
    sink.on('drain', done);
    sink.on('close', done);
    sink.on('error', done);
  });
}

/**
 * Writes the parts to `sink` in chunks and ends it; stops early if the sink is destroyed. Text
 * parts are joined into chunks; byte parts (the protobuf exposition) are gathered the same way
 * and written as one Buffer per chunk.
 */
export async function writeParts(parts: readonly (string | Uint8Array)[], sink: Writable, chunkCharacters = CHUNK_CHARACTERS): Promise<void> {
  let batch: (string | Uint8Array)[] = [];
  let length = 0;
  for (const part of parts) {
    batch.push(part);
    length += part.length;
    if (length < chunkCharacters) continue;
    if (sink.destroyed) return;
    const more = sink.write(joined(batch));
    batch = [];
    length = 0;
    if (!more && sink.writableLength >= MAX_BUFFERED_BYTES) await drained(sink);
  }
  if (!sink.destroyed) sink.end(joined(batch));
}

function joined(batch: readonly (string | Uint8Array)[]): string | Buffer {
  if (batch.every((part) => typeof part === 'string')) return batch.join('');
  return Buffer.concat(batch.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : part)));
}

/**
 * Gzip at the fastest level: exposition text compresses well even so, and the CPU a higher level
 * costs competes with ingest on the same machine.
 */
export const GZIP_LEVEL = constants.Z_BEST_SPEED;

/** Writes the parts gzipped to `sink`; resolves when everything is flushed (or the sink went away). */
export async function writeGzipped(parts: readonly (string | Uint8Array)[], sink: Writable): Promise<void> {
  const gzip = createGzip({ level: GZIP_LEVEL });
  const piping = pipeline(gzip, sink).catch(() => undefined);
  await writeParts(parts, gzip, GZIP_CHUNK_CHARACTERS);
  await piping;
}
