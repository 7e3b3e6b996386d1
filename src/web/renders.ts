/**
 * Paced, shared renders of /metrics. A scrape waits for the next render of its format and shares
 * it: every scrape that arrives before a render starts gets that render's bytes, and every
 * gzipped scrape among them the same compressed bytes. The bytes are Buffers shared by every response that sends
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
import { performance } from 'node:perf_hooks';
import type { Exposition } from '../exposition/exposition.js';
import type { ExpositionFormat } from '../exposition/exposition.js';
import { gzipParts, ScratchBuffers } from './gzip.js';
import { toChunks, type RenderedBody } from './parts.js';

/** Least time between the starts of two renders, by default (`--web.min-render-interval`). */
export const DEFAULT_MIN_RENDER_INTERVAL_MS = 100;

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

  /** Compressed at the fastest level (GZIP_LEVEL), in libuv's thread pool or, for a small exposition, on the loop (gzip.ts). */
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

