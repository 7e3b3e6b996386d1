/**
 * What every ingest route shares: the options a route is built from, the checks run before a
 * body is read, body reading, and the submission that answers 202 once a batch is applied.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Clock } from '../clock.js';
import type { StringLimits } from '../contract/bounds.js';
import { decodeBodyInSlices, type BodyFormat, type DecodedBody, type DecodeOptions } from '../contract/decode.js';
import { SidecarError } from '../errors.js';
import type { Families } from '../metrics/registry.js';
import { readBody, withoutBom, type BodyLimits, type InflightBudget } from './body.js';
import type { Rejections } from './errors.js';
import type { Ingestor } from './ingestor.js';
import type { MemoryGuard } from './memory.js';
import type { Slicer } from '../slices.js';
import { histogram, type Declarations } from '../metrics/declare.js';

/** The families this module writes (and all it is handed). */
export const ADMISSION_FAMILIES = {
  ingestBatchEvents: histogram('hermes_sidecar_ingest_batch_events', {}, 'batch_events', 'self',
    'Events (lines) per ingest request.'),
} as const satisfies Declarations;

export const EVENTS_ROUTE = '/v1/events';
export const HOOKS_ROUTE = '/v1/hooks';

/** At most this many per-line errors are listed in a 202 body; the counts are always exact. */
const MAX_LISTED_ERRORS = 100;

// A Map, not an object: a media type such as `constructor` must find nothing.
const MEDIA_TYPES: ReadonlyMap<string, BodyFormat> = new Map([
  ['application/x-ndjson', 'ndjson'],
  ['application/ndjson', 'ndjson'],
  ['application/jsonl', 'ndjson'],
  ['application/json', 'json'],
]);

/** A request answered 202 with some lines rejected: counts per reason, never the lines. */
export interface RejectedLines {
  readonly route: string;
  readonly lines: number;
  readonly accepted: number;
  readonly rejected: Readonly<Record<string, number>>;
}

export interface IngestRouteOptions {
  readonly metrics: Families<typeof ADMISSION_FAMILIES>;
  readonly rejections: Rejections;
  readonly ingestor: Ingestor;
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
  /** For the debug log. */
  readonly onRejectedLines?: (rejected: RejectedLines) => void;
}

function reportRejectedLines(options: IngestRouteOptions, decoded: DecodedBody, route: string): void {
  if (decoded.errors.length === 0 || options.onRejectedLines === undefined) return;
  const rejected: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const error of decoded.errors) rejected[error.reason] = (rejected[error.reason] ?? 0) + 1;
  options.onRejectedLines({ route, lines: decoded.lines, accepted: decoded.events.length, rejected });
}

export function bodyFormat(request: Request): BodyFormat | undefined {
  const type = request.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  return type === undefined ? undefined : MEDIA_TYPES.get(type);
}

/**
 * Reads the body (body.ts: counted while streaming, on the wire and after gzip inflation, held
 * against the listener's in-flight budget) into `request.body`.
 */
export function rawBody(options: IngestRouteOptions, maxBytes: number): RequestHandler {
  const limits: BodyLimits = { maxWireBytes: maxBytes, maxInflatedBytes: maxBytes, timeoutMs: options.bodyTimeoutMs };
  return async (request, response, next) => {
    request.body = await readBody(request, response, limits, options.inflight);
    next();
  };
}

/** The body read by rawBody. */
export const bodyOf = (request: Request): Buffer => (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));

/** Decodes a body in slices that yield to the event loop (decode.ts), without its BOM. */
export function decodeRequestBody(options: IngestRouteOptions, body: Buffer, format: BodyFormat): Promise<DecodedBody> {
  const settings: DecodeOptions = {
    format,
    maxEvents: options.maxEventsPerRequest,
    maxLineBytes: options.maxLineBytes,
    maxJsonBytes: options.maxJsonBytes,
    ...(options.strings === undefined ? {} : { strings: options.strings }),
    arrivedAt: options.wallClock(),
  };
  return decodeBodyInSlices(withoutBom(body), settings, options.slicer);
}


function refuseWhileDraining(ingestor: Ingestor): RequestHandler {
  return (_request, _response, next) => next(ingestor.accepting ? undefined : new SidecarError('shutting_down'));
}

/** Refuses before reading the body: a body is exactly what an over-limit process must not buffer. */
function refuseOverMemoryLimit(guard: MemoryGuard | undefined): RequestHandler {
  return (_request, _response, next) => next(guard?.overLimit() === true ? new SidecarError('memory_limit') : undefined);
}

export function requireMediaType(accepted: (format: BodyFormat) => boolean = () => true): RequestHandler {
  return (request, _response, next) => {
    const format = bodyFormat(request);
    next(format !== undefined && accepted(format) ? undefined : new SidecarError('unsupported_media_type'));
  };
}

/** Webhook deliveries are single JSON objects. */
export const requireJson = (): RequestHandler => requireMediaType((format) => format === 'json');

/** Answers 202 with what was accepted and which lines were not. */
function acceptedBody(decoded: DecodedBody): object {
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
export async function submitDecoded(options: IngestRouteOptions, decoded: DecodedBody, response: Response): Promise<void> {
  options.rejections.lines(decoded.errors);
  reportRejectedLines(options, decoded, response.req.path);
  options.metrics.ingestBatchEvents.observe({}, decoded.lines);
  const admission = options.ingestor.submit(decoded.events);
  if (admission.refused !== undefined) throw new SidecarError(admission.refused);
  await admission.applied;
  response.status(202).json(acceptedBody(decoded));
}


/** The checks every ingest route runs before reading a body. */
export function admissionChecks(options: IngestRouteOptions): RequestHandler[] {
  return [refuseWhileDraining(options.ingestor), refuseOverMemoryLimit(options.memoryGuard)];
}

