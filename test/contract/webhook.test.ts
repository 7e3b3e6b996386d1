/**
 * Webhook deliveries: a Hermes webhook body becomes one event read and bounded as a plugin line
 * is, its delivery id (a number and its decimal string alike) or the digest of its signed bytes
 * is the key it is remembered by, and a body that is not a delivery reads as nothing.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deliveryKey, readWebhookDelivery } from '../../src/contract/webhook.js';

const ARRIVED = 1_800_000_000;

describe('readWebhookDelivery', () => {
  it('reads a delivery into a webhook event: extra kwargs, lifted fields, its own timestamp', () => {
    const delivery = readWebhookDelivery(
      {
        hook_event_name: 'post_tool_call',
        delivery_id: ' d-1 ',
        timestamp: '2027-01-15T08:00:00.500Z',
        tool_name: 'terminal',
        session_id: 's1',
        extra: { tool_call_id: 'c1', duration_ms: 1500, status: 'ok', args: { command: 'never read' } },
      },
      ARRIVED,
    );
    expect(delivery).toEqual({
      deliveryId: 'd-1',
      event: {
        name: 'post_tool_call',
        source: 'webhook',
        observedAt: Date.parse('2027-01-15T08:00:00.500Z') / 1000,
        instance: undefined,
        seq: undefined,
        data: { type: 'tool_finished', toolCallId: 'c1', tool: 'terminal', turnId: undefined, status: 'ok', errorType: undefined, durationSeconds: 1.5 },
        rejectedValues: [],
      },
    });
  });

  it('lets the lifted top-level fields win over the same names in extra', () => {
    const delivery = readWebhookDelivery({ hook_event_name: 'pre_tool_call', tool_name: 'top', extra: { tool_name: 'inner' } }, ARRIVED);
    expect(delivery?.event.data).toMatchObject({ tool: 'top' });
    const nulls = readWebhookDelivery({ hook_event_name: 'pre_tool_call', tool_name: null, extra: { tool_name: 'inner' } }, ARRIVED);
    expect(nulls?.event.data).toMatchObject({ tool: 'inner' });
  });

  it('takes the arrival time when the timestamp is missing or unreadable', () => {
    for (const timestamp of [undefined, 'yesterday', '1969-01-01T00:00:00Z', 42]) {
      expect(readWebhookDelivery({ hook_event_name: 'on_session_start', timestamp }, ARRIVED)?.event.observedAt).toBe(ARRIVED);
    }
  });

  it('reads a numeric delivery id as its decimal string, and ids of other types as none', () => {
    expect(readWebhookDelivery({ hook_event_name: 'x', delivery_id: 42 }, ARRIVED)?.deliveryId).toBe('42');
    for (const id of [{}, [], true, '', '   ', Number.NaN, null]) {
      expect(readWebhookDelivery({ hook_event_name: 'x', delivery_id: id }, ARRIVED)?.deliveryId).toBeUndefined();
    }
  });

  it('leaves a delivery id past the id byte limit absent and counted', () => {
    const delivery = readWebhookDelivery({ hook_event_name: 'x', delivery_id: 'd'.repeat(17) }, ARRIVED, { maxIdBytes: 16, maxLabelValueBytes: 64 });
    expect(delivery?.deliveryId).toBeUndefined();
    expect(delivery?.event.rejectedValues).toEqual(['delivery_id']);
  });

  it('lifts error.type to error_type for api_request_error only', () => {
    const failed = readWebhookDelivery({ hook_event_name: 'api_request_error', extra: { error: { type: 'RateLimitError', message: 'never read' } } }, ARRIVED);
    expect(failed?.event.data).toMatchObject({ type: 'api_attempt_failed', errorType: 'RateLimitError' });
  });

  it('reads a body without a usable hook name, or not an object, as no delivery', () => {
    for (const body of [null, [], 'post_tool_call', {}, { hook_event_name: '' }, { hook_event_name: 7 }, { hook_event_name: 'h'.repeat(129) }]) {
      expect(readWebhookDelivery(body, ARRIVED)).toBeUndefined();
    }
    expect(readWebhookDelivery({ hook_event_name: 'h'.repeat(128) }, ARRIVED)?.event.data).toEqual({ type: 'ignored' });
  });
});

describe('deliveryKey', () => {
  it('is the delivery id when signed, else the digest of the signed bytes, never the one for the other', () => {
    const body = Buffer.from('{"hook_event_name":"x"}');
    expect(deliveryKey('d-1', body)).toBe('id:d-1');
    expect(deliveryKey(undefined, body)).toBe(`body:${createHash('sha256').update(body).digest('hex')}`);
    const digest = createHash('sha256').update(body).digest('hex');
    expect(deliveryKey(digest, body)).not.toBe(deliveryKey(undefined, body));
    expect(deliveryKey(undefined, Buffer.from('{"hook_event_name":"y"}'))).not.toBe(deliveryKey(undefined, body));
  });
});
