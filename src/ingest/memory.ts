/**
 * The memory guard: while memory is over a limit because of work in flight, ingest refuses new
 * work with 503 + Retry-After before reading a body, and /-/ready answers 503.
 *
 * Refusing only helps when refusing can free memory. What the guard measures is of two kinds:
 * memory in flight (request bodies being read or held until answered: the in-flight budget),
 * which refusing frees, and memory held by what is stored (series, state tables), which it does
 * not: stored series leave only through expiry. Over a limit that the memory in flight does not
 * explain (the limit would still be exceeded with every byte in flight gone), the guard refuses
 * nothing; it says why on /-/ready (still ready) and in hermes_sidecar_memory_over_limit_total
 * {cause="held"}, and asks the series store to expire its longest-idle series early (the
 * injected SeriesShedder) until memory is under the limit again.
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
import { counter, gauge, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';
import type { SeriesShedder } from '../metrics/earlyExpiry.js';

/** Why memory is over a limit: work in flight (refused until it drains) or what is stored (not refused). */
export const PRESSURE_CAUSES = ['inflight', 'held'] as const;
export type PressureCause = (typeof PRESSURE_CAUSES)[number];

/** The families this module writes (and all it is handed). */
export const MEMORY_FAMILIES = {
  memoryPressure: fed(gauge('hermes_sidecar_memory_pressure', {}, 'self',
    '1 while the memory guard refuses ingest (503) and /-/ready answers 503, else 0.'),
    'sidecar', 'memory guard'),
  memoryOverLimit: fed(counter('hermes_sidecar_memory_over_limit_total', { cause: PRESSURE_CAUSES }, 'self',
    'Times memory went over a --memory.* limit, by cause: inflight (request bodies in flight explain it: ingest answers 503 until they drain) or held (stored series and state hold it, which refusing cannot free: ingest is still accepted, /-/ready says so, and the longest-idle series are expired early).'),
    'sidecar', 'memory guard'),
  memorySeriesShed: fed(counter('hermes_sidecar_memory_series_shed_total', {}, 'self',
    'Series the memory guard had expired before their --metrics.series-ttl because stored series held memory over a --memory.* limit (idle ones first, never one written within the last 5 minutes).'),
    'sidecar', 'memory guard (early expiry of the longest-idle series)'),
  memoryLiveBytes: fed(gauge('hermes_sidecar_memory_live_bytes', {}, 'self',
    'Live memory the guard measures: V8 heap in use plus memory held by Buffers and ArrayBuffers.'),
    'sidecar', 'memory guard'),
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
  /**
   * Bytes refusing ingest frees: request bodies being read or held until answered (the in-flight
   * budget's). Absent, all of live memory counts as freeable.
   */
  readonly inFlightBytes?: () => number;
  /** Live stored series, named on /-/ready when they hold memory over a limit. */
  readonly storedSeries?: () => number;
  /** Expires stored series early while they hold memory over a limit. */
  readonly shedder?: SeriesShedder;
  /** The pressure and live-memory gauges, set at scrape time, and the counters by cause. */
  readonly metrics?: Families<typeof MEMORY_FAMILIES>;
}

/** What /-/ready says of memory. */
export interface MemoryReadiness {
  readonly ready: boolean;
  readonly reason: string;
}

/** Pressure ends once usage is below this fraction of the limit that started it. */
export const RECOVER_FRACTION = 0.9;
const GC_INTERVAL_SECONDS = 2;
/** Seconds between two early expiries: each is a whole pass over the series, and its memory returns only after a GC. */
const SHED_INTERVAL_SECONDS = 10;
const MiB = 2 ** 20;
const DEFAULT_SAMPLE_INTERVAL_SECONDS = 0.25;

export const liveBytes = (usage: MemoryUsage): number => usage.heapUsedBytes + usage.externalBytes;

/** `usage` with `bytes` fewer live (Buffers first) and resident bytes: what would be left with them freed. */
function without(usage: MemoryUsage, bytes: number): MemoryUsage {
  const external = Math.min(usage.externalBytes, bytes);
  return {
    rssBytes: Math.max(0, usage.rssBytes - bytes),
    externalBytes: usage.externalBytes - external,
    heapUsedBytes: Math.max(0, usage.heapUsedBytes - (bytes - external)),
  };
}

