/**
 * POST /v1/hooks: Hermes outbound webhooks, no plugin needed. The HMAC-SHA256 of the raw body
 * (`X-Hermes-Signature-256: sha256=<hex>`) is verified in constant time before the body is
 * parsed. The body is read before anyone is authenticated (the signature covers it), so it has
 * a small limit of its own (`--webhook.max-body-bytes`, on the wire and after inflation).
 * A delivery applied within the dedupe window is acknowledged and not applied again; it is
 * recorded only once applied, so a refused delivery is applied when retried. A delivery is known
 * by its signed delivery_id, else by the digest of its signed bytes (contract/webhook.ts
 * deliveryKey): no header is signed, so no header decides identity.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import type { DecodedBody } from '../contract/decode.js';
import { deliveryKey, readWebhookDelivery } from '../contract/webhook.js';
import { SidecarError } from '../errors.js';
import { bodyOf, rawBody, withoutBom } from './body.js';
import { RecentIds } from './recent.js';
import { admissionChecks, HOOKS_ROUTE, refuseOtherMethods, requireJson, type IngestRouteOptions } from './admission.js';
import { submitDecoded } from './submission.js';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

function signatureMatches(body: Buffer, header: string, secret: string): boolean {
  const presented = SIGNATURE.exec(header.trim())?.[1];
  if (presented === undefined) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(Buffer.from(presented, 'hex'), expected);
}

function verifySignature(secret: string): RequestHandler {
  return (request, _response, next) => {
    const header = request.get('x-hermes-signature-256');
    if (header === undefined) return next(new SidecarError('signature_missing'));
    next(signatureMatches(bodyOf(request), header, secret) ? undefined : new SidecarError('bad_signature'));
  };
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(withoutBom(body).toString('utf8')) as unknown;
  } catch {
    throw new SidecarError('invalid_json');
  }
}

function deliveryHandler(options: IngestRouteOptions, hooks: HooksRouteOptions, recent: RecentIds): RequestHandler {
  return async (request, response) => {
    const body = bodyOf(request);
    if (body.length === 0) throw new SidecarError('empty_body');
    const delivery = readWebhookDelivery(parseJson(body), options.wallClock(), options.strings);
    if (delivery === undefined) throw new SidecarError('invalid_body');
    const decoded: DecodedBody = { events: [delivery.event], errors: [], lines: 1 };
    const deliveryId = deliveryKey(delivery.deliveryId, body);
    const claim = recent.claim(deliveryId);
    if (claim === 'in_progress') throw new SidecarError('delivery_in_progress');
    if (claim === 'duplicate') {
      hooks.onDuplicate();
      response.status(202).json({ accepted: 0, rejected: 0, errors: [], duplicate: true });
      return;
    }
    try {
      await submitDecoded(options, decoded, response);
    } catch (error) {
      recent.release(deliveryId);
      throw error;
    }
    recent.commit(deliveryId);
  };
}

export interface HooksRouteOptions {
  readonly secret: string | undefined;
  readonly dedupeWindow: number;
  /** Largest delivery body, on the wire and after inflation (read before authentication). */
  readonly maxBodyBytes: number;
  /** Counts a delivery already applied (with the plugin's duplicate lines, by their owner). */
  readonly onDuplicate: () => void;
}

/** The /v1/hooks router; without a secret it answers 404 (unsigned deliveries are never trusted). */
export function hooksRouter(options: IngestRouteOptions, hooks: HooksRouteOptions): Router {
  const router = Router();
  const { secret } = hooks;
  if (secret === undefined) {
    router.post(HOOKS_ROUTE, (_request, _response, next) => next(new SidecarError('webhooks_disabled')));
    router.all(HOOKS_ROUTE, refuseOtherMethods());
    return router;
  }
  const recent = new RecentIds(hooks.dedupeWindow);
  router.post(
    HOOKS_ROUTE,
    ...admissionChecks(options),
    requireJson(),
    rawBody(options, hooks.maxBodyBytes),
    verifySignature(secret),
    deliveryHandler(options, hooks, recent),
  );
  router.all(HOOKS_ROUTE, refuseOtherMethods());
  return router;
}
