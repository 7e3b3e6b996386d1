/** In-process sidecars for the benchmarks: built from a Config, fed without HTTP. */
import { pino } from 'pino';
import { createSidecar, type Sidecar } from '../src/app.js';
import { defaultConfig, loadConfig } from '../src/config.js';
import { decodeBody } from '../src/contract/decode.js';
import { ndjson, seriesLines } from './lib.js';

export interface BuildOptions {
  /** YAML config file (label caps); the defaults without one. */
  readonly configFile?: string;
  readonly defaultMetrics?: boolean;
  /** Listen addresses for children that serve real listeners. */
  readonly listen?: boolean;
}

export function buildSidecar(options: BuildOptions = {}): Sidecar {
  const argv = [
    ...(options.configFile === undefined ? [] : ['--config.file', options.configFile]),
    ...(options.listen === true ? ['--web.listen-address=127.0.0.1:0', '--ingest.listen-address=127.0.0.1:0'] : []),
  ];
  const config = argv.length === 0 ? defaultConfig() : loadConfig({ argv, env: {} });
  return createSidecar(config, { logger: pino({ level: 'silent' }), defaultMetrics: options.defaultMetrics ?? false });
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
 * `also` receives every body, to feed a second pipeline the very same events.
 */
export function seedSeries(sidecar: Sidecar, target: number, tag: string, start = 0, also?: (body: Buffer) => void): number {
  let index = start;
  while (sidecar.registry.agentSeries() < target) {
    const remaining = target - sidecar.registry.agentSeries();
    // About 6.5 series per index on average; small chunks near the end keep the overshoot small.
    const chunk = Math.max(1, Math.min(500, Math.floor(remaining / 7)));
    const lines = [];
    for (let end = index + chunk; index < end; index += 1) lines.push(...seriesLines(index, tag));
    const body = Buffer.from(ndjson(lines));
    applyNdjson(sidecar, body);
    also?.(body);
  }
  return index;
}
