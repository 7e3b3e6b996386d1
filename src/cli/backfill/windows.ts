/**
 * The history built and written one block window at a time: every stream is read up to the end
 * of the window plus one step (a step ending early in the next window puts its leading 0 in this
 * one), the window's samples are written and forgotten, and memory is checked as rows arrive and
 * after each window. What stays between windows is one running total per series.
 */
import type { Cursor } from './cursor.js';
import type { MemoryBudget } from './memory.js';
import { BLOCK_WINDOW_MS, type OpenMetricsOutput, windowOf } from './openmetrics.js';
import type { CounterSet } from './series.js';

/** Rows between memory checks and progress redraws. */
export const CHECK_EVERY_ROWS = 16_384;

export interface WindowPlan {
  readonly first: number;
  readonly last: number;
  readonly total: number;
}

export const windowDate = (window: number): string => new Date(window * BLOCK_WINDOW_MS).toISOString().slice(0, 10);

/** Counts rows, checks memory every so many and after each window, and reports progress. */
export class RunTracker {
  rows = 0;
  done = 0;
  plan: WindowPlan | undefined;

  constructor(
    private readonly budget: MemoryBudget,
    private readonly progress: (tracker: RunTracker) => void,
    private readonly checkEveryRows = CHECK_EVERY_ROWS,
  ) {}

  readonly onRow = (): void => {
    this.rows += 1;
    if (this.rows % this.checkEveryRows !== 0) return;
    this.budget.check(this.where);
    this.progress(this);
  };

  /** After a window is written; `skipped` empty windows after it are done as well. */
  windowDone(skipped = 0): void {
    this.budget.check(this.where);
    this.done += 1 + skipped;
    this.progress(this);
  }

  private readonly where = (): string => {
    if (this.plan === undefined) return 'the first window';
    return `window ${this.done + 1} of ${this.plan.total} (from ${windowDate(this.plan.first + this.done)})`;
  };
}

/**
 * Reads (and so counts as left out) the rows before the range, then plans the windows from the
 * earliest row left to `untilMs`; with no rows in range, one window, the one holding `untilMs`.
 */
export function planWindows(cursors: readonly Cursor[], fromMs: number | undefined, untilMs: number, tracker: RunTracker): WindowPlan {
  for (const cursor of cursors) cursor.readBefore(Math.max(1, fromMs ?? 1), tracker.onRow);
  const heads = cursors.map((cursor) => cursor.nextMs()).filter((ms): ms is number => ms !== undefined);
  const last = windowOf(untilMs);
  const first = windowOf(heads.reduce((earliest, ms) => Math.min(earliest, ms), untilMs));
  tracker.plan = { first, last, total: last - first + 1 };
  return tracker.plan;
}

export function writeWindows(cursors: readonly Cursor[], plan: WindowPlan, stepMs: number, counters: CounterSet, output: OpenMetricsOutput, tracker: RunTracker): void {
  for (let window = plan.first; window <= plan.last; ) {
    const final = window === plan.last;
    const limit = final ? Number.POSITIVE_INFINITY : (window + 1) * BLOCK_WINDOW_MS + stepMs;
    for (const cursor of cursors) cursor.readBefore(limit, tracker.onRow);
    output.writeWindow(window, counters, final);
    const next = final ? window + 1 : nextBusyWindow(cursors, counters, window, plan.last);
    tracker.windowDone(next - window - 1);
    window = next;
  }
}

/**
 * The next window with anything to write: the one of the next row or the next pending sample,
 * or the last (its samples at --until); so a long quiet stretch (an --until years after the
 * history) costs nothing per window.
 */
function nextBusyWindow(cursors: readonly Cursor[], counters: CounterSet, window: number, last: number): number {
  let earliest = counters.earliestPendingSample() ?? Number.POSITIVE_INFINITY;
  for (const cursor of cursors) earliest = Math.min(earliest, cursor.nextMs() ?? Number.POSITIVE_INFINITY);
  return earliest === Number.POSITIVE_INFINITY ? last : Math.min(last, Math.max(window + 1, windowOf(earliest)));
}
