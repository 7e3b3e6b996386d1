/**
 * The one way both listeners (web and ingest) make, bind and close their servers, and where their
 * per-connection bounds are applied (connections.ts holds the table of open connections).
 *
 * Node's own limits, set for every server made here:
 *  - headersTimeout: a request head must be complete this long after the connection (or the
 *    previous request) started it; Node's default of 60 s lets a slow-loris hold a descriptor.
 *  - requestTimeout: the whole request, body included (the ingest listener allows its body
 *    timeout on top, so its own 408 comes first and is counted as body_timeout).
 *  - keepAliveTimeout: how long an idle keep-alive connection stays open (Node's 5 s; Prometheus
 *    scrapes less often and simply reconnects).
 *  - connectionsCheckingInterval: how often Node checks those two timeouts; its 30 s default
 *    would let an expired head live up to 30 s longer.
 *  - maxHeaderSize stays Node's 16 KiB (431 above), maxRequestsPerSocket stays unlimited: the
 *    table bounds requests per connection itself (answering the last with `Connection: close`,
 *    where Node would answer the next with 503) and counts it.
 */
import http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Families } from '../metrics/registry.js';
import type { CONNECTION_FAMILIES } from './connections.js';
import { ConnectionTable, type ConnectionLimits, type ListenerName } from './connections.js';

/**
 * node:https, loaded only for a TLS listener: it loads TLS with it, memory a plain HTTP sidecar
 * never uses (bench memory section, idle RSS).
 */
const httpsModule = (): typeof https => process.getBuiltinModule('node:https');

export interface ListenerLimits extends ConnectionLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

/** The settings of one listener, as the flags give them (src/net/options.ts). */
export interface ListenerSettings {
  readonly maxConnections: number;
  readonly headersTimeoutSeconds: number;
  readonly writeTimeoutSeconds: number;
  readonly maxRequestsPerConnection: number;
  /** Requests per second one connection may make (0: unlimited). */
  readonly maxRequestRate: number;
  /** Bytes per second below which a request body makes its connection evictable at the cap (0: never). */
  readonly minBodyBytesPerSecond: number;
}

export interface ListenerOptions {
  readonly name: ListenerName;
  readonly limits: ListenerLimits;
  readonly metrics?: Families<typeof CONNECTION_FAMILIES> | undefined;
  /** TLS options: an HTTPS server instead of HTTP. */
  readonly tls?: https.ServerOptions | undefined;
}

/** Pipelined requests one connection may have waiting behind the one being answered. */
const MAX_WAITING_REQUESTS = 8;
const KEEP_ALIVE_TIMEOUT_MS = 5000;
/** The least body rate, by default: a slow mobile link sends a hundred times this. */
export const DEFAULT_MIN_BODY_BYTES_PER_SECOND = 1024;

/** Bounds for a server made without settings (tests, embedding); the flags' defaults in src/net/options.ts. */
export const DEFAULT_LIMITS: ListenerLimits = {
  maxConnections: 64,
  maxWaitingRequests: MAX_WAITING_REQUESTS,
  writeTimeoutMs: 30_000,
  minBodyBytesPerSecond: DEFAULT_MIN_BODY_BYTES_PER_SECOND,
  maxRequestsPerConnection: 100,
  maxRequestRate: 10,
  headersTimeoutMs: 5000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
};

/**
 * The limits of a listener from its settings. `bodyAllowanceMs` is how long a request may take
 * after its head: a listener that reads bodies gives its own body timeout room to answer first.
 */
export function limitsFrom(settings: ListenerSettings, bodyAllowanceMs: number): ListenerLimits {
  const headersTimeoutMs = settings.headersTimeoutSeconds * 1000;
  return {
    maxConnections: settings.maxConnections,
    maxWaitingRequests: MAX_WAITING_REQUESTS,
    writeTimeoutMs: settings.writeTimeoutSeconds * 1000,
    minBodyBytesPerSecond: settings.minBodyBytesPerSecond,
    maxRequestsPerConnection: settings.maxRequestsPerConnection,
    maxRequestRate: settings.maxRequestRate,
    headersTimeoutMs,
    requestTimeoutMs: headersTimeoutMs + bodyAllowanceMs,
    keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
  };
}

/** How often Node checks its request timeouts. */
const CHECK_INTERVAL_MS = 1000;
/** How often the table looks at answers being sent: the write timeout, and which peers stopped reading (connections.ts). */
const SWEEP_INTERVAL_MS = 100;

export interface Address {
  readonly host: string;
  readonly port: number;
}

/** A server (not yet listening) whose connections are bounded as `options.limits` says. */
export function createListener(handler: http.RequestListener, options: ListenerOptions): http.Server {
  const { limits } = options;
  const table = new ConnectionTable(options.name, limits, options.metrics);
  const serverOptions: http.ServerOptions = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, limits.headersTimeoutMs),
  };
  const bounded = table.serialize(handler);
  const server = options.tls === undefined ? http.createServer(serverOptions, bounded) : httpsModule().createServer({ ...options.tls, ...serverOptions }, bounded);
  table.attach(server);
  const sweeper = setInterval(() => table.sweep(), Math.min(SWEEP_INTERVAL_MS, limits.writeTimeoutMs));
  // The sweeper alone must not keep the process alive.
  sweeper.unref();
  server.once('close', () => clearInterval(sweeper));
  return server;
}

/** Listens on host:port and resolves once bound (port 0 picks a free one). */
export function listenOn<S extends http.Server>(server: S, address: Address): Promise<S> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** host:port of a listening server, with brackets around an IPv6 address. */
export function boundAddress(server: http.Server): string {
  const { address, port } = server.address() as AddressInfo;
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/** Stops accepting, lets requests in progress finish for up to `graceMs`, then closes what is left. */
export function closeServer(server: http.Server, graceMs: number): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Closes the server and every connection at once. */
export function closeNow(server: http.Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
