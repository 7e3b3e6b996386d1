/**
 * The memory guard: above a soft limit (resident set or used heap), ingest refuses new work with
 * 503 + Retry-After until usage falls below it again. Sampling is throttled, so a request pays
 * for a probe at most every `sampleIntervalSeconds`.
 */
import type { Clock } from '../clock.js';

interface MemoryUsage {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
}

export type MemoryProbe = () => MemoryUsage;

export const processMemory: MemoryProbe = () => ({
  rssBytes: process.memoryUsage.rss(),
  heapUsedBytes: process.memoryUsage().heapUsed,
});

export interface MemoryGuardOptions {
  readonly probe: MemoryProbe;
  readonly clock: Clock;
  /** 0 disables a limit. */
  readonly rssLimitBytes: number;
  readonly heapLimitBytes: number;
  readonly sampleIntervalSeconds?: number;
}

export class MemoryGuard {
  private sampledAt = Number.NEGATIVE_INFINITY;
  private over = false;

  constructor(private readonly options: MemoryGuardOptions) {}

  get enabled(): boolean {
    return this.options.rssLimitBytes > 0 || this.options.heapLimitBytes > 0;
  }

  /** True while usage is above a limit (re-sampled when the last sample is old enough). */
  overLimit(): boolean {
    if (!this.enabled) return false;
    const now = this.options.clock();
    if (now - this.sampledAt >= (this.options.sampleIntervalSeconds ?? 0.25)) {
      this.sampledAt = now;
      const usage = this.options.probe();
      const { rssLimitBytes, heapLimitBytes } = this.options;
      this.over =
        (rssLimitBytes > 0 && usage.rssBytes > rssLimitBytes) || (heapLimitBytes > 0 && usage.heapUsedBytes > heapLimitBytes);
    }
    return this.over;
  }
}
