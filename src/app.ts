/**
 * Wires the sidecar from a Config and injected dependencies (clock, logger): no globals, so
 * tests build as many independent sidecars as they like.
 */
import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Config } from './config.js';
import { createListener, limitsFrom } from './net/listener.js';
import { createIngestApp, type IngestAppOptions } from './ingest/app.js';
import { createWebApp } from './web/app.js';
import { createExposition, renderText, type Exposition } from './exposition/exposition.js';
import type { Format } from './exposition/serializer.js';
import type { MetricsRegistry } from './metrics/registry.js';
import { createMetricsRegistry, type Metrics } from './catalogue.js';
import { recordBuildInfo } from './buildInfo.js';
import { createEventPipeline } from './correlate/assemble.js';
import type { Dispatcher } from './correlate/dispatcher.js';
import { Ingestor } from './ingest/ingestor.js';
import { InflightBudget } from './ingest/body.js';
import { MemoryGuard, processMemory, runtimeGc, type MemoryProbe } from './ingest/memory.js';
import { IngestQueue } from './ingest/queue.js';
import { earlyExpiry } from './metrics/earlyExpiry.js';
import { coalesced, eventLoopSlicer, runInSlices, stepsInTurn, type Slicer } from './slices.js';
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
  /** A full GC the memory guard requests while under pressure (the runtime's by default). */
  readonly collectGarbage?: (() => void) | undefined;
  /** How decoding and applying hand the event loop back between slices. */
  readonly slicer?: Slicer;
}

/** The registry with its rendering: `render()` is the whole exposition as one string (text format by default). */
export interface RenderingRegistry extends MetricsRegistry<Metrics> {
  render(format?: Format): Promise<string>;
}

export interface Sidecar {
  readonly config: Config;
  readonly registry: RenderingRegistry;
  readonly exposition: Exposition;
  readonly metrics: Metrics;
  readonly ingestApp: Express;
  readonly webApp: Express;
  readonly queue: IngestQueue;
  readonly dispatcher: Dispatcher;
  /** Bytes of request bodies being read or held on the ingest listener. */
  readonly inflight: InflightBudget;
  /**
   * Runs every TTL sweep now (the timer does this every sweep interval), in slices that hand the
   * event loop back; resolves once done.
   */
  sweep(): Promise<void>;
  /** Resolves once every accepted batch has been applied. */
  drained(): Promise<void>;
}

/**
 * The sidecar's own failures are logged with name, message and stack frames. A SyntaxError's
 * message can quote the text being parsed (V8 quotes JSON input), so it is left out: no event
 * content ever reaches a log line.
 */
export function errorFields(error: unknown): { error: Record<string, unknown> } {
  if (!(error instanceof Error)) return { error: { name: typeof error } };
  const frames = (error.stack ?? '').split('\n').filter((line) => line.startsWith('    at ')).map((line) => line.trim());
  const message = error instanceof SyntaxError ? undefined : error.message;
  return { error: { name: error.name, ...(message === undefined ? {} : { message }), stack: frames } };
}

