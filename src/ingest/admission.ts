/**
 * What every ingest route shares: the options a route is built from, the checks run before a
 * body is read, body reading, and the submission that answers 202 once a batch is applied.
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Clock } from '../clock.js';
import type { BodyFormat, DecodedBody } from '../contract/decode.js';
import { SidecarError } from '../errors.js';
import type { OwnedMetrics } from '../metrics/registry.js';
import type { Rejections } from './errors.js';
import type { Ingestor } from './ingestor.js';
import type { MemoryGuard } from './memory.js';

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

export interface IngestRouteOptions {
  readonly metrics: OwnedMetrics<'ingest/admission'>;
  readonly rejections: Rejections;
  readonly ingestor: Ingestor;
  readonly wallClock: Clock;
  readonly maxBodyBytes: number;
  readonly maxEventsPerRequest: number;
  readonly memoryGuard?: MemoryGuard;
}

export function bodyFormat(request: Request): BodyFormat | undefined {
  const type = request.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  return type === undefined ? undefined : MEDIA_TYPES[type];
}

/** Reads the raw body, inflating gzip, and refuses it past the limit counted after decompression. */
export function rawBody(maxBodyBytes: number): RequestHandler {
  return express.raw({ type: () => true, limit: maxBodyBytes, inflate: true });
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

