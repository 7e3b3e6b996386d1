/** In-process sidecars for the benchmarks: built from a Config, fed without HTTP. */
import { pino } from 'pino';
import request from 'supertest';
import { createSidecar, type Sidecar } from '../src/app.js';
import type { Clock } from '../src/clock.js';
import { defaultConfig, loadConfig } from '../src/config.js';
import { decodeBody } from '../src/contract/decode.js';
import type { ObserverEvent } from '../src/contract/events.js';
import { ndjson, seriesLines } from './lib.js';

export interface BuildOptions {
  /** YAML config file (label caps); the defaults without one. */
  readonly configFile?: string;
  readonly defaultMetrics?: boolean;
  /** Listen addresses for children that serve real listeners. */
  readonly listen?: boolean;
  /** Epoch seconds (a fixed clock makes timestamp gauges comparable across pipelines). */
  readonly clock?: Clock;
  /** Classic histogram buckets only (--metrics.native-histograms=false). */
  readonly classicOnly?: boolean;
}

export interface BenchSidecar extends Sidecar {
  /** Events a recorder threw on (logged as `apply_failed`); the bench fails unless it stays 0. */
  applyErrors(): number;
}

export function buildSidecar(options: BuildOptions = {}): BenchSidecar {
  const argv = [
    ...(options.configFile === undefined ? [] : ['--config.file', options.configFile]),
    ...(options.listen === true ? ['--web.listen-address=127.0.0.1:0', '--ingest.listen-address=127.0.0.1:0'] : []),
    ...(options.classicOnly === true ? ['--metrics.native-histograms=false'] : []),
  ];
  const config = argv.length === 0 ? defaultConfig() : loadConfig({ argv, env: {} });
  let applyErrors = 0;
  // Only errors are logged; the one that matters here is counted, none is printed.
  const logger = pino(
    { level: 'error' },
    {
      write: (line: string) => {
        if (line.includes('"apply_failed"')) applyErrors += 1;
      },
    },
  );
  const sidecar = createSidecar(config, {
    logger,
    defaultMetrics: options.defaultMetrics ?? false,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  return { ...sidecar, applyErrors: () => applyErrors };
}

/** Decodes an NDJSON body exactly as the ingest route does and applies it; returns the event count. */
export function applyNdjson(sidecar: Sidecar, body: Buffer): number {
  const decoded = decodeBody(body, { format: 'ndjson', maxEvents: 100_000, arrivedAt: Date.now() / 1000 });
  sidecar.dispatcher.applyBatch(decoded.events);
  return decoded.events.length;
}

/**
 * Feeds distinct tools and models until the sidecar reports at least `target` live agent series
 * (hermes_sidecar_series). Returns the next unused index, so a later call can grow further.
 * `also` receives every decoded batch right after the sidecar applied it, to feed a second
 * pipeline the very same events.
 */
export function seedSeries(sidecar: Sidecar, target: number, tag: string, start = 0, also?: (events: readonly ObserverEvent[]) => void): number {
  let index = start;
  while (sidecar.registry.agentSeries() < target) {
    const before = sidecar.registry.agentSeries();
    const remaining = target - before;
    // About 6.5 series per index on average; small chunks near the end keep the overshoot small.
    const chunk = Math.max(1, Math.min(500, Math.floor(remaining / 7)));
    const lines = [];
    for (let end = index + chunk; index < end; index += 1) lines.push(...seriesLines(index, tag));
    const { events } = decodeBody(Buffer.from(ndjson(lines)), { format: 'ndjson', maxEvents: 100_000, arrivedAt: Date.now() / 1000 });
    sidecar.dispatcher.applyBatch(events);
    also?.(events);
    // A cap (series, bytes, label values) the bench's config left in place would fold every new series.
    if (sidecar.registry.agentSeries() === before) throw new Error(`seeding stopped at ${before} live series, short of ${target}: a cap of the config folds new ones`);
  }
  return index;
}

/** `GET /metrics` of the sidecar's own web app, in process (collectors and render, as a scrape runs them). */
export async function scrapeText(sidecar: Sidecar): Promise<string> {
  const response = await request(sidecar.webApp).get(sidecar.config.web.telemetryPath).set('accept-encoding', 'identity');
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return response.text;
}