export function createSidecar(config: Config, deps: SidecarDeps): Sidecar {
  const clock = deps.clock ?? systemClock;
  const { logger } = deps;
  const registry = createMetricsRegistry({
    buckets: config.buckets,
    maxAgentSeries: config.maxAgentSeries,
    maxSeriesBytes: config.maxSeriesBytes,
    labels: config.labels,
    maxLabelValueBytes: config.ingest.maxLabelValueBytes,
    defaultMetrics: deps.defaultMetrics ?? true,
    semconv: config.semconv,
    nativeHistograms: config.nativeHistograms,
    seriesTtlSeconds: config.seriesTtlSeconds,
  });
  const exposition = createExposition(registry);
  const { metrics } = registry;
  const slicer = deps.slicer ?? eventLoopSlicer();
  const pipeline = createEventPipeline(config, metrics, registry.labels, clock, (error) =>
    logger.error({ code: 'apply_failed', ...errorFields(error) }, 'applying an event failed'),
  );
  const { dispatcher } = pipeline;
  // The state tables first (spans closed by their TTL write their series), then series expiry
  // as of the end of that sweep; a sweep asked for while one is under way is that sweep.
  const sweep = coalesced(() =>
    runInSlices(stepsInTurn([() => pipeline.sweepSteps(), () => registry.expirySteps(clock())]), slicer),
  );
  const queue = new IngestQueue({ batches: config.ingest.queueCapacity, events: config.ingest.queueMaxEvents });
  const ingestor = new Ingestor(queue, dispatcher, metrics, slicer);
  const inflight = new InflightBudget(config.ingest.maxInflightBytes, metrics);
  const onInternalError = (error: unknown) =>
    logger.error({ code: 'internal', ...errorFields(error) }, 'request failed');

  recordBuildInfo(metrics);
  const memoryGuard = new MemoryGuard({
    probe: deps.memoryProbe ?? processMemory,
    clock,
    liveLimitBytes: config.memory.liveLimitBytes,
    rssLimitBytes: config.memory.rssLimitBytes,
    heapLimitBytes: config.memory.heapLimitBytes,
    collectGarbage: 'collectGarbage' in deps ? deps.collectGarbage : runtimeGc(),
    // Refusing ingest frees the bodies in flight; stored series leave only by (early) expiry.
    inFlightBytes: () => inflight.bytes,
    storedSeries: () => registry.agentSeries(),
    shedder: earlyExpiry({ store: registry, clock, ttlSeconds: config.seriesTtlSeconds }),
    metrics,
  });

  const ready = () => {
    if (!ingestor.accepting) return { ready: false, reason: 'Shutting down' };
    return memoryGuard.readiness() ?? { ready: true, reason: 'Ready' };
  };
  const ingestOptions: IngestAppOptions = {
    metrics,
    ingestor,
    wallClock: clock,
    token: config.ingest.token,
    maxBodyBytes: config.ingest.maxBodyBytes,
    maxEventsPerRequest: config.ingest.maxEventsPerRequest,
    maxLineBytes: config.ingest.maxLineBytes,
    maxJsonBytes: config.ingest.maxJsonBytes,
    strings: { maxIdBytes: config.ingest.maxIdBytes, maxLabelValueBytes: config.ingest.maxLabelValueBytes },
    bodyTimeoutMs: config.ingest.bodyTimeoutSeconds * 1000,
    inflight,
    slicer,
    retryAfterSeconds: config.ingest.retryAfterSeconds,
    onInternalError,
    // Debug only: codes, routes and counts of refused and rejected requests, never content.
    onFailedRequest: ({ code, status, route, bodyBytes }) =>
      logger.debug({ code, status, route, body_bytes: bodyBytes }, status === 429 || status === 503 ? 'request refused' : 'request rejected'),
    onRejectedLines: ({ route, lines, accepted, rejected }) =>
      logger.debug({ code: 'lines_rejected', route, lines, accepted, rejected }, 'request had rejected lines'),
    memoryGuard,
    webhook: { ...config.webhook, onDuplicate: () => pipeline.delivery.duplicate() },
    ready,
  };
  const ingestApp = createIngestApp(ingestOptions);
  const webApp = createWebApp({
    registry,
    exposition,
    telemetryPath: config.web.telemetryPath,
    version: VERSION,
    ingestAddress: `${config.ingest.listen.host.includes(':') ? `[${config.ingest.listen.host}]` : config.ingest.listen.host}:${config.ingest.listen.port}`,
    liveInstances: () => pipeline.instances.liveness().live,
    pacing: { minIntervalMs: config.web.minRenderIntervalSeconds * 1000 },
    ready,
    onScrapeError: (stage, error) => logger.error({ code: 'scrape_failed', stage, ...errorFields(error) }, 'scrape failed'),
    collectors: [() => ingestor.collect(), () => pipeline.collect(), () => inflight.collect(), () => memoryGuard.collect()],
  });

  return {
    config,
    registry: { ...registry, render: (format = 'text') => renderText(exposition, format) },
    exposition,
    metrics,
    ingestApp,
    webApp,
    queue,
    dispatcher,
    inflight,
    sweep,
    drained: () => ingestor.drain(),
  };
}

/**
 * The ingest listener's server, not yet listening. A request may take its headers timeout plus
 * the body timeout (and a second more), so a slow body is answered by the ingest app's own 408,
 * counted as body_timeout, before Node's request timeout closes the connection.
 */
export function createIngestServer(sidecar: Sidecar): Server {
  const { config } = sidecar;
  return createListener(sidecar.ingestApp, {
    name: 'ingest',
    limits: limitsFrom(config.listeners.ingest, config.ingest.bodyTimeoutSeconds * 1000 + 1000),
    metrics: sidecar.metrics,
  });
}

/**
 * The web listener's bounds: a scrape carries no body, so the whole request may take its
 * headers timeout once more.
 */
export const webListenerLimits = (config: Config) => limitsFrom(config.listeners.web, config.listeners.web.headersTimeoutSeconds * 1000);
