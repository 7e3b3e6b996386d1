/**
 * The ingest listener: POST /v1/events (and, when configured, POST /v1/hooks).
 *
 * Order of checks: token (401) → shutting down (503) → content type (415) → body, inflated and
 * bounded (413/400) → decode (400, or 202 with per-line errors) → queue capacity (429).
 */
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { decodeBody, type BodyFormat, type DecodedBody } from '../contract/decode.js';
import { SidecarError } from '../errors.js';
import type { Metrics } from '../metrics/registry.js';
import type { Ingestor } from '../pipeline/ingestor.js';
import type { MemoryGuard } from '../pipeline/memory.js';
import type { Clock } from '../pipeline/spans.js';
import { requireBearerToken } from './auth.js';
import { errorHandler } from './errors.js';

export const EVENTS_ROUTE = '/v1/events';
export const HOOKS_ROUTE = '/v1/hooks';

/** At most this many per-line errors are listed in a 202 body; the counts are always exact. */
const MAX_LISTED_ERRORS = 100;

const MEDIA_TYPES: Readonly<Record<string, BodyFormat>> = {
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'application/json': 'json',
};

export interface IngestAppOptions {
  readonly metrics: Metrics;
  readonly ingestor: Ingestor;
  readonly wallClock: Clock;
  readonly token: string | undefined;
  readonly maxBodyBytes: number;
  readonly maxEventsPerRequest: number;
  readonly retryAfterSeconds: number;
  readonly onInternalError: (error: unknown) => void;
  readonly memoryGuard?: MemoryGuard;
  /** Extra routes mounted after the shared checks (the webhook receiver). */
  readonly extraRoutes?: (app: Express) => void;
}

export function bodyFormat(request: Request): BodyFormat | undefined {
  const type = request.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  return type === undefined ? undefined : MEDIA_TYPES[type];
}

/** Reads the raw body, inflating gzip, and refuses it past the limit counted after decompression. */
export function rawBody(maxBodyBytes: number): RequestHandler {
  return express.raw({ type: () => true, limit: maxBodyBytes, inflate: true });
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

function refuseWhileDraining(ingestor: Ingestor): RequestHandler {
  return (_request, _response, next) => next(ingestor.accepting ? undefined : new SidecarError('shutting_down'));
}

/** Refuses before reading the body: a body is exactly what an over-limit process must not buffer. */
function refuseOverMemoryLimit(guard: MemoryGuard | undefined): RequestHandler {
  return (_request, _response, next) => next(guard?.overLimit() === true ? new SidecarError('memory_limit') : undefined);
}

function requireMediaType(accepted: (format: BodyFormat) => boolean = () => true): RequestHandler {
  return (request, _response, next) => {
    const format = bodyFormat(request);
    next(format !== undefined && accepted(format) ? undefined : new SidecarError('unsupported_media_type'));
  };
}

/** Webhook deliveries are single JSON objects. */
export const requireJson = (): RequestHandler => requireMediaType((format) => format === 'json');

/** Answers 202 with what was accepted and which lines were not. */
export function acceptedBody(decoded: DecodedBody): object {
  return {
    accepted: decoded.events.length,
    rejected: decoded.errors.length,
    errors: decoded.errors.slice(0, MAX_LISTED_ERRORS),
  };
}

/**
 * Submits decoded events and answers 202 once they are applied, so a 202 always means
 * "counted": a sidecar killed after answering cannot lose what it acknowledged.
 */
export async function submitDecoded(
  options: IngestAppOptions,
  decoded: DecodedBody,
  source: 'plugin' | 'webhook',
  response: Response,
): Promise<void> {
  for (const error of decoded.errors) options.metrics.eventsRejected.inc({ reason: error.reason });
  options.metrics.ingestBatchEvents.observe({}, decoded.lines);
  const admission = options.ingestor.submit(decoded.events, source);
  if (admission.refused !== undefined) throw new SidecarError(admission.refused);
  await admission.applied;
  response.status(202).json(acceptedBody(decoded));
}

function eventsHandler(options: IngestAppOptions): RequestHandler {
  return async (request, response) => {
    const format = bodyFormat(request) ?? 'ndjson';
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const decoded = decodeBody(body, {
      format,
      maxEvents: options.maxEventsPerRequest,
      source: 'plugin',
      arrivedAt: options.wallClock(),
    });
    await submitDecoded(options, decoded, 'plugin', response);
  };
}

/** The checks every ingest route runs before reading a body. */
export function admissionChecks(options: IngestAppOptions): RequestHandler[] {
  return [refuseWhileDraining(options.ingestor), refuseOverMemoryLimit(options.memoryGuard)];
}

export function createIngestApp(options: IngestAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(countRequests(options.metrics));
  app.post(
    EVENTS_ROUTE,
    requireBearerToken(options.token),
    ...admissionChecks(options),
    requireMediaType(),
    rawBody(options.maxBodyBytes),
    eventsHandler(options),
  );
  options.extraRoutes?.(app);
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
