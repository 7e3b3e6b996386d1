/**
 * Paced, shared renders (src/web/renders.ts): scrapes that wait for a render share its bytes, the
 * very same Buffers, plain and gzipped; a scrape never gets a render that started before it
 * arrived; renders start at most once per slot, so a crowd of scrapers that arrive one after
 * another (as the event loop accepts them, one per turn) costs one render per slot; over real
 * HTTP, a crowd of scrapers that never read costs one render and /-/ready answers meanwhile, and
 * their unread answers stay within the held-bytes bound.
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
import type { RenderedBody } from '../../src/web/parts.js';
import { RenderFailure, SharedRenders } from '../../src/web/renders.js';
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

/** An exposition whose every render says its number; gated, it waits until released. */
function numberedExposition(gated = false) {
  let release: () => void = () => undefined;
  let gate = gated ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const exposition = {
    renders: 0,
    render: async () => {
      const number = (exposition.renders += 1);
      await gate;
      return [`render ${number}\n`];
    },
    release: () => {
      release();
      gate = Promise.resolve();
    },
  };
  return exposition;
}

/** The wait for the next render slot, held until the test releases it; records the delays asked for. */
function heldSlots() {
  const delays: number[] = [];
  const held: (() => void)[] = [];
  return {
    delays,
    wait: (ms: number) => {
      delays.push(ms);
      return new Promise<void>((resolve) => held.push(resolve));
    },
    release: () => {
      for (const resolve of held.splice(0)) resolve();
    },
  };
}

const textOf = (body: RenderedBody) => Buffer.concat(body.chunks).toString();
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('SharedRenders pacing', () => {
  it('gives a scrape that arrives while a render is being made the next render, never the one in progress', async () => {
    const exposition = numberedExposition(true);
    let paced = 0;
    const renders = new SharedRenders({ exposition, collect: () => true, renderFailed: () => undefined, paced: () => (paced += 1) });
    const first = renders.body('text', false);
    await vi.waitFor(() => expect(exposition.renders).toBe(1));
    const [plain, zipped] = [renders.body('text', false), renders.body('text', true)];
    exposition.release();
    expect(textOf(await first)).toBe('render 1\n');
    expect(textOf(await plain)).toBe('render 2\n');
    expect(gunzipSync(Buffer.concat((await zipped).chunks)).toString()).toBe('render 2\n');
    expect(exposition.renders).toBe(2);
    expect(paced).toBe(2);
  });

  it('makes one render at the next slot for a crowd of scrapes that arrive one turn apart after a render', async () => {
    const exposition = numberedExposition();
    const slots = heldSlots();
    let paced = 0;
    let rendered = 0;
    const renders = new SharedRenders({
      exposition,
      collect: () => true,
      renderFailed: () => undefined,
      pacing: { minIntervalMs: 60_000, wait: slots.wait },
      rendered: () => (rendered += 1),
      paced: () => (paced += 1),
    });
    expect(textOf(await renders.body('text', false))).toBe('render 1\n');
    const crowd: Promise<RenderedBody>[] = [];
    for (let index = 0; index < 20; index += 1) {
      crowd.push(renders.body('text', index % 2 === 1));
      await nextTurn();
    }
    expect(exposition.renders).toBe(1);
    expect(slots.delays).toHaveLength(1);
    expect(paced).toBe(20);
    slots.release();
    const bodies = await Promise.all(crowd);
    const texts = bodies.map((body, index) => (index % 2 === 1 ? gunzipSync(Buffer.concat(body.chunks)).toString() : textOf(body)));
    expect(new Set(texts)).toEqual(new Set(['render 2\n']));
    expect(exposition.renders).toBe(2);
    expect(rendered).toBe(2);
  });

  it('starts a render no sooner than the minimum interval after the last one started, nor sooner after it ended than it took', async () => {
    let clock = 0;
    let takes = 0;
    const exposition: Exposition = {
      render: async () => {
        clock += takes;
        return ['x\n'];
      },
    };
    const slots = heldSlots();
    const renders = new SharedRenders({ exposition, collect: () => true, renderFailed: () => undefined, pacing: { minIntervalMs: 100, now: () => clock, wait: slots.wait } });
    // A render of 500 ms from 0: the next may start at 500 + 500.
    takes = 500;
    await renders.body('text', false);
    clock = 600;
    const second = renders.body('text', false);
    expect(slots.delays).toEqual([400]);
    // At 1000 a render of 10 ms: the interval from its start rules, the next may start at 1100.
    clock = 1000;
    takes = 10;
    slots.release();
    await second;
    clock = 1030;
    const third = renders.body('text', false);
    expect(slots.delays).toEqual([400, 70]);
    slots.release();
    await third;
  });

  it('renders every format waiting in one slot, each once', async () => {
    const exposition = { render: vi.fn(async (format: string) => [`${format}\n`]) } satisfies Exposition;
    const renders = new SharedRenders({ exposition, collect: () => true, renderFailed: () => undefined });
    const bodies = await Promise.all([renders.body('text', false), renders.body('openmetrics', true), renders.body('text', true), renders.body('openmetrics', false)]);
    expect(exposition.render.mock.calls.map(([format]) => format)).toEqual(['text', 'openmetrics']);
    expect(textOf(bodies[3])).toBe('openmetrics\n');
    expect(gunzipSync(Buffer.concat(bodies[2]?.chunks ?? [])).toString()).toBe('text\n');
  });
});

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
    expect(gunzipSync(Buffer.concat(first?.chunks ?? [])).toString()).toBe(Buffer.concat((await plain).chunks).toString());
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

