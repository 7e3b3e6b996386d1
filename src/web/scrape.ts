/**
 * Paced, shared scrapes. A scrape waits for the next render of its format and shares it: every
 * scrape that arrives before a render starts gets that render's bytes, and every gzipped scrape
 * among them the same compressed bytes. The bytes are Buffers shared by every response that sends
 * them (a socket holds a reference, never a copy), so a hundred scrapers that wait together, or
 * never read, cost one render and one exposition's memory rather than a hundred.
 *
 * Renders are paced. The event loop accepts one connection per turn (libuv), so scrapers that
 * connect together arrive one turn apart; were every scrape that arrives after a render finished
 * to start one, each would cost a whole render, and a crowd of them would hold the loop (and the
 * connections queued behind them, /-/ready included) for as many renders. Instead a render starts
 * no sooner than `minIntervalMs` after the previous one started, nor sooner after the previous one
 * ended than that one took: render work stays under half the loop's time however many scrapers
 * come, and the turns between renders accept and read the crowd. A scrape never gets a render that
 * started before it arrived, so its answer is never older than its request.
 *
 * A render collects the scrape-time gauges first; when a collector or the render fails, every
 * scrape that shared it fails (500), and the failure is counted once.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createGzip } from 'node:zlib';
import type { Exposition } from '../exposition/exposition.js';
import type { ExpositionFormat } from '../exposition/exposition.js';
import { GZIP_LEVEL } from '../exposition/write.js';

/** Parts are written into Buffers of this size: few allocations, no one giant Buffer. */
const CHUNK_BYTES = 1024 * 1024;

/** Least time between the starts of two renders, by default (`--web.min-render-interval`). */
export const DEFAULT_MIN_RENDER_INTERVAL_MS = 100;

export interface RenderedBody {
  /** Whose concatenation is the whole answer body. */
  readonly chunks: readonly Buffer[];
  readonly bytes: number;
}

/** A shared render failed; it was reported (once) through the options' callbacks. */
export class RenderFailure extends Error {
  constructor(readonly stage: 'collect' | 'render') {
    super(`scrape ${stage} failed`);
  }
}

export interface RenderPacing {
  /** Least time from the start of one render to the start of the next (DEFAULT_MIN_RENDER_INTERVAL_MS). */
  readonly minIntervalMs?: number;
  /** Monotonic milliseconds. */
  readonly now?: () => number;
  /** Resolves after `ms` milliseconds: how a scrape waits for the next render slot (tests hold it). */
  readonly wait?: (ms: number) => Promise<void>;
}

export interface SharedRendersOptions {
  readonly exposition: Exposition;
  /** Refreshes the scrape-time gauges; false when any collector failed (it reports its own failures). */
  readonly collect: () => boolean;
  /** Called once per failed render or compression, however many scrapes shared it. */
  readonly renderFailed: (error: unknown) => void;
  readonly pacing?: RenderPacing;
  /** Called once per render made. */
  readonly rendered?: () => void;
  /** Called once per scrape that waits for a later render slot because a render ran too recently. */
  readonly paced?: () => void;
}

const byteLengthOf = (part: string | Uint8Array): number => (typeof part === 'string' ? Buffer.byteLength(part, 'utf8') : part.length);

/**
 * Encodes parts (strings as UTF-8, bytes as they are) into Buffers, each part whole in one of
 * them, and yields each Buffer's filled span once the next part does not fit in it, the last at
 * the end. `bufferFor(bytes)` gives the Buffer to fill next, at least `bytes` long (the part that
 * did not fit). Each yielded span is encoded only after the consumer asked for the next one, so
 * a consumer that is done with a span before it asks again may be given the same Buffer each
 * time. No string of the joined text is ever made: strings that large live in V8's large-object
 * space until a full collection, and a crowd of scrapes rendering every slot would pile them up.
 */
