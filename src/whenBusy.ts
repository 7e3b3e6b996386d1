/**
 * Tells once the process has work: over one window, either the CPU time of all its threads
 * (process.cpuUsage: the event loop, V8's garbage-collection helpers, libuv's thread pool) reaches
 * a share of one core, or the event loop was busy nearly all the time. CPU time is the main test
 * because on a crowded machine a loop waits for a core while it counts as busy, and an idle
 * sidecar must not read as working because its neighbours are; the loop's busy time covers the
 * machine so crowded that a sidecar working flat out gets less than that share of a core.
 */

/** How often the CPU time is read, and the span it is judged over. */
export const BUSY_WINDOW_MS = 1000;

/**
 * The share of one core that counts as work. Scraped back to back at the render pacing limit (ten
 * renders a second), an idle sidecar uses about a tenth of a core; ingest at full speed uses a
 * whole one.
 */
export const BUSY_CORE_SHARE = 0.25;

/** The share of the window the event loop must have been busy to count as work whatever the CPU time. */
export const BUSY_LOOP_SHARE = 0.9;

export interface BusyWatchOptions {
  readonly windowMs?: number;
  readonly coreShare?: number;
  readonly loopShare?: number;
  /** CPU time of the process so far, in microseconds (user + system). */
  readonly cpuMicros?: () => number;
  /** Milliseconds the event loop has been busy so far (performance.eventLoopUtilization().active). */
  readonly loopActiveMs?: () => number;
  /** Monotonic milliseconds. */
  readonly nowMs?: () => number;
  /** Calls `tick` every `ms` without keeping the process alive; returns what stops it. */
  readonly every?: (ms: number, tick: () => void) => () => void;
}

const processCpuMicros = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const loopActiveMs = (): number => performance.eventLoopUtilization().active;

const unrefInterval = (ms: number, tick: () => void): (() => void) => {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
};

/**
 * Calls `onBusy` once, at the first window in which the process used at least `coreShare` of a
 * core or its event loop was busy at least `loopShare` of the time, then stops watching. Returns
 * what stops watching before that.
 */
export function whenBusy(onBusy: () => void, options: BusyWatchOptions = {}): () => void {
  const cpuMicros = options.cpuMicros ?? processCpuMicros;
  const activeMs = options.loopActiveMs ?? loopActiveMs;
  const nowMs = options.nowMs ?? (() => performance.now());
  const coreShare = options.coreShare ?? BUSY_CORE_SHARE;
  const loopShare = options.loopShare ?? BUSY_LOOP_SHARE;
  let last = { cpu: cpuMicros(), active: activeMs(), at: nowMs() };
  const stop = (options.every ?? unrefInterval)(options.windowMs ?? BUSY_WINDOW_MS, () => {
    const now = { cpu: cpuMicros(), active: activeMs(), at: nowMs() };
    // Over the time that really passed: a timer fires late when the loop is busy.
    const elapsedMs = Math.max(1, now.at - last.at);
    const cpuShare = (now.cpu - last.cpu) / 1000 / elapsedMs;
    const busyShare = (now.active - last.active) / elapsedMs;
    last = now;
    if (cpuShare < coreShare && busyShare < loopShare) return;
    stop();
    onBusy();
  });
  return stop;
}
