/**
 * The ingest listener: POST /v1/events and POST /v1/hooks, composed as routers behind one
 * request counter and one error handler.
 *
 * Order of checks: token (401) → shutting down (503) → content type (415) → body, inflated and
 * bounded (413/400) → decode (400, or 202 with per-line errors) → queue capacity (429).
 */
import express, { type Express, type RequestHandler } from 'express';
import { SidecarError } from '../errors.js';
import type { Metrics } from '../metrics/registry.js';
import { EVENTS_ROUTE, HOOKS_ROUTE } from './admission.js';
import { errorHandler } from './errors.js';
import { eventsRouter, type EventsRouteOptions } from './events.js';
import { hooksRouter, type HooksRouteOptions } from './hooks.js';

export interface IngestAppOptions extends EventsRouteOptions {
  readonly retryAfterSeconds: number;
  readonly onInternalError: (error: unknown) => void;
  readonly webhook: HooksRouteOptions;
}

function countRequests(metrics: Metrics): RequestHandler {
  return (request, response, next) => {
    response.on('finish', () => {
      const route = request.path === EVENTS_ROUTE || request.path === HOOKS_ROUTE ? request.path : 'other';
      metrics.ingestRequests.inc({ route, code: String(response.statusCode) });
    });
    next();
  };
}

export function createIngestApp(options: IngestAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(countRequests(options.metrics));
  app.use(eventsRouter(options));
  app.use(hooksRouter(options, options.webhook));
  app.use((_request, _response, next) => next(new SidecarError('not_found')));
  app.use(
    errorHandler({
      metrics: options.metrics,
      retryAfterSeconds: options.retryAfterSeconds,
      onInternalError: options.onInternalError,
    }),
  );
  return app;
}
