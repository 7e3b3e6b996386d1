/**
 * Work done in slices: at most `sliceMs` of it per turn of the event loop, then `pause()` hands
 * the loop back (to scrapes, probes and other requests) before the next slice. Decoding a body,
 * applying a batch and sweeping the state tables all run through `runInSlices`.
 */
import { performance } from 'node:perf_hooks';

export interface Slicer {
  readonly sliceMs: number;
  /** Milliseconds, monotonic. */
  readonly now: () => number;
  readonly pause: () => Promise<void>;
}

export const DEFAULT_SLICE_MS = 5;

/** Resolves on a later turn of the event loop, after pending I/O (a scrape) has been served. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export const eventLoopSlicer = (sliceMs = DEFAULT_SLICE_MS): Slicer => ({
  sliceMs,
  now: () => performance.now(),
  pause: nextTurn,
});

/**
 * Calls `step` until it returns false (nothing left), looking at the clock after every step and
 * pausing once a slice has lasted `sliceMs`. A slice overruns by at most one step, so each step
 * must be a small, bounded piece of work.
 */
export async function runInSlices(step: () => boolean, slicer: Slicer): Promise<void> {
  for (;;) {
    const sliceStart = slicer.now();
    let more: boolean;
    do more = step();
    while (more && slicer.now() - sliceStart < slicer.sliceMs);
    if (!more) return;
    await slicer.pause();
  }
}

/** Most items applied between two looks at the clock, however cheap they are. */
const MAX_CHUNK = 256;
/** A chunk aims at this fraction of a slice, so a slice overruns by little more than that. */
const CHUNK_SHARE_OF_SLICE = 1 / 8;

/**
 * Applies items [0, count) in order through `apply(from, to)`, in slices bounded by time. The
 * clock is read after every chunk; a chunk starts at one item and doubles while it takes less
 * than a quarter of its share of the slice, halving when it takes more, so a run of slow items
 * (long ids, a full table evicting) is applied one at a time and cheap ones in chunks of up to
 * MAX_CHUNK.
 */
export function applyInSlices(count: number, apply: (from: number, to: number) => void, slicer: Slicer): Promise<void> {
  if (count === 0) return Promise.resolve();
  const share = slicer.sliceMs * CHUNK_SHARE_OF_SLICE;
  let from = 0;
  let chunk = 1;
  return runInSlices(() => {
    const started = slicer.now();
    const to = Math.min(count, from + chunk);
    apply(from, to);
    from = to;
    const took = slicer.now() - started;
    if (took > share) chunk = Math.max(1, chunk >> 1);
    else if (took < share / 4) chunk = Math.min(MAX_CHUNK, chunk * 2);
    return from < count;
  }, slicer);
}

/**
 * One stepper over several parts, in order: each part's steps are built when its turn comes (so
 * a part sweeps as of that moment) and run until they return false, then the next part's. The
 * result returns false once the last part is done; every step it takes is one step of a part.
 */
export function stepsInTurn(parts: readonly (() => () => boolean)[]): () => boolean {
  let index = 0;
  let step: (() => boolean) | undefined;
  return () => {
    const part = parts[index];
    if (part === undefined) return false;
    step ??= part();
    if (!step()) {
      index += 1;
      step = undefined;
    }
    return index < parts.length;
  };
}

/** `run`, shared by every caller while one run is under way: asked for meanwhile, it is that run. */
export function coalesced(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= run().finally(() => (running = undefined)));
}
