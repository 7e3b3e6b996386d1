/**
 * The ingest listener: POST /v1/events and POST /v1/hooks, composed as routers behind one
 * request counter and one error handler.
 *
 * Order of checks: token (401) → shutting down (503) → content type (415) → body, inflated and
 * bounded (413/400) → decode (400, or 202 with per-line errors) → queue capacity (429).
 */
import express, { type Express, type RequestHandler } from 'express';
import { SidecarError } from '../errors.js';
import type { Clock } from '../clock.js';
import { VALUES } from '../metrics/catalogue.js';
import { closedLabel } from '../metrics/labels.js';
import { metricsOwnedBy, type Metrics, type OwnedMetrics } from '../metrics/registry.js';
import type { Ingestor } from './ingestor.js';
import type { InflightBudget } from './body.js';
import type { MemoryGuard } from './memory.js';
import type { Slicer } from './slices.js';
import { EVENTS_ROUTE, HOOKS_ROUTE, type IngestRouteOptions, type RejectedLines } from './admission.js';
import { errorHandler, Rejections, type FailedRequest } from './errors.js';
import { eventsRouter } from './events.js';
import { hooksRouter, type HooksRouteOptions } from './hooks.js';

export interface IngestAppOptions {
  /** Each part of the listener is given the metrics it owns. */
  readonly metrics: Metrics;
  readonly ingestor: Ingestor;
  readonly wallClock: Clock;
  readonly token: string | undefined;
  readonly maxBodyBytes: number;
  readonly maxEventsPerRequest: number;
  readonly maxLineBytes: number;
  readonly maxJsonBytes: number;
  readonly bodyTimeoutMs: number;
  readonly inflight: InflightBudget;
  readonly slicer: Slicer;
  readonly memoryGuard?: MemoryGuard;
  readonly retryAfterSeconds: number;
  readonly onInternalError: (error: unknown) => void;
  /** For the debug log: codes, routes and counts of refused and rejected requests. */
  readonly onFailedRequest?: (failure: FailedRequest) => void;
  readonly onRejectedLines?: (rejected: RejectedLines) => void;
  readonly webhook: HooksRouteOptions;
}

const STATUS_CODES = new Set(VALUES.ingest_code);

function countRequests(metrics: OwnedMetrics<'ingest/app'>): RequestHandler {
  return (request, response, next) => {
    response.on('finish', () => {
      const route = request.path === EVENTS_ROUTE || request.path === HOOKS_ROUTE ? request.path : 'other';
      metrics.ingestRequests.inc({ route, code: closedLabel(STATUS_CODES, String(response.statusCode)) });
    });
    next();
  };
}

export function createIngestApp(options: IngestAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const rejections = new Rejections(metricsOwnedBy(options.metrics, 'ingest/errors'));
  const routes: IngestRouteOptions = {
    metrics: metricsOwnedBy(options.metrics, 'ingest/admission'),
    rejections,
    ingestor: options.ingestor,
    wallClock: options.wallClock,
    maxBodyBytes: options.maxBodyBytes,
    maxEventsPerRequest: options.maxEventsPerRequest,
    maxLineBytes: options.maxLineBytes,
    maxJsonBytes: options.maxJsonBytes,
    bodyTimeoutMs: options.bodyTimeoutMs,
    inflight: options.inflight,
    slicer: options.slicer,
    memoryGuard: options.memoryGuard,
    onRejectedLines: options.onRejectedLines,
  };
  app.use(countRequests(metricsOwnedBy(options.metrics, 'ingest/app')));
  app.use(eventsRouter({ ...routes, token: options.token }));
  app.use(hooksRouter(routes, options.webhook));
  app.use((_request, _response, next) => next(new SidecarError('not_found')));
  app.use(
    errorHandler({
      rejections,
      retryAfterSeconds: options.retryAfterSeconds,
      onInternalError: options.onInternalError,
      ...(options.onFailedRequest === undefined ? {} : { onFailedRequest: options.onFailedRequest }),
    }),
  );
  return app;
}
