/**
 * The memory guard: while memory is under pressure, ingest refuses new work with 503 +
 * Retry-After before reading a body, and /-/ready answers 503.
 *
 * It measures what refusing work can give back: live memory, the V8 heap in use plus the
 * memory outside it held by JavaScript objects (Buffers, ArrayBuffers). Resident memory is a poor
 * signal on its own: once freed buffers are returned to the allocator, RSS often stays high for
 * minutes, so a guard on RSS alone keeps refusing long after the pressure is gone. An RSS limit
 * is still available; it counts only while live memory (measured after a GC once under pressure)
 * is a large part of it.
 *
 * Pressure ends below RECOVER_FRACTION of the limit (hysteresis), so the guard does not flap on
 * every request at the edge. Samples are throttled. A full GC is requested (when the runtime
 * offers one, at most every GC_INTERVAL_SECONDS) before a sample over the limit starts pressure,
 * so garbage is never a reason to refuse, and while under pressure, so garbage that nothing is
 * allocating to collect does not hold the guard shut.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Clock } from '../clock.js';
import type { Families } from '../metrics/registry.js';
import { gauge, type Declarations } from '../metrics/declare.js';

/** The families this module writes (and all it is handed). */
export const MEMORY_FAMILIES = {
  memoryPressure: gauge('hermes_sidecar_memory_pressure', {}, 'self',
    '1 while the memory guard refuses ingest (503) and /-/ready answers 503, else 0.'),
  memoryLiveBytes: gauge('hermes_sidecar_memory_live_bytes', {}, 'self',
    'Live memory the guard measures: V8 heap in use plus memory held by Buffers and ArrayBuffers.'),
} as const satisfies Declarations;

interface MemoryUsage {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** Memory held by JavaScript objects outside the V8 heap (Buffers, ArrayBuffers). */
  readonly externalBytes: number;
}

export type MemoryProbe = () => MemoryUsage;

export const processMemory: MemoryProbe = () => {
  const usage = process.memoryUsage();
  return { rssBytes: usage.rss, heapUsedBytes: usage.heapUsed, externalBytes: usage.external };
};

/**
 * The runtime's full GC, made reachable without a command-line flag: the guard must not depend
 * on how the process was started. Undefined when the runtime refuses.
 */
export function runtimeGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

export interface MemoryGuardOptions {
  readonly probe: MemoryProbe;
  readonly clock: Clock;
  /** Live memory (heap used + external) limit; 0 disables it. */
  readonly liveLimitBytes: number;
  /** Resident set limit; 0 disables it. */
  readonly rssLimitBytes: number;
  /** Used V8 heap limit; 0 disables it. */
  readonly heapLimitBytes: number;
  readonly sampleIntervalSeconds?: number;
  /** A full GC, requested while under pressure. */
  readonly collectGarbage?: (() => void) | undefined;
  /** The pressure and live-memory gauges, set at scrape time. */
  readonly metrics?: Families<typeof MEMORY_FAMILIES>;
}

/** Pressure ends once usage is below this fraction of the limit that started it. */
export const RECOVER_FRACTION = 0.9;
const GC_INTERVAL_SECONDS = 2;
const DEFAULT_SAMPLE_INTERVAL_SECONDS = 0.25;

export const liveBytes = (usage: MemoryUsage): number => usage.heapUsedBytes + usage.externalBytes;

export class MemoryGuard {
  private sampledAt = Number.NEGATIVE_INFINITY;
  private collectedAt = Number.NEGATIVE_INFINITY;
  private pressure = false;
  private last: MemoryUsage = { rssBytes: 0, heapUsedBytes: 0, externalBytes: 0 };

  constructor(private readonly options: MemoryGuardOptions) {}

  get enabled(): boolean {
    const { liveLimitBytes, rssLimitBytes, heapLimitBytes } = this.options;
    return liveLimitBytes > 0 || rssLimitBytes > 0 || heapLimitBytes > 0;
  }

  /** The last sample (refreshed by overLimit()). */
  get usage(): MemoryUsage {
    return this.last;
  }

  /** Pressure and live memory, read at scrape time (sampling if the last sample is old). */
  collect(): void {
    const pressure = this.overLimit();
    this.options.metrics?.memoryPressure.set({}, pressure ? 1 : 0);
    this.options.metrics?.memoryLiveBytes.set({}, liveBytes(this.last));
  }

  /** True while memory is under pressure (re-sampled when the last sample is old enough). */
  overLimit(): boolean {
    if (!this.enabled) return false;
    const now = this.options.clock();
    if (now - this.sampledAt < (this.options.sampleIntervalSeconds ?? DEFAULT_SAMPLE_INTERVAL_SECONDS)) return this.pressure;
    this.sampledAt = now;
    if (this.pressure) this.collectGarbage(now);
    this.last = this.options.probe();
    let over = this.exceeded(this.last, this.pressure ? RECOVER_FRACTION : 1);
    // The heap in use counts garbage until V8's next full GC, and under heavy ingest on a large
    // heap V8 lets hundreds of megabytes of it pile up before that: a sample over the limit is
    // checked after a GC (unless one ran within GC_INTERVAL_SECONDS) before anything is refused.
    if (over && !this.pressure && this.collectGarbage(now)) {
      this.last = this.options.probe();
      over = this.exceeded(this.last);
    }
    this.pressure = over;
    return this.pressure;
  }

  /**
   * Over a limit scaled by `factor` (1 to enter pressure, RECOVER_FRACTION to stay in it). RSS
   * counts only while live memory is at least half of its limit: resident memory the allocator
   * keeps after a GC is not something refusing work can give back.
   */
  private exceeded(usage: MemoryUsage, factor = 1): boolean {
    const { liveLimitBytes, rssLimitBytes, heapLimitBytes } = this.options;
    const over = (value: number, limit: number) => limit > 0 && value > limit * factor;
    return (
      over(liveBytes(usage), liveLimitBytes) ||
      over(usage.heapUsedBytes, heapLimitBytes) ||
      (over(usage.rssBytes, rssLimitBytes) && over(liveBytes(usage), rssLimitBytes / 2))
    );
  }

  /** Runs a full GC unless one ran within GC_INTERVAL_SECONDS (or the runtime offers none); whether it ran. */
  private collectGarbage(now: number): boolean {
    if (this.options.collectGarbage === undefined || now - this.collectedAt < GC_INTERVAL_SECONDS) return false;
    this.collectedAt = now;
    this.options.collectGarbage();
    return true;
  }
}