describe('/metrics under scrapers that never read', () => {
  const servers: http.Server[] = [];
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    for (const server of servers.splice(0)) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  it('renders once more for 63 scrapes that arrive during a render, and each answer is the whole exposition', async () => {
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
    expect(exposition.renders).toBe(1);
    exposition.release();
    // The first scrape got the render that was in progress; the other 63 and a reader that comes
    // before the next slot share the next one, the reader's answer complete.
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

  it('makes one render for a crowd that arrives one connection after another, and answers /-/ready while it waits', async () => {
    const exposition = numberedExposition();
    const slots = heldSlots();
    const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false });
    const app = createWebApp({
      registry,
      exposition,
      telemetryPath: '/metrics',
      version: 'test',
      collectors: [],
      ready: () => ({ ready: true, reason: 'Ready' }),
      onScrapeError: () => undefined,
      pacing: { minIntervalMs: 60_000, wait: slots.wait },
    });
    const server = http.createServer(app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const counter = async (name: string) => parseSamples(await renderText(createExposition(registry))).get(name);
    const get = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        }).on('error', reject);
      });
    expect(await get('/metrics')).toEqual({ status: 200, body: 'render 1\n' });
    // Each scraper connects once the one before it is waiting: none of them arrives during a render.
    const answers = Array.from({ length: 32 }, () => '');
    for (let index = 0; index < 32; index += 1) {
      const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.pause();
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (answers[index] += chunk));
      socket.on('error', () => undefined);
      sockets.push(socket);
      await vi.waitFor(async () => expect(await counter('hermes_sidecar_scrapes_paced_total')).toBe(index + 1), { timeout: 10_000, interval: 5 });
    }
    expect(await get('/-/ready')).toEqual({ status: 200, body: 'Ready\n' });
    expect(exposition.renders).toBe(1);
    slots.release();
    for (const socket of sockets) socket.resume();
    await vi.waitFor(() => expect(answers.filter((answer) => answer.endsWith('\r\n\r\nrender 2\n'))).toHaveLength(32), { timeout: 10_000, interval: 20 });
    expect(exposition.renders).toBe(2);
    expect(await counter('hermes_sidecar_scrape_renders_total')).toBe(2);
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
