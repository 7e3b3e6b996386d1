/**
 * Reading a request body without trusting it: bytes are counted while they stream, on the wire
 * and again after gzip inflation, and the read stops at the first byte past a limit; every byte
 * kept is reserved from the listener's in-flight budget first, and every byte zlib may inflate
 * is reserved before zlib is handed the input (inflateWithin). Nothing is buffered whole and
 * then measured, so an unauthenticated sender can hold at most its limit per request, and all
 * senders together at most the budget. A UTF-8 byte order mark is kept here (a signature covers
 * it) and skipped by the parsers (withoutBom).
 */
import { once } from 'node:events';
import { Transform, Writable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Request, RequestHandler, Response } from 'express';
import { SidecarError } from '../errors.js';
import type { Families } from '../metrics/registry.js';
import { gauge, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';

/** The families this module writes (and all it is handed). */
export const BODY_FAMILIES = {
  ingestInflightBytes: fed(gauge('hermes_sidecar_ingest_inflight_bytes', {}, 'self',
    'Bytes of request bodies being read or held on the ingest listener (bounded by --ingest.max-inflight-bytes; a refusal counts in events_rejected_total as inflight_limit).'),
    'sidecar', 'ingest body reader'),
} as const satisfies Declarations;

/** A UTF-8 byte order mark: some senders start JSON with one; JSON.parse would refuse it. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** What an open gunzip stream costs besides the bytes it produces (zlib window and buffers). */
export const INFLATE_OVERHEAD_BYTES = 64 * 1024;
/** The most bytes one byte of deflate data inflates to (258-byte matches in under 2 bits each: RFC 1951's bound). */
export const MAX_INFLATE_RATIO = 1032;
/** Compressed bytes handed to zlib at a time: their most output, reserved before they are written, is about 1 MiB. */
const MAX_INFLATE_STEP_BYTES = 1024;

export interface BodyLimits {
  /** Largest body as sent (compressed, when it is). */
  readonly maxWireBytes: number;
  /** Largest body after inflation. */
  readonly maxInflatedBytes: number;
  /** The whole body must have arrived within this time. */
  readonly timeoutMs: number;
}

/**
 * Bytes held by request bodies being read on one listener. A reservation that does not fit is
 * refused: the caller answers 503 + Retry-After instead of buffering.
 */
export class InflightBudget {
  private used = 0;

  constructor(
    readonly capacityBytes: number,
    private readonly metrics?: Families<typeof BODY_FAMILIES>,
  ) {}

  /** The bytes held, read at scrape time. */
  collect(): void {
    this.metrics?.ingestInflightBytes.set({}, this.used);
  }

  get bytes(): number {
    return this.used;
  }

  tryReserve(bytes: number): boolean {
    if (this.used + bytes > this.capacityBytes) return false;
    this.used += bytes;
    return true;
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}

type Encoding = 'identity' | 'gzip';

/** Only gzip is accepted (and no encoding at all); anything else is 415 before a byte is read. */
export function contentEncoding(request: Request): Encoding {
  const header = request.get('content-encoding')?.trim().toLowerCase() ?? '';
  if (header === '' || header === 'identity') return 'identity';
  if (header === 'gzip' || header === 'x-gzip') return 'gzip';
  throw new SidecarError('unsupported_encoding');
}

function counter(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > limit) callback(new SidecarError('too_large'));
      else callback(null, chunk);
    },
  });
}

/** Keeps the chunks, reserving each from the budget before it is kept. */
class Collector extends Writable {
  readonly chunks: Buffer[] = [];
  private kept = 0;

  constructor(
    private readonly limit: number,
    private readonly reserve: (bytes: number) => boolean,
  ) {
    super();
  }

  get length(): number {
    return this.kept;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.kept += chunk.length;
    if (this.kept > this.limit) return callback(new SidecarError('too_large'));
    if (!this.reserve(chunk.length)) return callback(new SidecarError('inflight_limit'));
    this.chunks.push(chunk);
    callback();
  }
}

type Reserve = (bytes: number) => boolean;

/**
 * Gunzip that never produces a byte the budget has not granted. zlib inflates all the input it
 * is handed, whatever its reader does (1 KiB of a bomb is 1 MiB out), so a cap counted once
 * the output exists cannot bound what a bomb allocates. Here the wire bytes go to zlib `step`
 * bytes at a time; before each step the most it can inflate to is reserved, and once the step
 * is done what it did not produce is given back. The steps stay small enough that this most is
 * no more than the body's own limit.
 */
