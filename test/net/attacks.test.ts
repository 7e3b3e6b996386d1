/**
 * Peers that try to stall a listener of the real binary (dist/main.js) on loopback, with the
 * default settings: pipelined scrapes that are never read, unread answers, half-sent request
 * heads. Each is closed by the sidecar and counted, and meanwhile an honest scrape, /-/ready
 * and ingest answer. (bench/edge.ts, section "listener", measures the same attacks at full size.)
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { scrapeSamples } from '../support/accounting.js';
import { series } from '../support/exposition.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';

let sidecar: SidecarProcess;
const attackers: net.Socket[] = [];

beforeAll(async () => {
  sidecar = await startSidecarProcess();
});

afterAll(async () => {
  for (const socket of attackers.splice(0)) socket.destroy();
  await sidecar.stop('SIGKILL');
});

const waitFor = (check: () => Promise<void> | void, timeout = 15_000) => vi.waitFor(check, { timeout, interval: 100 });

const hostPort = (url: string) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) });

/** Connections that each write `payload` once and never read. */
async function neverReading(url: string, count: number, payload: string): Promise<net.Socket[]> {
  return Promise.all(
    Array.from({ length: count }, () =>
      new Promise<net.Socket>((resolve) => {
        const socket = net.connect(hostPort(url), () => {
          socket.write(payload);
          resolve(socket);
        });
        socket.pause();
        socket.on('error', () => undefined);
        attackers.push(socket);
      }),
    ),
  );
}

/** Reads what the server sent to these paused sockets; resolves with how many the server has closed within `withinMs`. */
async function closedByServer(sockets: readonly net.Socket[], withinMs: number): Promise<number> {
  let closedCount = 0;
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, withinMs);
          socket.once('close', () => {
            closedCount += 1;
            clearTimeout(timer);
            resolve();
          });
          socket.on('data', () => undefined);
          socket.resume();
        }),
    ),
  );
  return closedCount;
}

/** Status of one request on its own connection, within 2 s (0 when it did not answer in time). */
function answer(url: string, method = 'GET', body?: string): Promise<number> {
  return new Promise((resolve) => {
    const headers = body === undefined ? {} : { 'Content-Type': 'application/x-ndjson', 'Content-Length': String(Buffer.byteLength(body)) };
    const request = http.request(url, { method, agent: false, headers, timeout: 2000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(0));
    request.end(body);
  });
}

async function honestTrafficAnswers(): Promise<void> {
  const line = JSON.stringify({ event: 'post_tool_call', tool_name: 'terminal', status: 'ok', tool_call_id: `c${Math.random()}`, duration_ms: 3 });
  expect(await Promise.all([answer(`${sidecar.web}/metrics`), answer(`${sidecar.web}/-/ready`), answer(`${sidecar.ingest}/v1/events`, 'POST', line)])).toEqual([200, 200, 202]);
}

const closed = async (reason: string): Promise<number> =>
  (await scrapeSamples(sidecar)).get(series('hermes_sidecar_connections_closed_total', { listener: 'web', reason })) ?? Number.NaN;

const GET_METRICS = 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

describe('a listener no peer can stall', () => {
  it('closes a connection that pipelines 2,000 scrapes and never reads, counted as pipeline_limit; honest traffic answers', async () => {
    const sockets = await neverReading(sidecar.web, 4, GET_METRICS.repeat(2000));
    await waitFor(async () => expect(await closed('pipeline_limit')).toBe(4));
    await honestTrafficAnswers();
    expect(await closedByServer(sockets, 5000)).toBe(4);
  });

  it('closes connections whose head stays half-sent past the headers timeout (5 s), counted as headers_timeout', async () => {
    const before = await closed('headers_timeout');
    const sockets = await neverReading(sidecar.web, 50, 'GET /metrics HTTP/1.1\r\nHost: x\r\n');
    await honestTrafficAnswers();
    // The timeout is checked every second: all are closed well within 10 s.
    expect(await closedByServer(sockets, 10_000)).toBe(50);
    expect(before).toBeGreaterThanOrEqual(0);
    expect(await closed('headers_timeout')).toBe(before + 50);
  });

  it('at the connection cap (64), half-sent heads make room for an honest scrape: the oldest is evicted, counted', async () => {
    const before = await closed('evicted');
    const sockets = await neverReading(sidecar.web, 100, 'GET /metrics HTTP/1.1\r\nHost: x\r\n');
    await honestTrafficAnswers();
    // The evicted ones are closed at once, long before the headers timeout.
    expect(await closedByServer(sockets, 1000)).toBeGreaterThanOrEqual(100 - 64);
    expect(before).toBeGreaterThanOrEqual(0);
    // 100 + the honest scrape and /-/ready, against a cap of 64, with nothing else open.
    expect(await closed('evicted')).toBeGreaterThanOrEqual(before + 100 - 64);
    const samples = await scrapeSamples(sidecar);
    expect(samples.get(series('hermes_sidecar_connections_open', { listener: 'web' }))).toBeLessThanOrEqual(64);
    expect(samples.get(series('hermes_sidecar_connections_limit', { listener: 'web' }))).toBe(64);
  });
});