export function* packParts(parts: readonly (string | Uint8Array)[], bufferFor: (bytes: number) => Buffer): Generator<Buffer, void, undefined> {
  let buffer: Buffer | undefined;
  let used = 0;
  for (const part of parts) {
    const bytes = byteLengthOf(part);
    if (buffer === undefined || used + bytes > buffer.length) {
      if (buffer !== undefined && used > 0) yield buffer.subarray(0, used);
      buffer = bufferFor(bytes);
      used = 0;
    }
    if (typeof part === 'string') used += buffer.write(part, used, 'utf8');
    else {
      buffer.set(part, used);
      used += bytes;
    }
  }
  if (buffer !== undefined && used > 0) yield buffer.subarray(0, used);
}

/** The parts in Buffers of their own (CHUNK_BYTES each, or one part's size when it is larger): few allocations, no one giant Buffer. */
function toChunks(parts: readonly (string | Uint8Array)[]): RenderedBody {
  const chunks = [...packParts(parts, (bytes) => Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes)))];
  return { chunks, bytes: chunks.reduce((total, each) => total + each.length, 0) };
}

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

interface Pending<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

function pending<T>(): Pending<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((resolveWith, rejectWith) => {
    resolve = resolveWith;
    reject = rejectWith;
  });
  // Its waiters see a failure; a batch that no one of one kind waits for must not crash the process.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** The scrapes of one format that wait for the same render. */
interface Batch {
  readonly format: ExpositionFormat;
  readonly plain: Pending<RenderedBody>;
  /** Whether an uncompressed scrape waits: only then are the plain bytes kept. */
  plainWanted: boolean;
  /** Made when the first gzipped scrape joins: compressed once from the render. */
  compressed: Pending<RenderedBody> | undefined;
}

/** idle: no render due; soon: one starts at the end of this turn; waiting: one starts at the next slot; rendering: one is being made. */
type SlotState = 'idle' | 'soon' | 'waiting' | 'rendering';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class SharedRenders {
  /** Batches not yet started, by format: a scrape joins one of these, never a render in progress. */
  private readonly waiting = new Map<ExpositionFormat, Batch>();
  private state: SlotState = 'idle';
  /** When the next render may start (monotonic ms). */
  private nextSlotAt = Number.NEGATIVE_INFINITY;
  private readonly minIntervalMs: number;
  private readonly now: () => number;
  private readonly wait: (ms: number) => Promise<void>;
  /** Renders actually made, for tests and benchmarks. */
  renders = 0;
  private readonly scratch = new ScratchBuffers();

  constructor(private readonly options: SharedRendersOptions) {
    this.minIntervalMs = options.pacing?.minIntervalMs ?? DEFAULT_MIN_RENDER_INTERVAL_MS;
    this.now = options.pacing?.now ?? (() => performance.now());
    this.wait = options.pacing?.wait ?? sleep;
  }

  /** The body of a scrape in `format`, gzipped when asked, from the next render to start. */
  body(format: ExpositionFormat, gzipped: boolean): Promise<RenderedBody> {
    let batch = this.waiting.get(format);
    if (batch === undefined) {
      batch = { format, plain: pending(), plainWanted: false, compressed: undefined };
      this.waiting.set(format, batch);
    }
    if (!gzipped) batch.plainWanted = true;
    const answer = gzipped ? (batch.compressed ??= pending()) : batch.plain;
    this.schedule();
    if (this.state === 'waiting' || this.state === 'rendering') this.options.paced?.();
    return answer.promise;
  }

  /**
   * Starts the next render at its slot. With the slot open it starts at the end of this turn: a
   * render of a small registry finishes within one turn of the event loop, before the next request
   * is read, and waiting for the turn to end lets every scrape already read join it.
   */
  private schedule(): void {
    if (this.state !== 'idle' || this.waiting.size === 0) return;
    const delay = this.nextSlotAt - this.now();
    if (delay > 0) {
      this.state = 'waiting';
      void this.wait(delay).then(() => this.renderSlot());
    } else {
      this.state = 'soon';
      setImmediate(() => void this.renderSlot());
    }
  }

  /** Renders every format that has scrapes waiting, then sets the next slot and schedules it if scrapes arrived meanwhile. */
  private async renderSlot(): Promise<void> {
    this.state = 'rendering';
    const batches = [...this.waiting.values()];
    this.waiting.clear();
    const started = this.now();
    const outcomes: (() => void)[] = [];
    try {
      const collected = this.options.collect();
      for (const batch of batches) outcomes.push(await this.renderBatch(batch, collected));
    } catch (error) {
      // Not expected (render and collect failures are caught below); the scrapes must not wait forever.
      this.options.renderFailed(error);
      outcomes.push(...batches.map((batch) => () => this.fail(batch, new RenderFailure('render'))));
    }
    // Measured before any scrape gets its answer: the slot's own work, not what its scrapes do next.
    const ended = this.now();
    this.nextSlotAt = Math.max(started + this.minIntervalMs, ended + (ended - started));
    this.state = 'idle';
    for (const settle of outcomes) settle();
    this.schedule();
  }

  /** Renders one batch; returns what hands the outcome to its scrapes. */
  private async renderBatch(batch: Batch, collected: boolean): Promise<() => void> {
    if (!collected) return () => this.fail(batch, new RenderFailure('collect'));
    this.renders += 1;
    this.options.rendered?.();
    let parts: readonly (string | Uint8Array)[];
    try {
      parts = await this.options.exposition.render(batch.format);
    } catch (error) {
      this.options.renderFailed(error);
      return () => this.fail(batch, new RenderFailure('render'));
    }
    // Gzipped scrapes alone (what Prometheus sends) need no plain copy: the parts are compressed
    // through a reused scratch Buffer, so a render leaves only its compressed bytes behind.
    const body = batch.plainWanted ? toChunks(parts) : undefined;
    return () => {
      if (body !== undefined) batch.plain.resolve(body);
      if (batch.compressed !== undefined) void this.compress(body?.chunks ?? parts, batch.compressed);
    };
  }

  private fail(batch: Batch, failure: RenderFailure): void {
    batch.plain.reject(failure);
    batch.compressed?.reject(failure);
  }

  /** Compressed in libuv's thread pool, off the event loop, at the fastest level (see GZIP_LEVEL). */
  private async compress(source: readonly (string | Uint8Array)[], into: Pending<RenderedBody>): Promise<void> {
    const scratch = this.scratch.take();
    try {
      into.resolve(await gzipParts(source, scratch));
    } catch (error) {
      this.options.renderFailed(error);
      into.reject(new RenderFailure('render'));
    } finally {
      this.scratch.give(scratch);
    }
  }
}

