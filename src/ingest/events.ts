/** POST /v1/events: plugin lines, envelopes and flat kwargs as NDJSON or JSON, optionally gzip. */
import { Router, type RequestHandler } from 'express';
import { decodeBody } from '../contract/decode.js';
import {
  admissionChecks,
  bodyFormat,
  EVENTS_ROUTE,
  rawBody,
  requireMediaType,
  submitDecoded,
  type IngestRouteOptions,
} from './admission.js';
import { requireBearerToken } from './auth.js';

export interface EventsRouteOptions extends IngestRouteOptions {
  readonly token: string | undefined;
}

function eventsHandler(options: EventsRouteOptions): RequestHandler {
  return async (request, response) => {
    const format = bodyFormat(request) ?? 'ndjson';
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const decoded = decodeBody(body, {
      format,
      maxEvents: options.maxEventsPerRequest,
      arrivedAt: options.wallClock(),
    });
    await submitDecoded(options, decoded, response);
  };
}

export function eventsRouter(options: EventsRouteOptions): Router {
  const router = Router();
  router.post(
    EVENTS_ROUTE,
    requireBearerToken(options.token),
    ...admissionChecks(options),
    requireMediaType(),
    rawBody(options.maxBodyBytes),
    eventsHandler(options),
  );
  return router;
}
