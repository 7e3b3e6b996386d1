/** POST /v1/hooks: Hermes outbound webhooks, signed with HMAC-SHA256. */
import { createHmac, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { samplesOf, series } from '../support/exposition.js';
import { readJsonl, startTestSidecar, type TestSidecar } from '../support/sidecar.js';
import { scratchDir } from '../support/scratch.js';

const SECRET = 'webhook-shared-secret';

function secretFile(): string {
  const file = join(scratchDir('sidecar-hook-'), 'secret');
  writeFileSync(file, `${SECRET}\n`);
  return file;
}

const sign = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** A flat kwargs fixture line as Hermes' outbound webhook delivers it. */
function asDelivery(line: Record<string, unknown>): Record<string, unknown> {
  const { event, observed_at: observedAt, tool_name: toolName, args, session_id: sessionId, ...extra } = line;
  return {
    hook_event_name: event,
    profile: 'default',
    tool_name: toolName ?? null,
    tool_input: args ?? null,
    session_id: sessionId ?? null,
    cwd: '/home/user/project',
    extra,
    delivery_id: randomUUID(),
    timestamp: new Date((observedAt as number) * 1000).toISOString(),
  };
}

async function deliver(harness: TestSidecar, delivery: object, signature?: string) {
  const body = JSON.stringify(delivery);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Hermes-Event': String((delivery as { hook_event_name?: string }).hook_event_name) };
  if (signature !== null) headers['X-Hermes-Signature-256'] = signature ?? sign(body);
  return harness.ingest.post('/v1/hooks').set(headers).send(body);
}

const toolDelivery = () => asDelivery({ event: 'post_tool_call', observed_at: 1000, tool_name: 'terminal', args: { command: 'ls' }, status: 'ok', duration_ms: 20, tool_call_id: 'c1' });

describe('signature', () => {
  it('accepts a valid signature and counts the event as source="webhook"', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile() });
    const response = await deliver(harness, toolDelivery());
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_events_received_total', { source: 'webhook', event: 'post_tool_call' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_ingest_requests_total', { route: '/v1/hooks', code: '202' }))).toBe(1);
  });

  it('answers 403 to a wrong signature and 401 to a missing one, applying nothing', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile() });
    const delivery = toolDelivery();
    const wrongSecret = await deliver(harness, delivery, sign(JSON.stringify(delivery), 'not-the-secret'));
    const malformed = await deliver(harness, delivery, 'sha1=abcdef');
    const tampered = await deliver(harness, { ...delivery, extra: { status: 'error' } }, sign(JSON.stringify(delivery)));
    const missing = await deliver(harness, delivery, null as unknown as string);
    expect([wrongSecret.status, malformed.status, tampered.status, missing.status]).toEqual([403, 403, 403, 401]);
    expect(wrongSecret.body.error).toBe('bad_signature');
    expect(missing.body.error).toBe('signature_missing');
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBeUndefined();
    // a missing header is its own reason: a sender without the secret configured, not a forger
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'bad_signature' }))).toBe(3);
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'missing_signature' }))).toBe(1);
  });

  it('is disabled (404) when no secret is configured', async () => {
    const harness = startTestSidecar();
    const response = await deliver(harness, toolDelivery());
    expect(response.status).toBe(404);
    expect(response.body.error).toBe('webhooks_disabled');
  });

  it('answers 400 to a signed body that is not a delivery, 415 to a non-JSON content type', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile() });
    const notJson = 'not json';
    const bad = await harness.ingest.post('/v1/hooks').set({ 'Content-Type': 'application/json', 'X-Hermes-Signature-256': sign(notJson) }).send(notJson);
    expect(bad.status).toBe(400);
    const noName = JSON.stringify({ extra: {} });
    const shape = await harness.ingest.post('/v1/hooks').set({ 'Content-Type': 'application/json', 'X-Hermes-Signature-256': sign(noName) }).send(noName);
    expect(shape.status).toBe(400);
    const text = await harness.ingest.post('/v1/hooks').set({ 'Content-Type': 'text/plain', 'X-Hermes-Signature-256': sign('x') }).send('x');
    expect(text.status).toBe(415);
    // the 415 offers only what this route reads: NDJSON is refused here too
    expect(text.body).toEqual({ error: 'unsupported_media_type_json', message: 'use Content-Type application/json' });
    const ndjsonBody = await harness.ingest.post('/v1/hooks').set({ 'Content-Type': 'application/x-ndjson', 'X-Hermes-Signature-256': sign('x') }).send('x');
    expect(ndjsonBody.status).toBe(415);
    expect(ndjsonBody.body.message).not.toContain('ndjson');
  });
});

describe('replays', () => {
  it('applies a replayed delivery_id once and counts the duplicate', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile(), 'webhook.dedupe-window': '2' });
    const first = toolDelivery();
    expect((await deliver(harness, first)).body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    expect((await deliver(harness, first)).body).toEqual({ accepted: 0, rejected: 0, errors: [], duplicate: true });
    // the window holds two ids: after two newer deliveries the first is forgotten
    await deliver(harness, toolDelivery());
    await deliver(harness, toolDelivery());
    expect((await deliver(harness, first)).body.accepted).toBe(1);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(4);
    expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(1);
  });
});