/** Bytes of answers sent but not yet read that the web listener holds, by default. */
export const DEFAULT_MAX_HELD_BYTES = 32 * 1024 * 1024;

/**
 * The bytes of answers handed to sockets whose peers have not read them yet, bounded.
 *
 * Shared renders make scrapers that arrive together cost one exposition, but scrapers that
 * arrive one after another and never read each hold a render of their own until the write
 * timeout. Past the bound, the answers holding the oldest render are dropped: their peers have
 * not read what was rendered before everyone else's, so they are the ones stalling. One render is
 * always allowed, however large.
 */
export class HeldBodies {
  /** Body → the responses still sending it; insertion order is render order. */
  private readonly holders = new Map<RenderedBody, Set<ServerResponse>>();
  private held = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly dropped: (count: number) => void,
  ) {}

  get heldBytes(): number {
    return this.held;
  }

  /** Records that `response` is about to send `body`, dropping the oldest unread answers first if needed. */
  hold(body: RenderedBody, response: ServerResponse): void {
    let holders = this.holders.get(body);
    if (holders === undefined) {
      this.makeRoom(body.bytes);
      holders = new Set();
      this.holders.set(body, holders);
      this.held += body.bytes;
    }
    holders.add(response);
    const release = () => {
      response.off('finish', release);
      response.off('close', release);
      this.release(body, response);
    };
    response.on('finish', release);
    response.on('close', release);
  }

  private release(body: RenderedBody, response: ServerResponse): void {
    const holders = this.holders.get(body);
    if (holders === undefined || !holders.delete(response) || holders.size > 0) return;
    this.holders.delete(body);
    this.held -= body.bytes;
  }

  private makeRoom(bytes: number): void {
    for (const [body, holders] of this.holders) {
      if (this.held + bytes <= this.maxBytes) return;
      const stalled = [...holders];
      this.holders.delete(body);
      this.held -= body.bytes;
      for (const response of stalled) response.destroy();
      this.dropped(stalled.length);
    }
  }
}
