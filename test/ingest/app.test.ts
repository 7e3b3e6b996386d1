/** The ingest HTTP contract (docs/contract.md, "Wire format"): one test per status code, and the counters each moves. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import { series } from '../support/exposition.js';
import { listenOnFreePort, rawPost } from '../support/http.js';
import { startTestSidecar } from '../support/sidecar.js';
import { scratchDir } from '../support/scratch.js';

const toolCall = (id: string) => ({ event: 'post_tool_call', tool_name: 'terminal', tool_call_id: id, status: 'ok', duration_ms: 5 });
const ndjson = (lines: unknown[]) => lines.map((line) => JSON.stringify(line)).join('\n');

/** Polls a condition that a request in flight will make true. */
async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; !condition(); attempt += 1) {
    if (attempt > 500) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function listening(app: Parameters<typeof listenOnFreePort>[0]): Promise<Server> {
  const server = await listenOnFreePort(app);
  servers.push(server);
  return server;
}

describe('202 Accepted', () => {
  it('applies the valid lines and reports the invalid ones by index', async () => {
    const harness = startTestSidecar();
    const body = [JSON.stringify(toolCall('a')), '{not json', JSON.stringify({ no_event: true }), '', JSON.stringify(toolCall('b')), '[1]'].join('\n');
    const response = await harness.ingest.post('/v1/events').set('Content-Type', 'application/x-ndjson').send(body);
    expect(response.status).toBe(202);
    expect(response.body).toEqual({
      accepted: 2,
      rejected: 3,
      errors: [
        { index: 1, reason: 'invalid_json' },
        { index: 2, reason: 'unknown_shape' },
        { index: 5, reason: 'invalid_event' },
      ],
    });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'invalid_json' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'unknown_shape' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'invalid_event' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_ingest_requests_total', { route: '/v1/events', code: '202' }))).toBe(1);
    expect(samples.get('hermes_sidecar_ingest_batch_events_sum')).toBe(5);
  });

  it('accepts application/json as an array or as one object', async () => {
    const harness = startTestSidecar();
    const array = await harness.ingest.post('/v1/events').set('Content-Type', 'application/json; charset=utf-8').send(JSON.stringify([toolCall('a'), toolCall('b')]));
    expect(array.status).toBe(202);
    expect(array.body).toEqual({ accepted: 2, rejected: 0, errors: [] });
    const single = await harness.ingest.post('/v1/events').set('Content-Type', 'application/json').send(JSON.stringify(toolCall('c')));
    expect(single.body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    expect((await harness.samples()).get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(3);
  });

  it('inflates a gzip body', async () => {
    const harness = startTestSidecar();
    const server = await listening(harness.sidecar.ingestApp);
    const response = await rawPost(server, '/v1/events', gzipSync(ndjson([toolCall('a'), toolCall('b'), toolCall('c')])), {
      'Content-Type': 'application/x-ndjson',
      'Content-Encoding': 'gzip',
    });
    expect(response.status).toBe(202);
    expect(JSON.parse(response.body)).toEqual({ accepted: 3, rejected: 0, errors: [] });
    expect((await harness.samples()).get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(3);
  });

  it('lists at most 100 line errors but counts them all', async () => {
    const harness = startTestSidecar();
    const response = await harness.postNdjson([toolCall('ok'), ...Array.from({ length: 150 }, () => ({ nothing: 1 }))]);
    expect(response.body.accepted).toBe(1);
    expect(response.body.rejected).toBe(150);
    expect(response.body.errors).toHaveLength(100);
    expect((await harness.samples()).get(series('hermes_sidecar_events_rejected_total', { reason: 'unknown_shape' }))).toBe(150);
  });
});

describe('400 Bad Request', () => {
  it.each([
    ['application/json', '{"event": "x",', 'invalid_json'],
    ['application/x-ndjson', '{oops\n[also bad', 'invalid_json'],
    ['application/x-ndjson', '\n\n  \n', 'empty_body'],
    ['application/json', '', 'empty_body'],
    ['application/json', '[]', 'empty_body'],
    ['application/json', '"just a string"', 'invalid_body'],
  ])('%s %j → %s, nothing applied', async (type, body, code) => {
    const harness = startTestSidecar();
    const response = await harness.ingest.post('/v1/events').set('Content-Type', type).send(body);
    expect(response.status).toBe(400);
    expect(response.body.error).toBe(code);
    expect(response.headers['retry-after']).toBeUndefined();
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_ingest_requests_total', { route: '/v1/events', code: '400' }))).toBe(1);
  });

  it('answers 400 for a corrupt gzip body', async () => {
    const harness = startTestSidecar();
    const server = await listening(harness.sidecar.ingestApp);
    const response = await rawPost(server, '/v1/events', Buffer.from('definitely not gzip'), {
      'Content-Type': 'application/x-ndjson',
      'Content-Encoding': 'gzip',
    });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toBe('invalid_encoding');
  });
});

describe('401 Unauthorized', () => {
  const tokenFile = () => {
    const dir = scratchDir('sidecar-token-');
    const file = join(dir, 'token');
    writeFileSync(file, 's3cret-token\n');
    return file;
  };

  it('requires the bearer token when one is configured', async () => {
    const harness = startTestSidecar({ 'ingest.token-file': tokenFile() });
    const body = ndjson([toolCall('a')]);
    const none = await harness.ingest.post('/v1/events').set('Content-Type', 'application/x-ndjson').send(body);
    const wrong = await harness.ingest.post('/v1/events').set({ 'Content-Type': 'application/x-ndjson', Authorization: 'Bearer s3cret-tokeX' }).send(body);
    const short = await harness.ingest.post('/v1/events').set({ 'Content-Type': 'application/x-ndjson', Authorization: 'Bearer s' }).send(body);
    const basic = await harness.ingest.post('/v1/events').set({ 'Content-Type': 'application/x-ndjson', Authorization: 'Basic czNjcmV0LXRva2Vu' }).send(body);
    for (const response of [none, wrong, short, basic]) {
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'unauthorized', message: 'a valid bearer token is required' });
    }
    const right = await harness.ingest.post('/v1/events').set({ 'Content-Type': 'application/x-ndjson', Authorization: 'Bearer s3cret-token' }).send(body);
    expect(right.status).toBe(202);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'unauthorized' }))).toBe(4);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(1);
  });
});

