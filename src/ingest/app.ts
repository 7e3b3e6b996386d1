/**
 * The ingest listener: POST /v1/events and POST /v1/hooks, composed as routers behind one
 * request counter and one error handler.
 *
 * Order of checks: token (401) → shutting down (503) → content type (415) → body, inflated and
 * bounded (413/400) → decode (400, or 202 with per-line errors) → queue capacity (429).
 */
import express, { type Express, type RequestHandler } from 'express';
import { SidecarError } from '../errors.js';
import { closedLabel } from '../metrics/labels.js';
import type { Families } from '../metrics/registry.js';
import { EVENTS_ROUTE, HOOKS_ROUTE, type IngestRouteOptions } from './admission.js';
import { SUBMISSION_FAMILIES } from './submission.js';
import { BODY_FAMILIES } from './body.js';
import { errorHandler, REJECTION_FAMILIES, Rejections, type FailedRequest } from './errors.js';
import { INGESTOR_FAMILIES } from './ingestor.js';
import { readyRouter, type Readiness } from './ready.js';
import { MEMORY_FAMILIES } from './memory.js';
import { eventsRouter } from './events.js';
import { hooksRouter, type HooksRouteOptions } from './hooks.js';
import { ERRORS } from '../errors.js';
import { counter, mergeDeclarations, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';

/** The closed value sets of this module's labels. */
export const INGEST_APP_VALUES = {
  ingest_route: ['/v1/events', '/v1/hooks'],
  /** The status codes the ingest listener answers with: 202, and those of src/errors.ts. */
  ingest_code: [...new Set(['202', ...Object.values(ERRORS).map((error) => String(error.status))])],
} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const INGEST_APP_FAMILIES = {
  ingestRequests: fed(counter('hermes_sidecar_ingest_requests_total', { route: INGEST_APP_VALUES.ingest_route, code: INGEST_APP_VALUES.ingest_code }, 'self',
    'HTTP ingest requests by route and status code.',
    // Not every code is possible on every route: a zero per combination would only mislead.
    { preinit: false }),
    'sidecar', 'ingest'),
} as const satisfies Declarations;

/** Every family the ingest stage writes (the listener, its routes, the ingestor, body reads, the memory guard). */
export const INGEST_FAMILIES = mergeDeclarations(
  INGESTOR_FAMILIES,
  REJECTION_FAMILIES,
  SUBMISSION_FAMILIES,
  INGEST_APP_FAMILIES,
  MEMORY_FAMILIES,
  BODY_FAMILIES,
);

/** The families the listener hands its parts. */
type ListenerFamilies = Families<typeof REJECTION_FAMILIES> & Families<typeof SUBMISSION_FAMILIES> & Families<typeof INGEST_APP_FAMILIES>;

/** The listener's options: what its routes share, and what only the listener itself uses. */
export interface IngestAppOptions extends Omit<IngestRouteOptions, 'metrics' | 'rejections'> {
  /** Each part of the listener is given the families it declares. */
  readonly metrics: ListenerFamilies;
  readonly token: string | undefined;
  readonly retryAfterSeconds: number;
  readonly onInternalError: (error: unknown) => void;
  /** For the debug log: codes, routes and counts of refused and rejected requests. */
  readonly onFailedRequest?: (failure: FailedRequest) => void;
  readonly webhook: HooksRouteOptions;
  /** Readiness, as /-/ready on the web listener tells it. */
  readonly ready: Readiness;
}

const STATUS_CODES = new Set(INGEST_APP_VALUES.ingest_code);

function countRequests(metrics: Families<typeof INGEST_APP_FAMILIES>): RequestHandler {
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
  const { metrics, token, retryAfterSeconds, onInternalError, onFailedRequest, webhook, ready, ...shared } = options;
  const rejections = new Rejections(metrics);
  const routes: IngestRouteOptions = { ...shared, metrics, rejections };
  app.use(countRequests(metrics));
  app.use(eventsRouter({ ...routes, token }));
  app.use(hooksRouter(routes, webhook));
  app.use(readyRouter(token, ready));
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
