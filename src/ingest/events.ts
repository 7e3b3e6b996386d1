/** POST /v1/events: plugin lines, envelopes and flat kwargs as NDJSON or JSON, optionally gzip. */
import { Router, type RequestHandler } from 'express';
import {
  admissionChecks,
  bodyFormat,
  bodyOf,
  decodeRequestBody,
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
    const decoded = await decodeRequestBody(options, bodyOf(request), format);
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
    rawBody(options, options.maxBodyBytes),
    eventsHandler(options),
  );
  return router;
}
