/**
 * One recorder on its own: a real registry, a recorder context with a clock the test moves, the
 * span tables it registers, and the samples it has written (parsed from the text exposition).
 */
import { createMetricsRegistry, type Metrics } from '../../src/catalogue.js';
import type { RecorderContext } from '../../src/correlate/recorders/context.js';
import { SPAN_FAMILIES } from '../../src/correlate/recorders/spanTables.js';
import type { Sweepable } from '../../src/correlate/spans.js';
import { PriceTable, type PriceEntry } from '../../src/correlate/recorders/pricing.js';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import type { LabelRules } from '../../src/metrics/labels.js';
import { familiesFor } from '../../src/metrics/registry.js';
import { parseSamples, type Samples } from './exposition.js';

export const START = 1_700_000_000;

export interface RecorderHarness {
  readonly metrics: Metrics;
  readonly context: RecorderContext;
  /** State tables that evicted an entry, in order. */
  readonly evictions: string[];
  /** Bounded fields counted as out of bounds, in order. */
  readonly rejected: string[];
  /** Moves the clock on by `seconds`. */
  advance(seconds: number): void;
  /** Runs every registered table's sweep to its end. */
  sweep(): void;
  /** Runs the registry's series expiry sweep, as of the clock now, to its end. */
  expire(): void;
  /** Every sample of the registry. */
  samples(): Promise<Samples>;
}

export interface HarnessOptions {
  readonly spanTtlSeconds?: number;
  readonly maxSpans?: number;
  readonly sessionTtlSeconds?: number;
  readonly prices?: readonly PriceEntry[];
  /** --metrics.series-ttl (0, the default here: series never expire). */
  readonly seriesTtlSeconds?: number;
  readonly labelRules?: LabelRules;
}

export function recorderHarness(options: HarnessOptions = {}): RecorderHarness {
  const registry = createMetricsRegistry({
    buckets: DEFAULT_BUCKETS,
    maxAgentSeries: 10_000,
    defaultMetrics: false,
    seriesTtlSeconds: options.seriesTtlSeconds ?? 0,
    labels: options.labelRules,
  });
  const { labels } = registry;
  const exposition = createExposition(registry);
  let now = START;
  const evictions: string[] = [];
  const rejected: string[] = [];
  const tables: Sweepable[] = [];
  const context: RecorderContext = {
    labels,
    clock: () => now,
    spans: { ttlSeconds: options.spanTtlSeconds ?? 60, maxEntries: options.maxSpans ?? 1000, maxBytes: 1 << 20 },
    sessionTtlSeconds: options.sessionTtlSeconds ?? 3600,
    sessionMaxBytes: 1 << 20,
    prices: new PriceTable(options.prices),
    track: (table) => tables.push(table),
    spanMetrics: familiesFor(registry.metrics, SPAN_FAMILIES),
    evicted: (table) => evictions.push(table),
    valueRejected: (field) => rejected.push(field),
  };
  return {
    metrics: registry.metrics,
    context,
    evictions,
    rejected,
    advance: (seconds) => {
      now += seconds;
    },
    sweep: () => {
      for (const table of tables) {
        const step = table.sweepSteps();
        while (step()) {
          // Each step sweeps a slice; the last returns false.
        }
      }
    },
    expire: () => {
      const step = registry.expirySteps(now);
      while (step()) {
        // Each step expires a bounded slice; the last returns false.
      }
    },
    samples: async () => parseSamples(await renderText(exposition)),
  };
}
