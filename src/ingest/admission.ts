/**
 * Admission to an ingest route: the options a route is built from and the checks run before any
 * byte of the body is read (draining, memory pressure, media type). Reading the body is
 * body.ts's, answering 202 once the batch is applied submission.ts's.
 */
import type { Request, RequestHandler } from 'express';
import type { Clock } from '../clock.js';
import type { StringLimits } from '../contract/bounds.js';
import { COMPACT_MEDIA_TYPE } from '../contract/compact.js';
import type { BodyFormat } from '../contract/decode.js';
import { SidecarError } from '../errors.js';
import type { InflightBudget } from './body.js';
import type { Ingestor } from './ingestor.js';
import type { MemoryGuard } from './memory.js';
import type { SubmissionOptions } from './submission.js';
import type { Slicer } from '../slices.js';

export const EVENTS_ROUTE = '/v1/events';
export const HOOKS_ROUTE = '/v1/hooks';

// A Map, not an object: a media type such as `constructor` must find nothing.
const MEDIA_TYPES: ReadonlyMap<string, BodyFormat> = new Map([
  ['application/x-ndjson', 'ndjson'],
  ['application/ndjson', 'ndjson'],
  ['application/jsonl', 'ndjson'],
  ['application/json', 'json'],
  [COMPACT_MEDIA_TYPE, 'compact'],
]);

/**
 * What an answer of /v1/events advertises in Accept-Post: the media types it reads. The bridge
 * plugin sends compact bodies once an answer names COMPACT_MEDIA_TYPE.
 */
export const ACCEPT_POST = `application/x-ndjson, application/json, ${COMPACT_MEDIA_TYPE}`;

/** What every ingest route is built from. */
export interface IngestRouteOptions extends SubmissionOptions {
  readonly wallClock: Clock;
  readonly maxBodyBytes: number;
  readonly maxEventsPerRequest: number;
  readonly maxLineBytes: number;
  readonly maxJsonBytes: number;
  /** Byte limits of ids and names in events and deliveries (--ingest.max-id-bytes, --ingest.max-label-value-bytes). */
  readonly strings?: StringLimits;
  readonly bodyTimeoutMs: number;
  /** Bytes of bodies being read or held on this listener. */
  readonly inflight: InflightBudget;
  /** How decoding hands the event loop back between slices. */
  readonly slicer: Slicer;
  readonly memoryGuard?: MemoryGuard;
}

export function bodyFormat(request: Request): BodyFormat | undefined {
  const type = request.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  return type === undefined ? undefined : MEDIA_TYPES.get(type);
}

function refuseWhileDraining(ingestor: Ingestor): RequestHandler {
  return (_request, _response, next) => next(ingestor.accepting ? undefined : new SidecarError('shutting_down'));
}

/**
 * Refuses before reading the body while memory in flight holds the process over a memory limit:
 * a body is exactly what it must not buffer then. Memory held by stored series is not refused
 * (refusing cannot free it; the guard expires series instead).
 */
function refuseOverMemoryLimit(guard: MemoryGuard | undefined): RequestHandler {
  return (_request, _response, next) => next(guard?.refusesIngest() === true ? new SidecarError('memory_limit') : undefined);
}

/** Refuses a body whose media type the route does not read, with the 415 that names what it does read. */
export function requireMediaType(
  accepted: (format: BodyFormat) => boolean = () => true,
  refusal: 'unsupported_media_type' | 'unsupported_media_type_json' = 'unsupported_media_type',
): RequestHandler {
  return (request, _response, next) => {
    const format = bodyFormat(request);
    next(format !== undefined && accepted(format) ? undefined : new SidecarError(refusal));
  };
}

/** Webhook deliveries are single JSON objects. */
export const requireJson = (): RequestHandler => requireMediaType((format) => format === 'json', 'unsupported_media_type_json');

/** Any other method on an ingest route: 405 with `Allow: POST`, not the 404 of an unknown path. */
export const refuseOtherMethods = (): RequestHandler => (_request, _response, next) => next(new SidecarError('method_not_allowed'));

/** The checks every ingest route runs before reading a body. */
export function admissionChecks(options: IngestRouteOptions): RequestHandler[] {
  return [refuseWhileDraining(options.ingestor), refuseOverMemoryLimit(options.memoryGuard)];
}