export class MemoryGuard {
  private sampledAt = Number.NEGATIVE_INFINITY;
  private collectedAt = Number.NEGATIVE_INFINITY;
  private pressure = false;
  private cause: PressureCause | undefined;
  private shedAt = Number.NEGATIVE_INFINITY;
  private shedTotal = 0;
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
    this.options.metrics?.memoryPressure.set({}, this.refusesIngest() ? 1 : 0);
    this.options.metrics?.memoryLiveBytes.set({}, liveBytes(this.last));
  }

  /** True while ingest must be refused: over a limit that the memory in flight explains. */
  refusesIngest(): boolean {
    return this.overLimit() && this.cause === 'inflight';
  }

  /** Readiness as far as memory goes: not ready only while ingest is refused; the reason either way. */
  readiness(): MemoryReadiness | undefined {
    if (!this.overLimit()) return undefined;
    if (this.cause === 'inflight') return { ready: false, reason: 'Over the memory limit: ingest refused until the request bodies in flight drain' };
    const series = this.options.storedSeries?.() ?? 0;
    return {
      ready: true,
      reason:
        `Ready; memory over the limit (${Math.round(liveBytes(this.last) / MiB)} MiB live), held by ${series} stored series: ` +
        `refusing ingest cannot free it, so ingest is accepted and ${this.shedTotal} idle series were expired early`,
    };
  }

  /** True while memory is over a limit, whatever the cause (re-sampled when the last sample is old enough). */
  overLimit(): boolean {
    if (!this.enabled) return false;
    const now = this.options.clock();
    if (now - this.sampledAt < (this.options.sampleIntervalSeconds ?? DEFAULT_SAMPLE_INTERVAL_SECONDS)) return this.pressure;
    this.sampledAt = now;
    // Held memory shrinks only by early expiry, so a GC is worth its cost only once per shed.
    if (this.pressure) this.collectGarbage(now, this.cause === 'held' ? SHED_INTERVAL_SECONDS : GC_INTERVAL_SECONDS);
    this.last = this.options.probe();
    let over = this.exceeded(this.last, this.pressure ? RECOVER_FRACTION : 1);
    // The heap in use counts garbage until V8's next full GC, and under heavy ingest on a large
    // heap V8 lets hundreds of megabytes of it pile up before that: a sample over the limit is
    // checked after a GC (unless one ran within GC_INTERVAL_SECONDS) before anything is refused.
    if (over && !this.pressure && this.collectGarbage(now)) {
      this.last = this.options.probe();
      over = this.exceeded(this.last);
    }
    this.settle(over, now);
    return this.pressure;
  }

  /** Names the cause of pressure (counted when it starts or changes) and sheds what stored series hold. */
  private settle(over: boolean, now: number): void {
    const cause = over ? this.causeOf(this.last) : undefined;
    if (cause !== undefined && cause !== this.cause) this.options.metrics?.memoryOverLimit.inc({ cause });
    this.pressure = over;
    this.cause = cause;
    if (cause === 'held') this.shed(now);
  }

  /** In flight when freeing every byte in flight would end the pressure; held otherwise. */
  private causeOf(usage: MemoryUsage): PressureCause {
    const inFlight = this.options.inFlightBytes?.() ?? Number.POSITIVE_INFINITY;
    return this.exceeded(without(usage, inFlight), RECOVER_FRACTION) ? 'held' : 'inflight';
  }

  /** Asks the series store for the bytes over the recovery line, at most every SHED_INTERVAL_SECONDS. */
  private shed(now: number): void {
    const { shedder } = this.options;
    if (shedder === undefined || now - this.shedAt < SHED_INTERVAL_SECONDS) return;
    this.shedAt = now;
    const excess = this.excess(without(this.last, this.options.inFlightBytes?.() ?? 0));
    if (excess <= 0) return;
    const expired = shedder.expireOldest(excess);
    this.shedTotal += expired;
    if (expired > 0) this.options.metrics?.memorySeriesShed.inc({}, expired);
  }

  /** Live bytes above the recovery line of the limits exceeded (RSS counts through its live half, as in exceeded()). */
  private excess(usage: MemoryUsage): number {
    const { liveLimitBytes, rssLimitBytes, heapLimitBytes } = this.options;
    const above = (value: number, limit: number) => (limit > 0 ? value - limit * RECOVER_FRACTION : 0);
    return Math.max(
      above(liveBytes(usage), liveLimitBytes),
      above(usage.heapUsedBytes, heapLimitBytes),
      usage.rssBytes > rssLimitBytes * RECOVER_FRACTION ? above(liveBytes(usage), rssLimitBytes / 2) : 0,
    );
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

  /** Runs a full GC unless one ran within `interval` seconds (or the runtime offers none); whether it ran. */
  private collectGarbage(now: number, interval = GC_INTERVAL_SECONDS): boolean {
    if (this.options.collectGarbage === undefined || now - this.collectedAt < interval) return false;
    this.collectedAt = now;
    this.options.collectGarbage();
    return true;
  }
}