describe('413 Content Too Large', () => {
  it('refuses a plain body over the limit', async () => {
    const harness = startTestSidecar({ 'ingest.max-body-bytes': '1024' });
    const response = await harness.postNdjson(Array.from({ length: 40 }, (_, index) => toolCall(`id-${index}`)));
    expect(response.status).toBe(413);
    expect(response.body.error).toBe('too_large');
    expect((await harness.samples()).get(series('hermes_sidecar_events_rejected_total', { reason: 'too_large' }))).toBe(1);
  });

  it('refuses a gzip bomb by its inflated size, without inflating it all', async () => {
    const harness = startTestSidecar({ 'ingest.max-body-bytes': String(1024 * 1024) });
    const server = await listening(harness.sidecar.ingestApp);
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(100 * 1024);
    const response = await rawPost(server, '/v1/events', bomb, { 'Content-Type': 'application/x-ndjson', 'Content-Encoding': 'gzip' });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).error).toBe('too_large');
  });

  it('refuses more events than allowed per request', async () => {
    const harness = startTestSidecar({ 'ingest.max-events-per-request': '3' });
    const response = await harness.postNdjson([toolCall('a'), toolCall('b'), toolCall('c'), toolCall('d')]);
    expect(response.status).toBe(413);
    expect(response.body.error).toBe('too_many_events');
    expect((await harness.samples()).get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBeUndefined();
  });
});

