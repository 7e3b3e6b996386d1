/**
 * POST /v1/events reads NDJSON, JSON and the plugin's compact body, and says so on every answer
 * (Accept-Post), which is how the bridge plugin learns it may send compact bodies.
 */
import { describe, expect, it } from 'vitest';
import { COMPACT_MEDIA_TYPE } from '../../src/contract/compact.js';
import { series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';

const SCHEMA = { events: [['post_tool_call', 'tool_call_id', 'tool_name', 'turn_id', 'status', 'error_type', 'duration_ms']], usage: [], usage_flags: [] };
const compactBody = (frame: Record<string, unknown> = {}) =>
  JSON.stringify({ v: 1, instance: '0123456789abcdef0123456789abcdef', schema: SCHEMA, seq: 1, events: [[0, 1789862412482000, 'toolu_1', 'terminal', 't_1', 'ok', null, 3412], [0, 1789862412483000, 'toolu_2', 'terminal', 't_1', 'ok']], ...frame });

describe('POST /v1/events', () => {
  it('advertises the compact body on every answer, a refusal included', async () => {
    const harness = startTestSidecar();
    const accepted = await harness.ingest.post('/v1/events').set('Content-Type', 'application/x-ndjson').send(JSON.stringify({ event: 'post_tool_call', tool_name: 'terminal' }));
    const refused = await harness.ingest.post('/v1/events').set('Content-Type', 'text/plain').send('x');
    expect(accepted.status).toBe(202);
    expect(refused.status).toBe(415);
    for (const answer of [accepted, refused]) expect(answer.headers['accept-post']).toBe(`application/x-ndjson, application/json, ${COMPACT_MEDIA_TYPE}`);
  });

  it('applies a compact body: each row one plugin event, numbered from seq', async () => {
    const harness = startTestSidecar();
    const response = await harness.ingest.post('/v1/events').set('Content-Type', COMPACT_MEDIA_TYPE).send(compactBody());
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ accepted: 2, rejected: 0, errors: [] });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_events_received_total', { source: 'plugin', event: 'post_tool_call' }))).toBe(2);
    // The same rows again are the same (instance, seq): duplicates, not applied twice.
    await harness.ingest.post('/v1/events').set('Content-Type', COMPACT_MEDIA_TYPE).send(compactBody());
    expect((await harness.samples()).get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(2);
  });

  it('refuses a malformed compact body with 400 invalid_compact_body and a version it does not read with 415, both counted', async () => {
    const harness = startTestSidecar();
    const malformed = await harness.ingest.post('/v1/events').set('Content-Type', COMPACT_MEDIA_TYPE).send(compactBody({ seq: 'one' }));
    const newer = await harness.ingest.post('/v1/events').set('Content-Type', COMPACT_MEDIA_TYPE).send(compactBody({ v: 2 }));
    expect([malformed.status, malformed.body.error]).toEqual([400, 'invalid_compact_body']);
    expect([newer.status, newer.body.error]).toEqual([415, 'unsupported_compact_version']);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'invalid_event' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'unsupported_media_type' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBeUndefined();
  });
});
