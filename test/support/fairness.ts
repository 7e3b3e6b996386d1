/**
 * The fairness attacks of issue 29 and the honest clients measured under them, shared by
 * test/e2e/fairness.test.ts and bench/edge.ts. Every attack keeps a bounded number of
 * connections: one the sidecar closes is reopened, so the attack holds its size for as long as
 * it runs. All on loopback.
 */
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Attack {
  /** Requests made (scrapers) or bodies opened (slow bodies) so far. */
  requests(): number;
  /** Stops the attack and closes its connections. */
  stop(): Promise<void>;
}

export interface HonestResult {
  readonly count: number;
  readonly ok: number;
  /** Latency of each request in ms, failures included (at the time they failed). */
  readonly latencies: readonly number[];
  readonly p50: number;
  readonly p99: number;
}

/** Each honest request is given this long; the target is 1 s, so this only bounds the run. */
export const HONEST_TIMEOUT_MS = 5000;

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const hostPort = (url: string) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) });
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One request; resolves with its status (0 on any failure or past `timeoutMs`) and body. */
function exchange(url: string, options: http.RequestOptions, body?: Buffer, timeoutMs = HONEST_TIMEOUT_MS): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (status: number, data: Buffer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, body: data });
    };
    const request = http.request(url, options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(response.complete ? (response.statusCode ?? 0) : 0, Buffer.concat(chunks)));
      response.on('error', () => done(0, Buffer.alloc(0)));
      response.on('close', () => done(response.complete ? (response.statusCode ?? 0) : 0, Buffer.concat(chunks)));
    });
    const timer = setTimeout(() => {
      request.destroy();
      done(0, Buffer.alloc(0));
    }, timeoutMs);
    request.on('error', () => done(0, Buffer.alloc(0)));
    request.end(body);
  });
}

function summary(results: readonly { ok: boolean; ms: number }[]): HonestResult {
  const latencies = results.map((result) => result.ms);
  return { count: results.length, ok: results.filter((result) => result.ok).length, latencies, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

const HEAD_METRICS = 'HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n';

/**
 * A raw keep-alive connection that sends `HEAD /metrics` again as soon as each answer (headers
 * only) is in, reopened when the sidecar closes it. Raw, because Node's client does not reuse a
 * connection after a HEAD answer without Content-Length, and the attack is one that keeps it.
 */
function headLoop(webUrl: string, sockets: Set<net.Socket>, running: () => boolean, count: () => void, first: () => void): Promise<void> {
  return new Promise((resolve) => {
    const open = () => {
      let pending = '';
      const socket = net.connect(hostPort(webUrl), () => socket.write(HEAD_METRICS));
      sockets.add(socket);
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        pending += chunk;
        for (let end = pending.indexOf('\r\n\r\n'); end !== -1; end = pending.indexOf('\r\n\r\n')) {
          pending = pending.slice(end + 4);
          count();
          first();
          if (running()) socket.write(HEAD_METRICS);
          else socket.destroy();
        }
      });
      socket.on('error', () => undefined);
      socket.once('close', () => {
        sockets.delete(socket);
        first();
        if (running()) void nextTurn().then(open);
        else resolve();
      });
    };
    open();
  });
}

/**
 * `head` connections that each keep a `HEAD /metrics` outstanding and `get` connections that each
 * keep a gzip `GET /metrics` outstanding and read every answer, all keep-alive: as soon as an
 * answer is in, the next request goes out. Resolves once every connection has had an answer.
 */
export async function repeatScrapers(webUrl: string, counts: { readonly head: number; readonly get: number }): Promise<Attack> {
  let running = true;
  let made = 0;
  const sockets = new Set<net.Socket>();
  const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(1, counts.get) });
  const getLoop = async (first: () => void) => {
    while (running) {
      await exchange(`${webUrl}/metrics`, { agent, headers: { 'Accept-Encoding': 'gzip' } }, undefined, 30_000);
      made += 1;
      first();
      await nextTurn();
    }
  };
  const loops: Promise<void>[] = [];
  const firsts: Promise<void>[] = [];
  for (let index = 0; index < counts.get; index += 1) firsts.push(new Promise<void>((resolve) => loops.push(getLoop(resolve))));
  for (let index = 0; index < counts.head; index += 1) {
    firsts.push(new Promise<void>((resolve) => loops.push(headLoop(webUrl, sockets, () => running, () => (made += 1), resolve))));
  }
  await Promise.all(firsts);
  return {
    requests: () => made,
    stop: async () => {
      running = false;
      agent.destroy();
      for (const socket of sockets) socket.destroy();
      await Promise.all(loops);
    },
  };
}

/**
 * `count` connections that each send a complete POST head for a 1 MB NDJSON body, then one body
 * byte per second. A connection the sidecar closes is opened again. Resolves once all are open.
 */
export async function slowBodies(ingestUrl: string, count: number): Promise<Attack> {
  let running = true;
  let opened = 0;
  const sockets = new Set<net.Socket>();
  const head = 'POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\nContent-Length: 1000000\r\n\r\n';
  const open = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = net.connect(hostPort(ingestUrl), () => {
        opened += 1;
        socket.write(head);
        resolve();
      });
      sockets.add(socket);
      socket.on('data', () => undefined);
      socket.on('error', () => resolve());
      socket.once('close', () => {
        sockets.delete(socket);
        resolve();
        if (running) void nextTurn().then(() => (running ? open() : undefined));
      });
    });
  const drip = setInterval(() => {
    for (const socket of sockets) if (socket.writable) socket.write('{');
  }, 1000);
  await Promise.all(Array.from({ length: count }, open));
  return {
    requests: () => opened,
    stop: async () => {
      running = false;
      clearInterval(drip);
      const closing = [...sockets].map((socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve()))));
      for (const socket of sockets) socket.destroy();
      await Promise.all(closing);
    },
  };
}

/**
 * `count` gzip scrapes by `scrapers` scrapers (a Prometheus HA pair: 2), each scraping one
 * after another on a new connection (as Prometheus scrapes); `valid` checks a body.
 */
export async function honestScrapes(webUrl: string, count: number, valid: (body: Buffer) => boolean, scrapers = 2): Promise<HonestResult> {
  const results: { ok: boolean; ms: number }[] = [];
  let left = count;
  const scraper = async () => {
    while (left > 0) {
      left -= 1;
      const started = performance.now();
      const answer = await exchange(`${webUrl}/metrics`, { agent: false, headers: { 'Accept-Encoding': 'gzip' } });
      results.push({ ok: answer.status === 200 && valid(answer.body), ms: performance.now() - started });
    }
  };
  await Promise.all(Array.from({ length: scrapers }, scraper));
  return summary(results);
}

/** `count` one-event posts one after another on one keep-alive connection (as the bridge plugin sends). */
export async function honestIngest(ingestUrl: string, count: number): Promise<HonestResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const results: { ok: boolean; ms: number }[] = [];
  try {
    for (let index = 0; index < count; index += 1) {
      const line = Buffer.from(JSON.stringify({ event: 'post_tool_call', tool_name: 'honest', status: 'ok', tool_call_id: `honest-${index}`, duration_ms: 3 }));
      const started = performance.now();
      const answer = await exchange(`${ingestUrl}/v1/events`, { method: 'POST', agent, headers: { 'Content-Type': 'application/x-ndjson', 'Content-Length': String(line.length) } }, line);
      results.push({ ok: answer.status === 202, ms: performance.now() - started });
    }
  } finally {
    agent.destroy();
  }
  return summary(results);
}
