/**
 * Hermes outbound-webhook deliveries (docs/contract.md, "Wire format"): the shell-hook shape
 * `{hook_event_name, tool_name, tool_input, session_id, cwd, profile, extra:{…}, delivery_id, timestamp}`,
 * mapped into the same ObserverEvent as a plugin line of that hook. `tool_input` (arguments),
 * `cwd` and `profile` are never read.
 *
 * A delivery's identity (for replay detection) comes only from what the signature covers: its
 * `delivery_id`, else the digest of the signed bytes. No header is signed, so none is trusted.
 */
import { createHash } from 'node:crypto';
import { BoundCheck, type StringLimits } from './bounds.js';
import { readEventData, type ObserverEvent } from './events.js';
import { isRecord, record, str, type Fields } from './fields.js';
import { withErrorClass } from './errorClass.js';

export interface WebhookDelivery {
  readonly deliveryId: string | undefined;
  readonly event: ObserverEvent;
}

const MAX_NAME_LENGTH = 128;

/** The delivery's own timestamp in epoch seconds, when it sent a readable one. */
function deliveredAt(body: Fields): number | undefined {
  const timestamp = str(body, 'timestamp');
  const parsed = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isFinite(parsed) && parsed > 0 ? parsed / 1000 : undefined;
}

/**
 * The delivery id as a string whatever JSON type it came as: a number and its decimal string
 * are the same delivery. Objects, arrays, booleans and empty strings are no id.
 */
function normalizeDeliveryId(value: unknown): string | undefined {
  let text: string | undefined;
  if (typeof value === 'string') text = value.trim();
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  return text === undefined || text === '' ? undefined : text;
}

/**
 * The key a delivery is remembered by: its signed delivery_id, else the SHA-256 of the signed
 * bytes, so a replay of the same signed body is recognised whatever headers come with it (and
 * two deliveries without ids are one only when every signed byte is the same). The prefixes keep
 * an id from ever equalling a digest.
 */
export function deliveryKey(deliveryId: string | undefined, signedBody: Buffer): string {
  if (deliveryId !== undefined) return `id:${deliveryId}`;
  return `body:${createHash('sha256').update(signedBody).digest('hex')}`;
}

/** The delivery as an event, or undefined when it is not a webhook delivery at all. */
export function readWebhookDelivery(body: unknown, arrivedAt: number, limits?: StringLimits): WebhookDelivery | undefined {
  if (!isRecord(body)) return undefined;
  const name = str(body, 'hook_event_name');
  if (name === undefined || name === '' || name.length > MAX_NAME_LENGTH) return undefined;
  // `extra` holds every kwarg but the few lifted to the top level.
  const fields: Fields = {
    ...(record(body, 'extra') ?? {}),
    ...(body.tool_name === undefined || body.tool_name === null ? {} : { tool_name: body.tool_name }),
    ...(body.session_id === undefined || body.session_id === null ? {} : { session_id: body.session_id }),
  };
  // Read and bounded as a plugin line is (contract/shapes.ts readLine).
  const check = new BoundCheck(limits);
  const data = readEventData(name, withErrorClass(name, fields), check);
  const observedAt = check.observedAt(deliveredAt(body), arrivedAt);
  // An id past the byte limit is absent (counted): the delivery is then known by its digest.
  const deliveryId = check.id(normalizeDeliveryId(body.delivery_id), 'delivery_id');
  return {
    deliveryId,
    event: { name, source: 'webhook', observedAt, instance: undefined, seq: undefined, data, rejectedValues: check.take() },
  };
}
