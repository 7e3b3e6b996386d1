/**
 * Work done in slices: at most `sliceMs` of it per turn of the event loop, then `pause()` hands
 * the loop back (to scrapes, probes and other requests) before the next slice.
 */
import { performance } from 'node:perf_hooks';
import { nextTurn } from './queue.js';

export interface Slicer {
  readonly sliceMs: number;
  readonly now: () => number;
  readonly pause: () => Promise<void>;
}

/** Events applied between two looks at the clock. */
const EVENTS_PER_CHECK = 32;

export const DEFAULT_SLICE_MS = 5;

export const eventLoopSlicer = (sliceMs = DEFAULT_SLICE_MS): Slicer => ({
  sliceMs,
  now: () => performance.now(),
  pause: nextTurn,
});

/** Applies `items` in order through `apply(from, to)`, one slice at a time. */
export async function applyInSlices(count: number, apply: (from: number, to: number) => void, slicer: Slicer): Promise<void> {
  let from = 0;
  while (from < count) {
    const sliceStart = slicer.now();
    do {
      const to = Math.min(count, from + EVENTS_PER_CHECK);
      apply(from, to);
      from = to;
    } while (from < count && slicer.now() - sliceStart < slicer.sliceMs);
    if (from < count) await slicer.pause();
  }
}