describe('415 Unsupported Media Type', () => {
  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['']])('refuses Content-Type %j', async (type) => {
    const harness = startTestSidecar();
    const response = await harness.ingest.post('/v1/events').set('Content-Type', type).send(ndjson([toolCall('a')]));
    expect(response.status).toBe(415);
    expect(response.body.error).toBe('unsupported_media_type');
    expect((await harness.samples()).get(series('hermes_sidecar_events_rejected_total', { reason: 'unsupported_media_type' }))).toBe(1);
  });

  it('refuses a Content-Encoding other than gzip', async () => {
    const harness = startTestSidecar();
    const server = await listening(harness.sidecar.ingestApp);
    const response = await rawPost(server, '/v1/events', Buffer.from(ndjson([toolCall('a')])), {
      'Content-Type': 'application/x-ndjson',
      'Content-Encoding': 'x-squeeze',
    });
    expect(response.status).toBe(415);
    expect(JSON.parse(response.body).error).toBe('unsupported_encoding');
  });
});

describe('405 Method Not Allowed', () => {
  it.each([['/v1/events'], ['/v1/hooks']])('answers GET %s (the URL the demo prints) with 405 and Allow: POST', async (route) => {
    const harness = startTestSidecar();
    const response = await harness.ingest.get(route);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(response.body.error).toBe('method_not_allowed');
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_ingest_requests_total', { route, code: '405' }))).toBe(1);
  });

  it('still answers 404 to a path that is not an ingest route', async () => {
    const harness = startTestSidecar();
    expect((await harness.ingest.get('/v1/nothing')).status).toBe(404);
  });
});

describe('429 Too Many Requests', () => {
  it('refuses with Retry-After when the queue is full, and counts the refused events', async () => {
    const harness = startTestSidecar({ 'ingest.queue-capacity': '2', 'ingest.retry-after-seconds': '7' });
    harness.sidecar.queue.pause();
    // A 202 comes only once its batch is applied: these two wait in the paused queue.
    const waiting = [harness.postNdjson([toolCall('a')]).then((r) => r), harness.postNdjson([toolCall('b')]).then((r) => r)];
    await until(() => harness.sidecar.queue.depth === 2);
    const refused = await harness.postNdjson([toolCall('c'), toolCall('d'), toolCall('e')]);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('7');
    expect(refused.body.error).toBe('queue_full');
    const depth = await harness.web.get('/metrics');
    expect(depth.text).toContain('hermes_sidecar_queue_depth 2\n');
    harness.sidecar.queue.resume();
    expect((await Promise.all(waiting)).map((response) => response.status)).toEqual([202, 202]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_events_dropped_total', { reason: 'queue_full' }))).toBe(3);
    expect(samples.get(series('hermes_sidecar_ingest_requests_total', { route: '/v1/events', code: '429' }))).toBe(1);
  });
});

describe('503 Service Unavailable', () => {
  it('refuses with Retry-After once shutdown began, after applying everything accepted', async () => {
    const harness = startTestSidecar();
    harness.sidecar.queue.pause();
    const accepted = harness.postNdjson([toolCall('a'), toolCall('b')]).then((r) => r);
    await until(() => harness.sidecar.queue.depth === 1);
    await harness.sidecar.drained();
    expect((await accepted).status).toBe(202);
    const refused = await harness.postNdjson([toolCall('c')]);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect((await harness.web.get('/-/ready')).status).toBe(503);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(2);
    // Refused before its body was read: the sender retries it, so no event is counted as dropped.
    expect(samples.get(series('hermes_sidecar_events_dropped_total', { reason: 'shutdown' }))).toBe(0);
    expect(samples.get(series('hermes_sidecar_ingest_requests_total', { route: '/v1/events', code: '503' }))).toBe(1);
  });
});

describe('404 and headers', () => {
  it('answers unknown routes with 404 JSON and never sends X-Powered-By', async () => {
    const harness = startTestSidecar();
    for (const path of ['/', '/debug/pprof', '/-/quit', '/v1/events/extra']) {
      const response = await harness.ingest.get(path);
      expect(response.status).toBe(404);
      expect(response.headers['x-powered-by']).toBeUndefined();
      expect(response.body).toEqual({ error: 'not_found', message: 'not found' });
    }
    // the ingest route itself exists: a GET there is the wrong method (405 above), not a missing page
    expect((await harness.ingest.get('/v1/events')).status).toBe(405);
  });
});
