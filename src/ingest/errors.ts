/**
 * The one place where failures become HTTP answers: stable code, status, fixed message, and
 * Retry-After for the answers a sender should retry. No stack traces, ever.
 */
import type { ErrorRequestHandler } from 'express';
import type { LineError } from '../contract/decode.js';
import { ERRORS, SidecarError, type ErrorCode } from '../errors.js';
import type { Families } from '../metrics/registry.js';
import { VALUES } from '../contract/vocabulary.js';
import { counter, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';

/** The families this module writes (and all it is handed). */
export const REJECTION_FAMILIES = {
  eventsRejected: fed(counter('hermes_sidecar_events_rejected_total', { reason: VALUES.rejection_reason }, 'self',
    'Events (or whole requests) refused at the edge, by reason ({reason}).'),
    'sidecar', 'ingest'),
} as const satisfies Declarations;

/**
 * Every failure of the ingest routes is a SidecarError (body reads, including zlib's, become one
 * in ingest/body.ts); no body parser is mounted. An error carrying a 4xx status can only come
 * from express itself and is the client's doing; anything else is the sidecar's own failure.
 */
function toSidecarError(error: unknown): SidecarError {
  if (error instanceof SidecarError) return error;
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return new SidecarError('invalid_encoding');
  return new SidecarError('internal');
}

/** The one counter of what the edge refuses: whole requests by their error, single lines by their verdict. */
export class Rejections {
  constructor(private readonly metrics: Families<typeof REJECTION_FAMILIES>) {}

  request(code: ErrorCode): void {
    const reason = ERRORS[code].rejected;
    if (reason !== undefined) this.metrics.eventsRejected.inc({ reason });
  }

  lines(errors: readonly LineError[]): void {
    for (const error of errors) this.metrics.eventsRejected.inc({ reason: error.reason });
  }
}

/**
 * What may be said about a refused (429/503) or rejected (4xx) request, for the debug log: its
 * stable code, status, route and declared size. Never content: no body, header or client-chosen
 * path (an unknown path is reported as `other`).
 */
export interface FailedRequest {
  readonly code: ErrorCode;
  readonly status: number;
  readonly route: string;
  readonly bodyBytes: number | undefined;
}

export interface ErrorHandlerOptions {
  readonly rejections: Rejections;
  readonly retryAfterSeconds: number;
  readonly onInternalError: (error: unknown) => void;
  /** Every failure other than `internal` (which goes to onInternalError). */
  readonly onFailedRequest?: (failure: FailedRequest) => void;
}

const KNOWN_ROUTES: ReadonlySet<string> = new Set(['/v1/events', '/v1/hooks']);

const declaredLength = (header: string | undefined): number | undefined =>
  header !== undefined && /^\d{1,15}$/.test(header) ? Number(header) : undefined;

export function errorHandler(options: ErrorHandlerOptions): ErrorRequestHandler {
  return (error: unknown, request, response, _next) => {
    const failure = toSidecarError(error);
    if (failure.code === 'internal') options.onInternalError(error);
    else {
      options.onFailedRequest?.({
        code: failure.code,
        status: failure.status,
        route: KNOWN_ROUTES.has(request.path) ? request.path : 'other',
        bodyBytes: declaredLength(request.get('content-length')),
      });
    }
    options.rejections.request(failure.code);
    if (failure.retryable) response.set('Retry-After', String(options.retryAfterSeconds));
    if (failure.allow !== undefined) response.set('Allow', failure.allow);
    response.status(failure.status).json({ error: failure.code, message: failure.message });
  };
}
