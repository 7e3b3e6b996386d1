/**
 * Reading bodies before anyone is trusted: limits counted while the
 * body streams, on the wire and after inflation; an in-flight budget per listener; gzip only;
 * a UTF-8 BOM accepted. Real HTTP, bodies that never finish.
 */
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { brotliCompressSync, deflateSync, gzipSync, type Gunzip } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { INFLATE_OVERHEAD_BYTES } from '../../src/ingest/body.js';
import { series } from '../support/exposition.js';
import { listenOnFreePort, openPost, rawPost, type OpenPost } from '../support/http.js';
import { startTestSidecar } from '../support/sidecar.js';
import { scratchDir } from '../support/scratch.js';

/** Sees every gunzip stream the sidecar opens (the real zlib, observed), for the bomb test below. */
const gunzips = vi.hoisted(() => ({ opened: undefined as ((stream: Gunzip) => void) | undefined }));
vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof import('node:zlib')>();
  const createGunzip: typeof zlib.createGunzip = (options) => {
    const stream = zlib.createGunzip(options);
    gunzips.opened?.(stream);
    return stream;
  };
  return { ...zlib, createGunzip, default: { ...zlib, createGunzip } };
});

const SECRET = 'webhook-shared-secret';
const TOKEN = 'ingest-token';
const KiB = 1024;

function fileWith(content: string): string {
  const file = join(scratchDir('sidecar-body-'), 'secret');
  writeFileSync(file, `${content}\n`);
  return file;
}

const servers: Server[] = [];
const attackers: OpenPost[] = [];
afterEach(() => {
  for (const attacker of attackers.splice(0)) attacker.destroy();
  for (const server of servers.splice(0)) server.close();
});

function edgeSidecar(options: Record<string, string> = {}) {
  return startTestSidecar({ 'webhook.secret-file': fileWith(SECRET), 'ingest.token-file': fileWith(TOKEN), ...options });
}

async function listening(harness: ReturnType<typeof edgeSidecar>): Promise<Server> {
  const server = await listenOnFreePort(harness.sidecar.ingestApp);
  servers.push(server);
  return server;
}

function attack(server: Server, path: string, headers: Record<string, string>, chunk: Buffer): OpenPost {
  const post = openPost(server, path, headers);
  attackers.push(post);
  post.write(chunk);
  return post;
}

const toolLine = JSON.stringify({ event: 'post_tool_call', tool_name: 'terminal', status: 'ok', duration_ms: 5 });
const authorized = { 'Content-Type': 'application/x-ndjson', Authorization: `Bearer ${TOKEN}` };
const sign = (body: Buffer) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; !condition(); attempt += 1) {
    if (attempt > 400) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('/v1/hooks before the signature can be checked', () => {
  it('refuses a gzip body inflating past the webhook limit while it streams: 413 before the sender finishes', async () => {
    const harness = edgeSidecar({ 'webhook.max-body-bytes': String(64 * KiB) });
    const server = await listening(harness);
    // 16 MiB of zeros gzip to ~16 KiB: a decompression bomb, and the sender never ends it.
    const bomb = gzipSync(Buffer.alloc(16 * 1024 * KiB));
    const post = attack(server, '/v1/hooks', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, bomb);
    const answer = await post.response;
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'too_large' });
    expect(answer.headers.connection).toBe('close');
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'too_large' }))).toBe(1);
    expect(samples.get('hermes_sidecar_ingest_inflight_bytes')).toBe(0);
  });

  it('refuses a delivery larger than the limit on the wire (uncompressed) without reading it', async () => {
    const harness = edgeSidecar({ 'webhook.max-body-bytes': String(4 * KiB) });
    const server = await listening(harness);
    const post = attack(server, '/v1/hooks', { 'Content-Type': 'application/json' }, Buffer.alloc(8 * KiB, 0x20));
    expect((await post.response).status).toBe(413);
  });

  it('accepts a signed gzip delivery under the limit', async () => {
    const harness = edgeSidecar();
    const server = await listening(harness);
    const delivery = Buffer.from(JSON.stringify({ hook_event_name: 'post_tool_call', tool_name: 'terminal', extra: { status: 'ok' }, delivery_id: 'd1' }));
    const answer = await rawPost(server, '/v1/hooks', gzipSync(delivery), {
      'Content-Type': 'application/json',
      'Content-Encoding': 'gzip',
      'X-Hermes-Signature-256': sign(delivery),
    });
    expect(answer.status).toBe(202);
  });
});

