/**
 * The ingest listener: POST /v1/events and POST /v1/hooks, composed as routers behind one
 * request counter and one error handler.
 *
 * Order of checks: token (401) → shutting down (503) → content type (415) → body, inflated and
 * bounded (413/400) → decode (400, or 202 with per-line errors) → queue capacity (429).
 */
import express, { type Express, type RequestHandler } from 'express';
import { SidecarError } from '../errors.js';
import { VALUES } from '../metrics/catalogue.js';
import { closedLabel } from '../metrics/labels.js';
import { metricsOwnedBy, type Metrics, type OwnedMetrics } from '../metrics/registry.js';
import { EVENTS_ROUTE, HOOKS_ROUTE, type IngestRouteOptions } from './admission.js';
import { errorHandler, Rejections, type FailedRequest } from './errors.js';
import { eventsRouter } from './events.js';
import { hooksRouter, type HooksRouteOptions } from './hooks.js';

/** The listener's options: what its routes share, and what only the listener itself uses. */
export interface IngestAppOptions extends Omit<IngestRouteOptions, 'metrics' | 'rejections'> {
  /** Each part of the listener is given the metrics it owns. */
  readonly metrics: Metrics;
  readonly token: string | undefined;
  readonly retryAfterSeconds: number;
  readonly onInternalError: (error: unknown) => void;
  /** For the debug log: codes, routes and counts of refused and rejected requests. */
  readonly onFailedRequest?: (failure: FailedRequest) => void;
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
  const { metrics, token, retryAfterSeconds, onInternalError, onFailedRequest, webhook, ...shared } = options;
  const rejections = new Rejections(metricsOwnedBy(metrics, 'ingest/errors'));
  const routes: IngestRouteOptions = { ...shared, metrics: metricsOwnedBy(metrics, 'ingest/admission'), rejections };
  app.use(countRequests(metricsOwnedBy(metrics, 'ingest/app')));
  app.use(eventsRouter({ ...routes, token }));
  app.use(hooksRouter(routes, webhook));
  app.use((_request, _response, next) => next(new SidecarError('not_found')));
  app.use(
    errorHandler({
      rejections,
      retryAfterSeconds,
      onInternalError,
      ...(onFailedRequest === undefined ? {} : { onFailedRequest }),
    }),
  );
  return app;
}
