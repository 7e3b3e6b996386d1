/**
 * Wires the sidecar from a Config and injected dependencies (clock, logger): no globals, so
 * tests build as many independent sidecars as they like.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Config, ListenAddress } from './config.js';
import { ERRORS } from './errors.js';
import { createIngestApp, type IngestAppOptions } from './ingest/app.js';
import { createWebApp } from './web/app.js';
import { MAPPED_EVENTS } from './contract/hooks.js';
import { CATALOGUE } from './metrics/catalogue.js';
import { OPEN_LABELS } from './metrics/labels.js';
import { DROP_REASONS } from './correlate/recorders/delivery.js';
import { SPAN_KINDS } from './correlate/recorders/index.js';
import { createMetricsRegistry, type Metrics, type MetricsRegistry } from './metrics/registry.js';
import { createEventPipeline } from './correlate/assemble.js';
import type { Dispatcher } from './correlate/dispatcher.js';
import { Ingestor } from './ingest/ingestor.js';
import { MemoryGuard, processMemory, type MemoryProbe } from './ingest/memory.js';
import { IngestQueue } from './ingest/queue.js';
import { systemClock, type Clock } from './clock.js';
import type { Logger } from './log.js';
import { VERSION } from './version.js';

export interface SidecarDeps {
  readonly logger: Logger;
  /** Epoch seconds; drives TTLs, liveness and timestamps. */
  readonly clock?: Clock;
  /** prom-client's process/runtime metrics; tests that compare whole outputs turn them off. */
  readonly defaultMetrics?: boolean;
  /** Memory usage for the memory guard (the process's own by default). */
  readonly memoryProbe?: MemoryProbe;
}

export interface Sidecar {
  readonly config: Config;
  readonly registry: MetricsRegistry;
  readonly metrics: Metrics;
  readonly ingestApp: Express;
  readonly webApp: Express;
  readonly queue: IngestQueue;
  readonly dispatcher: Dispatcher;
  /** Runs every TTL sweep now (the timer does this every sweep interval). */
  sweep(): void;
  /** Resolves once every accepted batch has been applied. */
  drained(): Promise<void>;
}

/**
 * Closed-set self-metric and delivery series start at 0, so rate() and increase() see the first
 * refusal or drop instead of a series that appears out of nowhere.
 */
function zeroSelfMetrics(metrics: Metrics): void {
  for (const reason of new Set(Object.values(ERRORS).map((error) => error.rejected))) {
    if (reason !== undefined) metrics.eventsRejected.inc({ reason }, 0);
  }
  for (const reason of ['invalid_event', 'unknown_shape']) metrics.eventsRejected.inc({ reason }, 0);
  for (const reason of ['queue_full', 'shutdown', 'internal_error']) metrics.eventsDropped.inc({ reason }, 0);
  for (const kind of SPAN_KINDS) metrics.orphanedSpans.inc({ kind }, 0);
  for (const table of ['plugin_instances', 'sessions']) metrics.stateEvictions.inc({ table }, 0);
  for (const stage of ['collect', 'render']) metrics.scrapeErrors.inc({ stage }, 0);
  for (const label of OPEN_LABELS) metrics.labelOverflow.inc({ label }, 0);
  for (const spec of Object.values(CATALOGUE)) if (spec.scope === 'agent') metrics.seriesOverflow.inc({ metric: spec.name }, 0);
  for (const hook of MAPPED_EVENTS) {
    if (hook === 'plugin_heartbeat') continue;
    for (const reason of DROP_REASONS) metrics.pluginCallbacksDropped.inc({ hook, reason }, 0);
  }
}

const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

export function createSidecar(config: Config, deps: SidecarDeps): Sidecar {
  const clock = deps.clock ?? systemClock;
  const { logger } = deps;
  const registry = createMetricsRegistry({
    buckets: config.buckets,
    maxAgentSeries: config.maxAgentSeries,
    defaultMetrics: deps.defaultMetrics ?? true,
  });
  const { metrics } = registry;
  const pipeline = createEventPipeline(config, metrics, clock, (error) =>
    logger.error({ code: 'apply_failed', error: errorName(error) }, 'applying an event failed'),
  );
  const { dispatcher, instances } = pipeline;
  const queue = new IngestQueue(config.ingest.queueCapacity);
  const ingestor = new Ingestor(queue, dispatcher, metrics);
  const onInternalError = (error: unknown) =>
    logger.error({ code: 'internal', error: errorName(error) }, 'request failed');

  metrics.buildInfo.set({ version: VERSION, node_version: process.version }, 1);
  metrics.queueCapacity.set({}, config.ingest.queueCapacity);
  metrics.seriesLimit.set({}, config.maxAgentSeries);
  zeroSelfMetrics(metrics);
  const memoryGuard = new MemoryGuard({
    probe: deps.memoryProbe ?? processMemory,
    clock,
    rssLimitBytes: config.memory.rssLimitBytes,
    heapLimitBytes: config.memory.heapLimitBytes,
  });

  const ingestOptions: IngestAppOptions = {
    metrics,
    ingestor,
    wallClock: clock,
    token: config.ingest.token,
    maxBodyBytes: config.ingest.maxBodyBytes,
    maxEventsPerRequest: config.ingest.maxEventsPerRequest,
    retryAfterSeconds: config.ingest.retryAfterSeconds,
    onInternalError,
    memoryGuard,
    webhook: config.webhook,
  };
  const ingestApp = createIngestApp(ingestOptions);
  const webApp = createWebApp({
    registry,
    telemetryPath: config.web.telemetryPath,
    version: VERSION,
    ready: () => ingestor.accepting,
    onScrapeError: (stage, error) => logger.error({ code: 'scrape_failed', stage, error: errorName(error) }, 'scrape failed'),
    collectors: [
      () => metrics.queueDepth.set({}, queue.depth),
      () => metrics.series.set({}, registry.agentSeries()),
      () => {
        const { live, stale } = instances.liveness();
        metrics.pluginInstances.set({ state: 'live' }, live);
        metrics.pluginInstances.set({ state: 'stale' }, stale);
      },
    ],
  });

  return {
    config,
    registry,
    metrics,
    ingestApp,
    webApp,
    queue,
    dispatcher,
    sweep: () => pipeline.sweep(),
    drained: () => ingestor.drain(),
  };
}

/** Listens on host:port and resolves with the bound address (port 0 picks a free one). */
export function listen(app: Express, address: ListenAddress): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(address.port, address.host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

export function boundAddress(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

export function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
