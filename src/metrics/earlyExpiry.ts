/**
 * Early expiry for the memory guard (its SeriesShedder): when stored series hold memory over a
 * --memory.* limit, refusing ingest frees nothing, but the series idle the longest can leave
 * before their TTL. This runs the series tables' own TTL sweep with shorter idle times, halving
 * from half the TTL down to MIN_IDLE_SECONDS, until about the bytes asked for have left: the
 * longest-idle series go first, and a series goes exactly as it would at its TTL (its slot and
 * label values given back, hermes_sidecar_series_expired_total counted).
 *
 * Bytes become series through a fixed estimate of what one series holds at worst; the store
 * does not count bytes per series.
 */
import type { Clock } from '../clock.js';
import { CounterStorage, GaugeStorage, HistogramStorage, type Family } from './families.js';
import { expires } from './registry.js';

/**
 * A series idle this long has been scraped at its last value by any scraper sampling at least
 * every 5 minutes (Prometheus' lookback): expiring it loses no sample.
 */
export const MIN_IDLE_SECONDS = 300;

/**
 * What one agent series holds at worst, measured (bench section `worstcase`: RSS with every cap
 * filled by 128-character label values and 160-bucket native histograms and every format
 * scraped, over idle, per series: (279 to 337 - 59) MiB / 10,013 series = 23 to 28 KiB).
 */
export const WORST_CASE_SERIES_BYTES = 28 * 1024;

/** What the series store can give back: expires its longest-idle series worth about `bytes`; how many it expired. */
export interface SeriesShedder {
  expireOldest(bytes: number): number;
}

export interface EarlyExpiryOptions {
  /** The registry's families (its `metrics`): the expiring ones are found among them. */
  readonly families: Readonly<Record<string, unknown>>;
  readonly clock: Clock;
  /** --metrics.series-ttl; 0 keeps every series, early expiry included. */
  readonly ttlSeconds: number;
  readonly seriesBytes?: number;
}

const isFamily = (value: unknown): value is Family =>
  value instanceof CounterStorage || value instanceof GaugeStorage || value instanceof HistogramStorage;

/** The idle times tried, longest first: half the TTL, halved, then MIN_IDLE_SECONDS. */
function idleTimes(ttlSeconds: number): number[] {
  const times: number[] = [];
  for (let idle = ttlSeconds / 2; idle > MIN_IDLE_SECONDS; idle /= 2) times.push(idle);
  return ttlSeconds > MIN_IDLE_SECONDS ? [...times, MIN_IDLE_SECONDS] : [];
}

export function earlyExpiry(options: EarlyExpiryOptions): SeriesShedder {
  const families = Object.values(options.families).filter(isFamily).filter((family) => family.enabled && expires(family.spec));
  const seriesBytes = options.seriesBytes ?? WORST_CASE_SERIES_BYTES;
  const live = () => families.reduce((total, family) => total + family.size, 0);
  return {
    expireOldest(bytes: number): number {
      const wanted = Math.ceil(bytes / seriesBytes);
      const before = live();
      const now = options.clock();
      for (const idle of idleTimes(options.ttlSeconds)) {
        if (before - live() >= wanted) break;
        for (const family of families) {
          const step = family.expirySteps(now, idle);
          while (step());
        }
      }
      return before - live();
    },
  };
}
