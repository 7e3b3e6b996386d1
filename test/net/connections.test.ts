/**
 * The connection table of a listener (src/net/connections.ts) over real loopback sockets: the
 * cap and its eviction, one request in flight per connection, the pipelining bound, the write
 * timeout and the counting of Node's request timeouts.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { familiesFor } from '../../src/metrics/registry.js';
import { CONNECTION_FAMILIES } from '../../src/net/connections.js';
import { closeNow, createListener, DEFAULT_LIMITS, listenOn, type ListenerLimits } from '../../src/net/listener.js';
import { parseSamples, series } from '../support/exposition.js';

const open: http.Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(open.splice(0).map((server) => closeNow(server)));
});

const waitFor = (check: () => Promise<void> | void) => vi.waitFor(check, { timeout: 10_000, interval: 20 });

interface Harness {
  readonly port: number;
  readonly server: http.Server;
  /** Requests the handler was called with, by URL. */
  readonly handled: string[];
  closed(reason: string): Promise<number>;
  open(): Promise<number>;
  limit(): Promise<number>;
  stalled(): Promise<number>;
  delayed(): Promise<number>;
}

/**
 * A listener whose handler answers `/big` with `bigBytes` (more than loopback buffers absorb, so
 * a peer that does not read never lets it finish), `/hold` never, and anything else at once.
 */
async function start(limits: Partial<ListenerLimits>, bigBytes = 32 * 1024 * 1024): Promise<Harness> {
  const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false });
  const handled: string[] = [];
  const big = Buffer.alloc(bigBytes, 'x');
  const server = createListener(
    (request, response) => {
      handled.push(request.url ?? '');
      if (request.url === '/hold') return;
      response.setHeader('Content-Type', 'text/plain');
      response.end(request.url === '/big' ? big : 'ok\n');
    },
    { name: 'web', limits: { ...DEFAULT_LIMITS, ...limits }, metrics: familiesFor(registry.metrics, CONNECTION_FAMILIES) },
  );
  open.push(server);
  await listenOn(server, { host: '127.0.0.1', port: 0 });
  const samples = async () => parseSamples(await renderText(createExposition(registry)));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    handled,
    closed: async (reason) => (await samples()).get(series('hermes_sidecar_connections_closed_total', { listener: 'web', reason })) ?? Number.NaN,
    open: async () => (await samples()).get(series('hermes_sidecar_connections_open', { listener: 'web' })) ?? Number.NaN,
    limit: async () => (await samples()).get(series('hermes_sidecar_connections_limit', { listener: 'web' })) ?? Number.NaN,
    stalled: async () => (await samples()).get(series('hermes_sidecar_connections_stalled', { listener: 'web' })) ?? Number.NaN,
    delayed: async () => (await samples()).get(series('hermes_sidecar_requests_delayed_total', { listener: 'web' })) ?? Number.NaN,
  };
}

interface Peer {
  readonly socket: net.Socket;
  /**
   * Reads what the server sent and resolves true once the server has closed the connection
   * (false if it is still open after `withinMs`). A paused socket does not see the close, so the
   * peer only looks once it stops playing the attacker.
   */
  closedByServer(withinMs?: number): Promise<boolean>;
}

/** A raw connection that writes `payload` and never reads. */
async function raw(port: number, payload: string): Promise<Peer> {
  let closed = false;
  const socket = net.connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  socket.pause();
  socket.on('error', () => undefined);
  const done = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve();
    }),
  );
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  if (payload !== '') socket.write(payload);
  return {
    socket,
    closedByServer: async (withinMs = 5000) => {
      socket.on('data', () => undefined);
      socket.resume();
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, withinMs))]);
      return closed;
    },
  };
}

/** One GET on a fresh connection. */
function get(port: number, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

describe('one request in flight per connection', () => {
  it('hands a pipelined request to the handler only once the answer before it was handed to the socket', async () => {
    const harness = await start({});
    const peer = await raw(harness.port, request('/hold') + request('/second'));
    await waitFor(() => expect(harness.handled).toEqual(['/hold']));
    // The second request was parsed, but the handler has not seen it while /hold is unanswered.
    expect(await get(harness.port, '/other')).toEqual({ status: 200, body: 'ok\n' });
    expect(harness.handled).toEqual(['/hold', '/other']);
    expect(await harness.open()).toBe(1);
    expect(await peer.closedByServer(200)).toBe(false);
  });

  it('answers pipelined requests in order, each after the one before', async () => {
    const harness = await start({});
    const answers: string[] = [];
    const socket = net.connect({ host: '127.0.0.1', port: harness.port });
    sockets.push(socket);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => answers.push(chunk));
    socket.write(request('/a') + request('/b') + request('/c'));
    await waitFor(() => expect(answers.join('').match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3));
    expect(harness.handled).toEqual(['/a', '/b', '/c']);
  });

  it('closes a connection with more pipelined requests waiting than allowed, counted, having rendered only the first', async () => {
    const harness = await start({ maxWaitingRequests: 8 });
    const peer = await raw(harness.port, request('/big').repeat(200));
    await waitFor(async () => expect(await harness.closed('pipeline_limit')).toBe(1));
    expect(harness.handled).toEqual(['/big']);
    expect(await peer.closedByServer()).toBe(true);
    expect(await get(harness.port)).toEqual({ status: 200, body: 'ok\n' });
  });
});

