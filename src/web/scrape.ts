/**
 * Single-flight scrapes: every scrape that arrives while a render of its format is in progress
 * gets that render's bytes, and every gzipped scrape in that time the same compressed bytes. The
 * bytes are Buffers shared by every response that sends them (a socket holds a reference, never
 * a copy), so a hundred scrapers that arrive together, or never read, cost one render and one
 * exposition's memory rather than a hundred.
 *
 * A render collects the scrape-time gauges first; when a collector or the render fails, every
 * scrape that shared it fails (500), and the failure is counted once.
 */
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Exposition } from '../exposition/exposition.js';
import type { Format } from '../exposition/serializer.js';
import { GZIP_LEVEL } from '../exposition/write.js';

const gzip = promisify(gzipCallback);

/** Parts are turned into Buffers in runs of about this many characters: few conversions, no one giant string. */
const CHUNK_CHARACTERS = 1024 * 1024;

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

export interface SharedRendersOptions {
  readonly exposition: Exposition;
  /** Refreshes the scrape-time gauges; false when any collector failed (it reports its own failures). */
  readonly collect: () => boolean;
  /** Called once per failed render or compression, however many scrapes shared it. */
  readonly renderFailed: (error: unknown) => void;
}

function toChunks(parts: readonly string[]): RenderedBody {
  const chunks: Buffer[] = [];
  let run: string[] = [];
  let length = 0;
  const flush = () => {
    if (run.length === 0) return;
    chunks.push(Buffer.from(run.join(''), 'utf8'));
    run = [];
    length = 0;
  };
  for (const part of parts) {
    run.push(part);
    length += part.length;
    if (length >= CHUNK_CHARACTERS) flush();
  }
  flush();
  return { chunks, bytes: chunks.reduce((total, chunk) => total + chunk.length, 0) };
}

export class SharedRenders {
  private readonly plain = new Map<Format, Promise<RenderedBody>>();
  private readonly compressed = new Map<Format, Promise<RenderedBody>>();
  /** Renders actually made (not joined), for tests and benchmarks. */
  renders = 0;

  constructor(private readonly options: SharedRendersOptions) {}

  /** The body of a scrape in `format`, gzipped when asked: a render in progress is joined, else one starts. */
  body(format: Format, gzipped: boolean): Promise<RenderedBody> {
    return gzipped ? this.joined(this.compressed, format, () => this.compress(format)) : this.joined(this.plain, format, () => this.render(format));
  }

  private joined(inProgress: Map<Format, Promise<RenderedBody>>, format: Format, start: () => Promise<RenderedBody>): Promise<RenderedBody> {
    const running = inProgress.get(format);
    if (running !== undefined) return running;
    const next = start().finally(() => inProgress.delete(format));
    inProgress.set(format, next);
    return next;
  }

  private async render(format: Format): Promise<RenderedBody> {
    this.renders += 1;
    // A render of a small registry finishes within one turn of the event loop, before the next
    // request is read: waiting for the turn to end lets every scrape already read join this one.
    await new Promise((resolve) => setImmediate(resolve));
    if (!this.options.collect()) throw new RenderFailure('collect');
    let parts: string[];
    try {
      parts = await this.options.exposition.render(format);
    } catch (error) {
      this.options.renderFailed(error);
      throw new RenderFailure('render');
    }
    return toChunks(parts);
  }

  /** Compressed in libuv's thread pool, off the event loop, at the fastest level (see GZIP_LEVEL). */
  private async compress(format: Format): Promise<RenderedBody> {
    const plain = await this.joined(this.plain, format, () => this.render(format));
    let body: Buffer;
    try {
      body = await gzip(Buffer.concat(plain.chunks, plain.bytes), { level: GZIP_LEVEL });
    } catch (error) {
      this.options.renderFailed(error);
      throw new RenderFailure('render');
    }
    return { chunks: [body], bytes: body.length };
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