describe('the in-flight budget of the listener', () => {
  it('refuses bodies past it with 503 + Retry-After (counted), serves again once the senders are gone', async () => {
    const harness = edgeSidecar({ 'ingest.max-inflight-bytes': String(256 * KiB), 'webhook.max-body-bytes': String(64 * KiB), 'ingest.retry-after-seconds': '2' });
    const server = await listening(harness);
    const held = Array.from({ length: 4 }, () =>
      attack(server, '/v1/hooks', { 'Content-Type': 'application/json' }, Buffer.alloc(60 * KiB, 0x20)),
    );
    await until(() => inflight(harness) >= 240 * KiB);
    const fifth = attack(server, '/v1/hooks', { 'Content-Type': 'application/json' }, Buffer.alloc(60 * KiB, 0x20));
    const refused = await fifth.response;
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('2');
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'inflight_limit' });

    // An authenticated sender is refused too while the budget is taken (and told when to retry)…
    const big = Buffer.from(Array.from({ length: 400 }, () => toolLine).join('\n'));
    const busy = await rawPost(server, '/v1/events', big, authorized);
    expect(busy.status).toBe(503);
    // …and served as soon as the attackers are gone.
    for (const post of held) post.destroy();
    await until(() => inflight(harness) === 0);
    expect((await rawPost(server, '/v1/events', big, authorized)).status).toBe(202);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'inflight_limit' }))).toBe(2);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(400);
  });

  it('refuses a real gzip bomb (256 MiB of zeros) at the body limit, and zlib never produces a byte the budget has not reserved', async () => {
    const MiB = 1024 * KiB;
    const harness = edgeSidecar({ 'ingest.max-body-bytes': String(4 * MiB), 'ingest.max-inflight-bytes': String(8 * MiB) });
    const server = await listening(harness);
    const budget = harness.sidecar.inflight;
    // 256 gzip members of 1 MiB of zeros each (one gzip stream to any reader): 256 MiB in ~260 KiB.
    const bomb = Buffer.concat(Array.from({ length: 256 }, () => gzipSync(Buffer.alloc(MiB), { level: 9 })));
    expect(bomb.length).toBeLessThan(300 * KiB);
    let produced = 0;
    let unreserved = 0;
    let peak = 0;
    // Runs before any reader of the stream sees the chunk: the chunk exists, so it must be reserved already.
    gunzips.opened = (gunzip) =>
      gunzip.on('data', (chunk: Buffer) => {
        produced += chunk.length;
        unreserved = Math.max(unreserved, INFLATE_OVERHEAD_BYTES + produced - budget.bytes);
        peak = Math.max(peak, budget.bytes);
      });
    try {
      const answer = await rawPost(server, '/v1/events', bomb, { ...authorized, 'Content-Encoding': 'gzip' });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'too_large' });
    } finally {
      gunzips.opened = undefined;
    }
    expect(unreserved).toBe(0);
    expect(peak).toBeLessThanOrEqual(8 * MiB);
    // Inflation stopped within one step (1 KiB of input, at most ~1 MiB out) past the limit.
    expect(produced).toBeGreaterThan(4 * MiB);
    expect(produced).toBeLessThanOrEqual(5 * MiB + 64 * KiB);
    await until(() => inflight(harness) === 0);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'too_large' }))).toBe(1);
  });

  it('refuses a body that does not arrive within the body timeout (408) and frees its bytes', async () => {
    const harness = edgeSidecar({ 'ingest.body-timeout': '0.3' });
    const server = await listening(harness);
    const slow = attack(server, '/v1/events', authorized, Buffer.from(toolLine));
    const answer = await slow.response;
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'body_timeout' });
    await until(() => inflight(harness) === 0);
  });
});

function inflight(harness: ReturnType<typeof edgeSidecar>): number {
  return harness.sidecar.inflight.bytes;
}

describe('/v1/events checks the token before reading a body', () => {
  it('answers 401 to a wrong token while the body is still coming', async () => {
    const harness = edgeSidecar();
    const server = await listening(harness);
    const post = attack(server, '/v1/events', { 'Content-Type': 'application/x-ndjson', Authorization: 'Bearer wrong' }, gzipSync(Buffer.alloc(KiB)));
    expect((await post.response).status).toBe(401);
    expect(inflight(harness)).toBe(0);
  });
});

describe('encodings and the byte order mark', () => {
  it.each([
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
    ['gzip, deflate', gzipSync],
  ] as const)('answers 415 to Content-Encoding %s (only gzip is accepted)', async (encoding, compress) => {
    const harness = edgeSidecar();
    const server = await listening(harness);
    const answer = await rawPost(server, '/v1/events', compress(Buffer.from(toolLine)), { ...authorized, 'Content-Encoding': encoding });
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'unsupported_encoding' });
  });

  it('accepts a UTF-8 BOM before NDJSON, JSON and a webhook delivery, plain or gzip', async () => {
    const harness = edgeSidecar();
    const server = await listening(harness);
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const withBom = (text: string) => Buffer.concat([bom, Buffer.from(text)]);
    expect((await rawPost(server, '/v1/events', withBom(toolLine), authorized)).status).toBe(202);
    expect((await rawPost(server, '/v1/events', gzipSync(withBom(toolLine)), { ...authorized, 'Content-Encoding': 'gzip' })).status).toBe(202);
    expect((await rawPost(server, '/v1/events', withBom(`[${toolLine}]`), { ...authorized, 'Content-Type': 'application/json' })).status).toBe(202);
    const delivery = withBom(JSON.stringify({ hook_event_name: 'post_tool_call', tool_name: 'terminal', extra: { status: 'ok' } }));
    expect((await rawPost(server, '/v1/hooks', delivery, { 'Content-Type': 'application/json', 'X-Hermes-Signature-256': sign(delivery) })).status).toBe(202);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(4);
  });
});