describe('write timeout', () => {
  it('drops a response the peer does not read within the write timeout, counted', async () => {
    const harness = await start({ writeTimeoutMs: 300 });
    const peer = await raw(harness.port, request('/big'));
    await waitFor(async () => expect(await harness.closed('write_timeout')).toBe(1));
    expect(await peer.closedByServer()).toBe(true);
    // A response the peer reads is not affected.
    expect(await get(harness.port, '/')).toEqual({ status: 200, body: 'ok\n' });
    expect(await harness.closed('write_timeout')).toBe(1);
  });

  it('does not count the time a handler takes before it writes', async () => {
    const harness = await start({ writeTimeoutMs: 200 });
    const peer = await raw(harness.port, request('/hold'));
    await waitFor(() => expect(harness.handled).toEqual(['/hold']));
    // Several sweeps of the write timeout pass while the handler holds the answer.
    expect(await peer.closedByServer(1500)).toBe(false);
    expect(await harness.closed('write_timeout')).toBe(0);
  });
});

describe('connection cap', () => {
  it('evicts the oldest connection with no request in progress to admit a new one, counted', async () => {
    const harness = await start({ maxConnections: 4 });
    const halfSent = [];
    for (let index = 0; index < 4; index += 1) halfSent.push(await raw(harness.port, 'GET / HTTP/1.1\r\nHost: x\r\n'));
    await waitFor(async () => expect(await harness.open()).toBe(4));
    expect(await get(harness.port)).toEqual({ status: 200, body: 'ok\n' });
    expect(await harness.closed('evicted')).toBe(1);
    expect(await harness.closed('limit')).toBe(0);
    expect(await halfSent[0]?.closedByServer()).toBe(true);
    expect(await Promise.all(halfSent.slice(1).map((peer) => peer.closedByServer(100)))).toEqual([false, false, false]);
  });

  it('refuses a new connection, counted, only when every connection is mid-request', async () => {
    const harness = await start({ maxConnections: 2 });
    const busy = [await raw(harness.port, request('/hold')), await raw(harness.port, request('/hold'))];
    await waitFor(() => expect(harness.handled).toEqual(['/hold', '/hold']));
    await expect(get(harness.port)).rejects.toThrow();
    expect(await harness.closed('limit')).toBe(1);
    expect(await harness.open()).toBe(2);
    expect(await Promise.all(busy.map((peer) => peer.closedByServer(100)))).toEqual([false, false]);
  });

  it('at the cap, evicts a connection whose peer has taken none of its answer for 200 ms', async () => {
    const harness = await start({ maxConnections: 2 });
    const busy = await raw(harness.port, request('/hold'));
    const stalled = await raw(harness.port, request('/big'));
    await waitFor(() => expect(harness.handled).toEqual(['/hold', '/big']));
    // The sweeps (every 100 ms) see the answer stop moving, then it counts as stalled.
    await waitFor(async () => expect(await get(harness.port)).toEqual({ status: 200, body: 'ok\n' }));
    expect(await harness.closed('evicted')).toBe(1);
    expect(await stalled.closedByServer()).toBe(true);
    expect(await busy.closedByServer(100)).toBe(false);
  });

  it('at the cap, evicts a connection whose peer stopped reading its answer before an idle keep-alive', async () => {
    const harness = await start({ maxConnections: 2 });
    const idle = await raw(harness.port, request('/'));
    await waitFor(() => expect(harness.handled).toEqual(['/']));
    const stalled = await raw(harness.port, request('/big'));
    await waitFor(async () => expect(await harness.stalled()).toBe(1));
    expect(await get(harness.port)).toEqual({ status: 200, body: 'ok\n' });
    expect(await harness.closed('evicted')).toBe(1);
    expect(await stalled.closedByServer()).toBe(true);
    expect(await idle.closedByServer(100)).toBe(false);
    expect(await harness.stalled()).toBe(0);
  });

  it('does not let connections accepted together evict each other before a head could be read', async () => {
    const harness = await start({ maxConnections: 2 });
    // Three connections and their heads at once: two fit; the third is refused rather than
    // evicting one whose head is already on its way.
    const answers = await Promise.allSettled([get(harness.port, '/a'), get(harness.port, '/b'), get(harness.port, '/c')]);
    const served = answers.filter((answer) => answer.status === 'fulfilled').length;
    expect(served).toBeGreaterThanOrEqual(2);
    expect(served + (await harness.closed('limit'))).toBe(3);
  });

  it('at the cap, closes by fairness the connection served most lately, never one waiting for its first answer (issue 29 defect 1)', async () => {
    // No rate limit here: the repeats are answered at once, in order.
    const harness = await start({ maxConnections: 2, maxRequestRate: 0 });
    // A peer that repeats requests on one keep-alive: answered three times, then a fourth held.
    const repeater = await raw(harness.port, request('/a') + request('/b') + request('/c') + request('/hold'));
    const newcomer = await raw(harness.port, request('/hold'));
    await waitFor(() => expect(harness.handled).toEqual(['/a', '/b', '/c', '/hold', '/hold']));
    expect(await get(harness.port)).toEqual({ status: 200, body: 'ok\n' });
    expect(await harness.closed('fairness')).toBe(1);
    expect(await harness.closed('limit')).toBe(0);
    expect(await repeater.closedByServer()).toBe(true);
    expect(await newcomer.closedByServer(100)).toBe(false);
  });

  it('at the cap, closes the connection whose body arrives below the minimum rate, counted as slow_body (issue 29 defect 2)', async () => {
    const harness = await start({ maxConnections: 2, minBodyBytesPerSecond: 1024 });
    const slow = await raw(harness.port, 'POST /hold HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nab');
    const waiting = await raw(harness.port, request('/hold'));
    await waitFor(() => expect(harness.handled).toEqual(['/hold', '/hold']));
    // Within its first 50 ms a body is not judged; past them, 2 bytes are far below 1 KiB/s.
    await waitFor(async () => expect(await get(harness.port)).toEqual({ status: 200, body: 'ok\n' }));
    expect(await harness.closed('slow_body')).toBe(1);
    expect(await slow.closedByServer()).toBe(true);
    expect(await waiting.closedByServer(100)).toBe(false);
  });

  it('does not judge bodies when the minimum rate is 0: the newcomer is refused instead', async () => {
    const harness = await start({ maxConnections: 2, minBodyBytesPerSecond: 0 });
    const slow = await raw(harness.port, 'POST /hold HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nab');
    await raw(harness.port, request('/hold'));
    await waitFor(() => expect(harness.handled).toEqual(['/hold', '/hold']));
    await expect(get(harness.port)).rejects.toThrow();
    expect([await harness.closed('slow_body'), await harness.closed('limit')]).toEqual([0, 1]);
    expect(await slow.closedByServer(100)).toBe(false);
  });

  it('answers the last request a connection may make with Connection: close, counted as request_limit', async () => {
    const harness = await start({ maxRequestsPerConnection: 3 });
    let answers = '';
    const socket = net.connect({ host: '127.0.0.1', port: harness.port });
    sockets.push(socket);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answers += chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(request('/a') + request('/b') + request('/c') + request('/d'));
    await closed;
    expect(answers.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3);
    expect(answers.match(/Connection: close/gi)).toHaveLength(1);
    expect(harness.handled).toEqual(['/a', '/b', '/c']);
    expect(await harness.closed('request_limit')).toBe(1);
  });

  it('holds back requests one connection makes faster than its rate, counted, and answers them in turn', async () => {
    const harness = await start({ maxRequestRate: 2 });
    let answers = '';
    const socket = net.connect({ host: '127.0.0.1', port: harness.port });
    sockets.push(socket);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answers += chunk));
    socket.write(request('/a') + request('/b') + request('/c'));
    // One request at once on a new connection; each of the next two waits for half a second of credit.
    await waitFor(() => expect(answers.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3));
    expect(harness.handled).toEqual(['/a', '/b', '/c']);
    expect(await harness.delayed()).toBe(2);
  });

  it('keeps the open-connections gauge and the cap gauge', async () => {
    const harness = await start({ maxConnections: 7 });
    expect(await harness.limit()).toBe(7);
    expect(await harness.open()).toBe(0);
    await raw(harness.port, '');
    await raw(harness.port, '');
    await waitFor(async () => expect(await harness.open()).toBe(2));
    for (const socket of sockets.splice(0)) socket.destroy();
    await waitFor(async () => expect(await harness.open()).toBe(0));
  });
});

describe("Node's request timeouts, counted", () => {
  it('closes a connection whose head is not complete within the headers timeout (408), counted as headers_timeout', async () => {
    const harness = await start({ headersTimeoutMs: 300, requestTimeoutMs: 5000 });
    const peer = await raw(harness.port, 'GET / HTTP/1.1\r\nHost: x\r\n');
    const silent = await raw(harness.port, '');
    await waitFor(async () => expect(await harness.closed('headers_timeout')).toBe(2));
    expect([await peer.closedByServer(), await silent.closedByServer()]).toEqual([true, true]);
    expect(await harness.closed('request_timeout')).toBe(0);
  });

  it('counts a request whose body does not arrive within the request timeout as request_timeout', async () => {
    const harness = await start({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const peer = await raw(harness.port, 'POST /hold HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab');
    await waitFor(async () => expect(await harness.closed('request_timeout')).toBe(1));
    expect(await peer.closedByServer()).toBe(true);
    expect(await harness.closed('headers_timeout')).toBe(0);
  });
});
