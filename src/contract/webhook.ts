/**
 * Hermes outbound-webhook deliveries (docs/contract.md, "Wire format"): the shell-hook shape
 * `{hook_event_name, tool_name, tool_input, session_id, cwd, profile, extra:{…}, delivery_id, timestamp}`,
 * mapped into the same ObserverEvent as a plugin line of that hook. `tool_input` (arguments),
 * `cwd` and `profile` are never read.
 */
import { readEventData, type ObserverEvent } from './events.js';
import { isRecord, record, str, type Fields } from './fields.js';
import { withErrorClass } from './errorClass.js';

export interface WebhookDelivery {
  readonly deliveryId: string | undefined;
  readonly event: ObserverEvent;
}

const MAX_NAME_LENGTH = 128;

function deliveredAt(body: Fields, arrivedAt: number): number {
  const timestamp = str(body, 'timestamp');
  const parsed = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isFinite(parsed) && parsed > 0 ? parsed / 1000 : arrivedAt;
}

/** The delivery as an event, or undefined when it is not a webhook delivery at all. */
export function readWebhookDelivery(body: unknown, arrivedAt: number): WebhookDelivery | undefined {
  if (!isRecord(body)) return undefined;
  const name = str(body, 'hook_event_name');
  if (name === undefined || name === '' || name.length > MAX_NAME_LENGTH) return undefined;
  // `extra` holds every kwarg but the few lifted to the top level.
  const fields: Fields = {
    ...(record(body, 'extra') ?? {}),
    ...(body.tool_name === undefined || body.tool_name === null ? {} : { tool_name: body.tool_name }),
    ...(body.session_id === undefined || body.session_id === null ? {} : { session_id: body.session_id }),
  };

  return {
    deliveryId: str(body, 'delivery_id'),
    event: { name, source: 'webhook', observedAt: deliveredAt(body, arrivedAt), data: readEventData(name, withErrorClass(name, fields)) },
  };
}
