/**
 * Single-flight scrapes (src/web/scrape.ts): scrapes that arrive during a render share its
 * bytes, the very same Buffers, plain and gzipped; over real HTTP, a crowd of scrapers that
 * never read costs one render.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Exposition } from '../../src/exposition/exposition.js';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { createWebApp } from '../../src/web/app.js';
import { HeldBodies, RenderFailure, SharedRenders } from '../../src/web/scrape.js';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { parseSamples } from '../support/exposition.js';

/** An exposition whose renders wait until released, counted. */
function gatedExposition(parts: readonly string[]) {
  let release: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (release = resolve));
  const exposition = {
    renders: 0,
    render: vi.fn(async () => {
      exposition.renders += 1;
      await gate;
      return [...parts];
    }),
    release: () => {
      release();
      gate = Promise.resolve();
    },
  };
  return exposition;
}

describe('SharedRenders', () => {
  it('gives scrapes that arrive during a render the same Buffers, and renders again afterwards', async () => {
    const exposition = gatedExposition(['# TYPE up gauge\n', 'up 1\n']);
    let collected = 0;
    const renders = new SharedRenders({ exposition, collect: () => ((collected += 1), true), renderFailed: () => undefined });
    const bodies = Array.from({ length: 20 }, () => renders.body('text', false));
    exposition.release();
    const results = await Promise.all(bodies);
    expect(exposition.renders).toBe(1);
    expect(collected).toBe(1);
    for (const result of results) expect(result.chunks[0]).toBe(results[0]?.chunks[0]);
    expect(Buffer.concat(results[0]?.chunks ?? []).toString()).toBe('# TYPE up gauge\nup 1\n');
    expect(results[0]?.bytes).toBe(21);

    await renders.body('text', false);
    expect(exposition.renders).toBe(2);
  });

  it('compresses once for every gzipped scrape during a render, from the same render as the plain ones', async () => {
    const exposition = gatedExposition(['a'.repeat(100_000), '\n']);
    const renders = new SharedRenders({ exposition, collect: () => true, renderFailed: () => undefined });
    const plain = renders.body('text', false);
    const zipped = Array.from({ length: 5 }, () => renders.body('text', true));
    exposition.release();
    const [first, ...rest] = await Promise.all(zipped);
    expect(exposition.renders).toBe(1);
    for (const other of rest) expect(other.chunks[0]).toBe(first?.chunks[0]);
    expect(gunzipSync(first?.chunks[0] ?? Buffer.alloc(0)).toString()).toBe(Buffer.concat((await plain).chunks).toString());
    expect(first?.bytes).toBeLessThan(1000);
  });

  it('keeps formats apart', async () => {
    const exposition = { render: vi.fn(async (format: string) => [`${format}\n`]) } satisfies Exposition;
    const renders = new SharedRenders({ exposition, collect: () => true, renderFailed: () => undefined });
    const [text, openmetrics] = await Promise.all([renders.body('text', false), renders.body('openmetrics', false)]);
    expect(Buffer.concat(text.chunks).toString()).toBe('text\n');
    expect(Buffer.concat(openmetrics.chunks).toString()).toBe('openmetrics\n');
  });

  it('fails every scrape that shared a failed render, and reports it once', async () => {
    const failures: unknown[] = [];
    const exposition = { render: vi.fn(async () => Promise.reject(new Error('boom'))) } satisfies Exposition;
    const renders = new SharedRenders({ exposition, collect: () => true, renderFailed: (error) => failures.push(error) });
    const outcomes = await Promise.allSettled([renders.body('text', false), renders.body('text', true), renders.body('text', false)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const outcome of outcomes) expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(RenderFailure);
    expect(failures).toHaveLength(1);
    expect(exposition.render).toHaveBeenCalledTimes(1);
  });
});

/** A response that records whether it was destroyed, and finishes on demand. */
function fakeResponse() {
  const response = Object.assign(new EventEmitter(), { destroyed: false, destroy: () => ((response.destroyed = true), response.emit('close')) });
  return response as typeof response & ServerResponse;
}

describe('HeldBodies', () => {
  const body = (bytes: number) => ({ chunks: [Buffer.alloc(bytes)], bytes });

  it('counts a shared body once, and releases it when its last response is done', () => {
    const held = new HeldBodies(100, () => undefined);
    const shared = body(60);
    const [a, b] = [fakeResponse(), fakeResponse()];
    held.hold(shared, a);
    held.hold(shared, b);
    expect(held.heldBytes).toBe(60);
    a.emit('finish');
    expect(held.heldBytes).toBe(60);
    b.emit('finish');
    expect(held.heldBytes).toBe(0);
  });

  it('drops the answers holding the oldest body when a new one would pass the bound, and counts them', () => {
    const dropped: number[] = [];
    const held = new HeldBodies(100, (count) => dropped.push(count));
    const oldest = [fakeResponse(), fakeResponse()];
    for (const response of oldest) held.hold(body(60), response);
    // Two distinct bodies of 60: the first one's holder made room for the second.
    expect(dropped).toEqual([1]);
    expect(oldest.map((response) => response.destroyed)).toEqual([true, false]);
    expect(held.heldBytes).toBe(60);
    const reader = fakeResponse();
    held.hold(body(30), reader);
    expect(held.heldBytes).toBe(90);
    expect(reader.destroyed).toBe(false);
  });

  it('always allows one body, however large', () => {
    const held = new HeldBodies(10, () => undefined);
    const response = fakeResponse();
    held.hold(body(50), response);
    expect(response.destroyed).toBe(false);
    expect(held.heldBytes).toBe(50);
  });
});

describe('/metrics under scrapers that never read', () => {
  const servers: http.Server[] = [];
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    for (const server of servers.splice(0)) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  it('renders once for 64 scrapes that arrive during the render, and each answer is the whole exposition', async () => {
    // 4 MiB of exposition: more than a loopback socket absorbs for a peer that does not read.
    const exposition = gatedExposition(Array.from({ length: 64 }, (_, index) => `x_${index} ${'1'.repeat(64 * 1024)}\n`));
    const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false });
    const app = createWebApp({ registry, exposition, telemetryPath: '/metrics', version: 'test', collectors: [], ready: () => ({ ready: true, reason: 'Ready' }), onScrapeError: () => undefined });
    let arrived = 0;
    const server = http.createServer((request, response) => {
      arrived += 1;
      app(request, response);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    for (let index = 0; index < 64; index += 1) {
      const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.pause();
      socket.on('error', () => undefined);
      sockets.push(socket);
    }
    await vi.waitFor(() => expect(arrived).toBe(64), { timeout: 10_000, interval: 20 });
    exposition.release();
    // A reader that arrives later gets its own render, complete.
    const body = await new Promise<string>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(body.split('\n').filter(Boolean)).toHaveLength(64);
    expect(exposition.renders).toBe(2);
  });

  it('drops the oldest unread answers, counted, when unread answers of distinct renders pass the bound', async () => {
    // Each render differs (its number), so no two scrapes share one; 24 MiB each, more than loopback absorbs.
    let rendered = 0;
    const big = '1'.repeat(1024 * 1024);
    const exposition: Exposition = { render: async () => [`render ${(rendered += 1)}\n`, ...Array.from({ length: 24 }, () => `x ${big}\n`)] };
    const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false });
    const app = createWebApp({ registry, exposition, telemetryPath: '/metrics', version: 'test', collectors: [], ready: () => ({ ready: true, reason: 'Ready' }), onScrapeError: () => undefined, maxHeldBytes: 64 * 1024 * 1024 });
    const server = http.createServer(app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const dropped = async () => parseSamples(await renderText(createExposition(registry))).get('hermes_sidecar_scrape_answers_dropped_total');
    for (let index = 0; index < 4; index += 1) {
      const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.pause();
      socket.on('error', () => undefined);
      sockets.push(socket);
      await vi.waitFor(() => expect(rendered).toBe(index + 1), { timeout: 10_000, interval: 20 });
    }
    // 4 × 24 MiB against 64 MiB: the first two unread answers made room for the last two.
    await vi.waitFor(async () => expect(await dropped()).toBe(2), { timeout: 10_000, interval: 20 });
  });
});
