/**
 * Early expiry for the memory guard (its SeriesShedder): when stored series hold memory over a
 * --memory.* limit, refusing ingest frees nothing, but the series idle the longest can leave
 * before their TTL. This runs the registry's own expiry sweep with shorter idle times, halving
 * from half the TTL down to MIN_IDLE_SECONDS, until the series budget has given back the bytes
 * asked for: the longest-idle series go first, and a series goes exactly as it would at its TTL
 * (its slot, bytes and label values given back, hermes_sidecar_series_expired_total counted).
 */
import type { Clock } from '../clock.js';

/**
 * A series idle this long has been scraped at its last value by any scraper sampling at least
 * every 5 minutes (Prometheus' lookback): expiring it loses no sample.
 */
export const MIN_IDLE_SECONDS = 300;

/** What the series store can give back: expires its longest-idle series worth about `bytes`; how many it expired. */
export interface SeriesShedder {
  expireOldest(bytes: number): number;
}

/** The registry's side of it: its expiry sweep at a given idle time, and what its series hold. */
export interface ExpiringStore {
  expirySteps(now: number, idleSeconds?: number): () => boolean;
  seriesBytes(): number;
  agentSeries(): number;
}

export interface EarlyExpiryOptions {
  readonly store: ExpiringStore;
  readonly clock: Clock;
  /** --metrics.series-ttl; 0 keeps every series, early expiry included. */
  readonly ttlSeconds: number;
}

/** The idle times tried, longest first: half the TTL, halved, then MIN_IDLE_SECONDS. */
function idleTimes(ttlSeconds: number): number[] {
  const times: number[] = [];
  for (let idle = ttlSeconds / 2; idle > MIN_IDLE_SECONDS; idle /= 2) times.push(idle);
  return ttlSeconds > MIN_IDLE_SECONDS ? [...times, MIN_IDLE_SECONDS] : [];
}

export function earlyExpiry({ store, clock, ttlSeconds }: EarlyExpiryOptions): SeriesShedder {
  return {
    expireOldest(bytes: number): number {
      const seriesBefore = store.agentSeries();
      const bytesBefore = store.seriesBytes();
      const now = clock();
      for (const idle of idleTimes(ttlSeconds)) {
        if (bytesBefore - store.seriesBytes() >= bytes) break;
        const step = store.expirySteps(now, idle);
        while (step());
      }
      return seriesBefore - store.agentSeries();
    },
  };
}