describe('delivery identity comes only from signed content', () => {
  it('one delivery without a delivery_id, replayed six times with different X-Hermes-Delivery headers, is applied once', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile() });
    const { delivery_id: _id, ...unidentified } = toolDelivery();
    const body = JSON.stringify(unidentified);
    const answers = [];
    for (let copy = 0; copy < 6; copy += 1) {
      const response = await harness.ingest
        .post('/v1/hooks')
        .set({ 'Content-Type': 'application/json', 'X-Hermes-Signature-256': sign(body), 'X-Hermes-Delivery': `forged-${copy}` })
        .send(body);
      answers.push([response.status, response.body.accepted]);
    }
    expect(answers).toEqual([[202, 1], [202, 0], [202, 0], [202, 0], [202, 0], [202, 0]]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(1);
    expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(5);
  });

  it('an unsigned header never merges two signed deliveries: distinct delivery_ids sent with one X-Hermes-Delivery are both applied', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile() });
    for (const delivery of [toolDelivery(), toolDelivery()]) {
      const body = JSON.stringify(delivery);
      const response = await harness.ingest
        .post('/v1/hooks')
        .set({ 'Content-Type': 'application/json', 'X-Hermes-Signature-256': sign(body), 'X-Hermes-Delivery': 'same' })
        .send(body);
      expect(response.body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    }
    expect((await harness.samples()).get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(2);
  });

  it('a delivery_id past --ingest.max-id-bytes counts as absent (counted), and the delivery is known by its signed bytes', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile() });
    const delivery = { ...toolDelivery(), delivery_id: 'd'.repeat(64 * 1024 - 1024) };
    expect((await deliver(harness, delivery)).body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    expect((await deliver(harness, delivery)).body).toMatchObject({ duplicate: true });
    const samples = await harness.samples();
    // Counted when the delivery is applied: the replay is not.
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'delivery_id' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(1);
  });
});

describe('same logical events as the plugin path', () => {
  it('gives identical agent metrics for the fixture conversation', async () => {
    const prefixes = ['hermes_api_', 'hermes_tokens_', 'hermes_turn', 'hermes_tool_', 'hermes_approval', 'hermes_session', 'hermes_subagent', 'hermes_agent_', 'hermes_memory_'];
    const lines = readJsonl('conversation.jsonl');
    const plugin = startTestSidecar();
    await plugin.postNdjson(lines);
    const webhook = startTestSidecar({ 'webhook.secret-file': secretFile() });
    for (const line of lines) expect((await deliver(webhook, asDelivery(line))).status).toBe(202);
    const expected = Object.fromEntries(samplesOf(new Map(await plugin.samples()), ...prefixes));
    expect(Object.keys(expected).length).toBeGreaterThan(100);
    expect(Object.fromEntries(samplesOf(new Map(await webhook.samples()), ...prefixes))).toEqual(expected);
  });
});

describe('delivery ids are recorded once applied', () => {
  it('a delivery refused with 503 is applied when Hermes retries it; a replay after that is a duplicate', async () => {
    let live = 0;
    const harness = startTestSidecar(
      { 'webhook.secret-file': secretFile(), 'memory.limit-bytes': '100Mi', 'ingest.max-inflight-bytes': '256Mi' },
      { memoryProbe: () => ({ rssBytes: live, heapUsedBytes: live, externalBytes: 0 }), collectGarbage: undefined },
    );
    const delivery = toolDelivery();
    // Bodies in flight hold the memory over the limit: the guard refuses until they drain.
    expect(harness.sidecar.inflight.tryReserve(150 * 1024 * 1024)).toBe(true);
    live = 200 * 1024 * 1024;
    expect((await deliver(harness, delivery)).status).toBe(503);
    harness.sidecar.inflight.release(150 * 1024 * 1024);
    live = 0;
    harness.clock.advance(1);
    const retried = await deliver(harness, delivery);
    expect(retried.status).toBe(202);
    expect(retried.body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    const replay = await deliver(harness, delivery);
    expect(replay.body).toMatchObject({ duplicate: true });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(1);
    expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(1);
  });

  it('a delivery refused because the queue is full (429) is applied on retry', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile(), 'ingest.queue-capacity': '1' });
    harness.sidecar.queue.pause();
    const blocker = harness.postNdjson([{ event: 'post_tool_call', tool_name: 'other', status: 'ok' }]).then((answer) => answer.status);
    for (let attempt = 0; harness.sidecar.queue.depth < 1 && attempt < 400; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    const delivery = toolDelivery();
    expect((await deliver(harness, delivery)).status).toBe(429);
    harness.sidecar.queue.resume();
    expect(await blocker).toBe(202);
    expect((await deliver(harness, delivery)).body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    expect((await harness.samples()).get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(1);
  });

  it('normalises delivery ids: the number 42 and the string "42" are one delivery; an object is no id, so the signed bytes identify the delivery', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile() });
    expect((await deliver(harness, { ...toolDelivery(), delivery_id: 42 })).body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    expect((await deliver(harness, { ...toolDelivery(), delivery_id: '42' })).body).toMatchObject({ duplicate: true });
    const noId = { ...toolDelivery(), delivery_id: { id: 1 } };
    expect((await deliver(harness, noId)).body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    expect((await deliver(harness, noId)).body).toMatchObject({ duplicate: true });
    // Another delivery without an id differs in its signed bytes (here its timestamp): applied.
    expect((await deliver(harness, { ...noId, timestamp: '2027-01-01T00:00:00.000Z' })).body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(3);
    expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(2);
  });

  it('a second copy arriving while the first is being applied is told to retry (429), not acknowledged', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': secretFile() });
    harness.sidecar.queue.pause();
    const delivery = toolDelivery();
    const first = deliver(harness, delivery).then((answer) => answer.status);
    for (let attempt = 0; harness.sidecar.queue.depth < 1 && attempt < 400; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await deliver(harness, delivery);
    expect(second.status).toBe(429);
    expect(second.body.error).toBe('delivery_in_progress');
    harness.sidecar.queue.resume();
    expect(await first).toBe(202);
  });
});