function inflateWithin(maxInflatedBytes: number, reserve: Reserve, giveBack: (bytes: number) => void) {
  const step = Math.min(MAX_INFLATE_STEP_BYTES, Math.max(16, Math.ceil(maxInflatedBytes / MAX_INFLATE_RATIO)));
  const settle = (output: Buffer[], advance: number): Buffer[] => {
    const bytes = output.reduce((total, chunk) => total + chunk.length, 0);
    if (bytes <= advance) giveBack(advance - bytes);
    else if (!reserve(bytes - advance)) throw new SidecarError('inflight_limit');
    return output;
  };
  return async function* inflate(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    const gunzip = createGunzip();
    const produced: Buffer[] = [];
    gunzip.on('data', (chunk: Buffer) => produced.push(chunk));
    const ended = once(gunzip, 'end');
    ended.catch(() => undefined);
    try {
      for await (const chunk of source) {
        for (let offset = 0; offset < chunk.length; offset += step) {
          const piece = chunk.subarray(offset, offset + step);
          const advance = piece.length * MAX_INFLATE_RATIO;
          if (!reserve(advance)) throw new SidecarError('inflight_limit');
          await Promise.race([new Promise<void>((resolve, reject) => gunzip.write(piece, (error) => (error ? reject(error) : resolve()))), ended]);
          yield* settle(produced.splice(0), advance);
        }
      }
      gunzip.end();
      await ended;
      yield* settle(produced.splice(0), 0);
    } finally {
      gunzip.destroy();
    }
  };
}

/** The body without a leading UTF-8 BOM (the signature of a webhook covers the BOM; parsing skips it). */
export function withoutBom(body: Buffer): Buffer {
  return body.subarray(0, BOM.length).equals(BOM) ? body.subarray(BOM.length) : body;
}

/**
 * A body that was not read to its end must not be read further: the answer closes the
 * connection, so the rest of an oversized or never-ending body is never consumed.
 */
function stopReading(request: Request, response: Response): void {
  request.unpipe();
  request.pause();
  if (!response.headersSent) response.setHeader('Connection', 'close');
}

/**
 * Reads the body of `request` within `limits`, holding its bytes against `budget` until the
 * response has closed. Throws SidecarError: too_large (413), unsupported_encoding (415),
 * inflight_limit (503), body_timeout (408), invalid_encoding (400, a broken gzip stream).
 */
export async function readBody(request: Request, response: Response, limits: BodyLimits, budget: InflightBudget): Promise<Buffer> {
  const encoding = contentEncoding(request);
  const declared = Number(request.get('content-length'));
  if (Number.isFinite(declared) && declared > limits.maxWireBytes) {
    stopReading(request, response);
    throw new SidecarError('too_large');
  }
  let reserved = 0;
  const reserve: Reserve = (bytes) => {
    if (!budget.tryReserve(bytes)) return false;
    reserved += bytes;
    return true;
  };
  const giveBack = (bytes: number) => {
    budget.release(bytes);
    reserved -= bytes;
  };
  response.once('close', () => budget.release(reserved));
  if (encoding === 'gzip' && !reserve(INFLATE_OVERHEAD_BYTES)) throw new SidecarError('inflight_limit');

  // Identity bodies are reserved as they are kept; gzip ones are counted on the wire, then
  // inflated within reservations made before zlib produces them.
  const collector = new Collector(limits.maxInflatedBytes, encoding === 'gzip' ? () => true : reserve);
  const first = counter(limits.maxWireBytes);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new SidecarError('body_timeout')), limits.timeoutMs);
  // The request is piped, not part of the pipeline: a failed read must leave its socket open
  // long enough to carry the answer (the pipeline would destroy it).
  const clientGone = () => {
    if (!request.complete) first.destroy(new SidecarError('invalid_encoding'));
  };
  request.once('close', clientGone);
  request.once('error', clientGone);
  request.pipe(first);
  try {
    if (encoding === 'gzip') await pipeline(first, inflateWithin(limits.maxInflatedBytes, reserve, giveBack), collector, { signal: abort.signal });
    else await pipeline(first, collector, { signal: abort.signal });
  } catch (error) {
    stopReading(request, response);
    throw readFailure(error, abort.signal);
  } finally {
    clearTimeout(timer);
    request.off('close', clientGone);
    request.off('error', clientGone);
  }
  // The stream is gone; keep the reservation of what is held until the answer is sent.
  if (encoding === 'gzip') giveBack(INFLATE_OVERHEAD_BYTES);
  return Buffer.concat(collector.chunks, collector.length);
}

function readFailure(error: unknown, signal: AbortSignal): SidecarError {
  if (signal.aborted && signal.reason instanceof SidecarError) return signal.reason;
  if (error instanceof SidecarError) return error;
  // zlib errors (not gzip, truncated, bad checksum) and a client that went away mid-body.
  return new SidecarError('invalid_encoding');
}

/**
 * Reads the body (body.ts: counted while streaming, on the wire and after gzip inflation, held
 * against the listener's in-flight budget) into `request.body`.
 */
export function rawBody(
  options: { readonly bodyTimeoutMs: number; readonly inflight: InflightBudget },
  maxBytes: number,
): RequestHandler {
  const limits: BodyLimits = { maxWireBytes: maxBytes, maxInflatedBytes: maxBytes, timeoutMs: options.bodyTimeoutMs };
  return async (request, response, next) => {
    request.body = await readBody(request, response, limits, options.inflight);
    next();
  };
}

/** The body read by rawBody. */
export const bodyOf = (request: Request): Buffer => (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
