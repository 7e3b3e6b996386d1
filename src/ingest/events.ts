/** POST /v1/events: plugin lines, envelopes and flat kwargs as NDJSON or JSON, the plugin's compact body, optionally gzip. */
import { Router, type RequestHandler } from 'express';
import { decodeBodyInSlices, type BodyFormat, type DecodedBody, type DecodeOptions } from '../contract/decode.js';
import { ACCEPT_POST, admissionChecks, bodyFormat, EVENTS_ROUTE, refuseOtherMethods, requireMediaType, type IngestRouteOptions } from './admission.js';
import { requireBearerToken } from './auth.js';
import { bodyOf, rawBody, withoutBom } from './body.js';
import { submitDecoded } from './submission.js';

export interface EventsRouteOptions extends IngestRouteOptions {
  readonly token: string | undefined;
}

/** Decodes a body in slices that yield to the event loop (decode.ts), without its BOM. */
function decodeRequestBody(options: IngestRouteOptions, body: Buffer, format: BodyFormat): Promise<DecodedBody> {
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

function eventsHandler(options: EventsRouteOptions): RequestHandler {
  return async (request, response) => {
    const format = bodyFormat(request) ?? 'ndjson';
    const decoded = await decodeRequestBody(options, bodyOf(request), format);
    await submitDecoded(options, decoded, response);
  };
}

/** Every answer of the route, errors included, says which bodies it reads (the plugin's negotiation). */
const advertiseBodies: RequestHandler = (_request, response, next) => {
  response.set('Accept-Post', ACCEPT_POST);
  next();
};

export function eventsRouter(options: EventsRouteOptions): Router {
  const router = Router();
  router.post(
    EVENTS_ROUTE,
    advertiseBodies,
    requireBearerToken(options.token),
    ...admissionChecks(options),
    requireMediaType(),
    rawBody(options, options.maxBodyBytes),
    eventsHandler(options),
  );
  router.all(EVENTS_ROUTE, refuseOtherMethods());
  return router;
}
