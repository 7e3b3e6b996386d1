/**
 * The open connections of one listener, bounded so that no peer can stall it:
 *
 *  - at most `maxConnections` open. At the cap a new connection makes room by closing, in this
 *    order: the one whose peer has gone longest without taking any of its answer (for at least
 *    STALLED_WRITE_MS); the one whose request body is furthest below `minBodyBytesPerSecond`
 *    (after SLOW_BODY_GRACE_MS); the oldest one with no request in progress (an idle
 *    keep-alive, or one whose request head is not complete yet); by fairness, the one served
 *    most lately among those already answered at least once; else the oldest that has sent
 *    nothing yet (most likely a newcomer whose head is on its way). A connection waiting for
 *    its first answer is never closed for fairness, so a newcomer admitted at the cap keeps its
 *    place until it is served. Only when every connection is on its first request, reading and
 *    sending at a fair rate, is the new one refused. A plain `server.maxConnections` would let
 *    thousands of half-sent heads, slow bodies or peers repeating cheap requests lock the
 *    honest client out; eviction makes the attacker's connections the ones that go.
 *  - at most `maxRequestsPerConnection` requests per connection: the last one is answered with
 *    `Connection: close`, so a peer that repeats requests wins its place again at admission; and
 *    at most `maxRequestRate` per second (one at once on a new connection, credit up to as many):
 *    a faster one waits for its turn.
 *  - one request in flight per connection. Node parses pipelined requests as they arrive and
 *    hands every one to the handler at once, whose answers then wait in memory behind the
 *    first: a peer that pipelines 2,000 scrapes and never reads makes 2,000 renders. Here a
 *    pipelined request waits until the answer before it has been handed to the socket; at most
 *    `maxWaitingRequests` may wait, past that the connection is closed.
 *  - a response not handed to the kernel within `writeTimeoutMs` of its first byte (a peer that
 *    does not read) is dropped with its connection.
 *  - timeouts of the request head and of the whole request (Node's own checks, which this table
 *    only counts).
 *
 * Every close made here is counted by reason in hermes_sidecar_connections_closed_total.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { counter, gauge, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';
import type { Families } from '../metrics/registry.js';
import { ServiceRecord } from './service.js';

/** The closed value sets of this module's labels. */
export const CONNECTION_VALUES = {
  /** The sidecar's two listeners. */
  listener: ['web', 'ingest'],
  /**
   * Why a listener closed a connection itself: refused at the connection cap (every connection
   * on its first request), evicted at the cap to make room (a stalled reader or an idle or half-sent
   * connection; a body below the minimum rate; the connection served most), its request limit
   * reached, its request head or whole request too slow, its response not drained in time, too
   * many pipelined requests waiting.
   */
  connection_close_reason: ['limit', 'evicted', 'slow_body', 'fairness', 'request_limit', 'headers_timeout', 'request_timeout', 'write_timeout', 'pipeline_limit'],
} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const CONNECTION_FAMILIES = {
  connectionsClosed: fed(counter('hermes_sidecar_connections_closed_total', { listener: CONNECTION_VALUES.listener, reason: CONNECTION_VALUES.connection_close_reason }, 'self',
    'Connections a listener closed itself, by listener and reason ({reason}): refused at --<listener>.max-connections with every connection on its first request (limit); closed to make room at the cap: a peer not reading its answer or the oldest idle or half-sent one (evicted), a request body arriving below --ingest.min-body-rate (slow_body), the connection served most lately (fairness); answered with Connection: close after --<listener>.max-requests-per-connection (request_limit); request head or whole request too slow (headers_timeout, request_timeout), a response not drained within --<listener>.write-timeout (write_timeout), more pipelined requests waiting than allowed (pipeline_limit).'),
    'sidecar', 'web and ingest listeners'),
  connectionsOpen: fed(gauge('hermes_sidecar_connections_open', { listener: CONNECTION_VALUES.listener }, 'self',
    'Connections open on each listener (bounded by --web.max-connections and --ingest.max-connections).'),
    'sidecar', 'web and ingest listeners'),
  connectionsLimit: fed(gauge('hermes_sidecar_connections_limit', { listener: CONNECTION_VALUES.listener }, 'self',
    'The configured cap on open connections of each listener.'),
    'sidecar', 'configuration'),
  requestsDelayed: fed(counter('hermes_sidecar_requests_delayed_total', { listener: CONNECTION_VALUES.listener }, 'self',
    'Requests held back before their handler because their connection made them faster than --web.max-connection-request-rate: the work one peer repeating requests can make.'),
    'sidecar', 'web and ingest listeners (per-connection request rate)'),
  connectionsStalled: fed(gauge('hermes_sidecar_connections_stalled', { listener: CONNECTION_VALUES.listener }, 'self',
    'Connections of each listener whose peer has taken none of its answer for 200 ms, as of the last sweep (every 100 ms): the first to be evicted at the cap.'),
    'sidecar', 'web and ingest listeners'),
} as const satisfies Declarations;

/** A value of one of this module's closed sets. */
export type ConnectionValue<S extends keyof typeof CONNECTION_VALUES> = (typeof CONNECTION_VALUES)[S][number];

export type ListenerName = ConnectionValue<'listener'>;
export type CloseReason = ConnectionValue<'connection_close_reason'>;

export interface ConnectionLimits {
  readonly maxConnections: number;
  readonly maxWaitingRequests: number;
  readonly writeTimeoutMs: number;
  /** A request body arriving slower than this makes its connection evictable at the cap (0: never). */
  readonly minBodyBytesPerSecond: number;
  /** Requests one connection may make; the last is answered with `Connection: close` (0: unlimited). */
  readonly maxRequestsPerConnection: number;
  /** Requests per second one connection may make (credit up to as many); faster ones wait (0: unlimited). */
  readonly maxRequestRate: number;
}

interface ActiveResponse {
  readonly request: http.IncomingMessage;
  readonly response: http.ServerResponse;
  /** When it was handed to the handler, and the bytes the socket had read by then. */
  readonly startedAt: number;
  readonly bytesReadAtStart: number;
  /** When a sweep first saw the answer sending. */
  writingSince: number | undefined;
  /** Bytes queued for the socket at the last sweep that saw the peer take some, and when. */
  progress: { queued: number; at: number } | undefined;
}

interface Connection {
  readonly socket: Socket;
  /** The event-loop turn it was admitted in (see ConnectionTable.turn). */
  readonly turn: number;
  /** The response being produced or sent; undefined while the connection is idle or reading a head. */
  active: ActiveResponse | undefined;
  /** Pipelined requests that wait for the active one, in order. */
  readonly waiting: (() => void)[];
  /** Requests handed to the handler. */
  requests: number;
  /** Answers it was served, and its request credit. */
  readonly service: ServiceRecord;
}

/** What Node answers to a request it cannot read, before it closes the connection (as its default clientError handler does). */
const CLIENT_ERROR_ANSWERS: Readonly<Record<string, string>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';
/** Turns after its accept during which a connection is not evicted for an incomplete head. */
const YOUNG_TURNS = 2;
/**
 * An answer whose peer took none of it for this long (as the sweeps see it) makes its connection
 * evictable at the cap. A reader takes bytes at every round trip; a peer that took nothing over
 * two sweeps of the listener has stopped, and one that connected together with a crowd of them
 * must not wait long for its place.
 */
const STALLED_WRITE_MS = 200;
/**
 * A request body is judged against the minimum rate only after this long: an honest sender's
 * body follows its head at once (within a round trip), and it is judged only when the listener
 * is full. Short, because a peer whose slow bodies are closed opens new ones: while every one
 * of them is within its grace, the next newcomer finds no slow body to close and must be
 * refused, or close an honest keep-alive.
 */
const SLOW_BODY_GRACE_MS = 50;

export class ConnectionTable {
  /** Insertion order is age order: the first evictable entry is the oldest. */
  private readonly connections = new Map<Socket, Connection>();
  /** The TLS socket a request arrives on, to the TCP socket this table tracks. */
  private readonly secure = new WeakMap<Socket, Connection>();
  /**
   * Counts event-loop turns while connections are young. A connection's request head is read at
   * the earliest in the turn after its accept, and connections accepted together (one batch of a
   * flood) must not evict each other before any head could be read: a connection is evictable
   * for an incomplete head only from its second turn on.
   */
  private turn = 0;
  private lastAdmitTurn = -1;
  private turnScheduled = false;

  constructor(
    private readonly listener: ListenerName,
    private readonly limits: ConnectionLimits,
    private readonly metrics: Families<typeof CONNECTION_FAMILIES> | undefined,
    private readonly now: () => number = Date.now,
  ) {
    metrics?.connectionsLimit.set({ listener }, limits.maxConnections);
    metrics?.connectionsOpen.set({ listener }, 0);
    metrics?.connectionsStalled.set({ listener }, 0);
  }

  get size(): number {
    return this.connections.size;
  }

  /** Tracks the server's connections (TCP, before any TLS handshake) and counts its request timeouts. */
  attach(server: http.Server): void {
    server.prependListener('connection', (socket: Socket) => this.admit(socket));
    server.prependListener('secureConnection', (socket: TLSSocket) => {
      // A TLSSocket wraps the TCP socket 'connection' saw; Node keeps it as _parent.
      const raw = (socket as TLSSocket & { _parent?: Socket })._parent;
      const connection = raw === undefined ? undefined : this.connections.get(raw);
      if (connection !== undefined) this.secure.set(socket, connection);
    });
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => this.clientError(error, socket));
  }

  /** The handler, called with one request per connection at a time. */
  serialize(handler: http.RequestListener): http.RequestListener {
    return (request, response) => {
      const connection = this.connectionOf(request.socket);
      if (connection === undefined) return void handler(request, response);
      // Node goes on parsing what was already read after a close: those requests have no one to answer.
      if (connection.socket.destroyed) return;
      const run = () => this.dispatchAtRate(connection, handler, request, response);
      // Requests pipelined behind the last one a connection may make have no one to answer them.
      if (this.limits.maxRequestsPerConnection > 0 && connection.requests >= this.limits.maxRequestsPerConnection) return;
      if (connection.active === undefined && connection.waiting.length === 0) return run();
      if (connection.waiting.length >= this.limits.maxWaitingRequests) return this.close(connection, 'pipeline_limit');
      connection.waiting.push(run);
    };
  }

  /** Notes which peers took some of their answers; drops every response that has been sending for longer than the write timeout. */
  sweep(): void {
    const now = this.now();
    let stalled = 0;
    for (const connection of this.connections.values()) {
      const active = connection.active;
      if (active === undefined || !active.response.headersSent || active.response.writableFinished) continue;
      active.writingSince ??= now;
      const queued = connection.socket.writableLength;
      if (active.progress === undefined || queued === 0 || queued < active.progress.queued) active.progress = { queued, at: now };
      if (now - active.writingSince >= this.limits.writeTimeoutMs) this.close(connection, 'write_timeout');
      else if (this.stalledSince(connection, now) !== undefined) stalled += 1;
    }
    this.metrics?.connectionsStalled.set({ listener: this.listener }, stalled);
  }

  private admit(socket: Socket): void {
    if (this.connections.size >= this.limits.maxConnections && !this.evictOne()) {
      this.metrics?.connectionsClosed.inc({ listener: this.listener, reason: 'limit' });
      socket.destroy();
      return;
    }
    const connection: Connection = { socket, turn: this.turn, active: undefined, waiting: [], requests: 0, service: new ServiceRecord(this.now()) };
    this.lastAdmitTurn = this.turn;
    this.countTurns();
    this.connections.set(socket, connection);
    this.metrics?.connectionsOpen.set({ listener: this.listener }, this.connections.size);
    socket.once('close', () => {
      this.connections.delete(socket);
      this.metrics?.connectionsOpen.set({ listener: this.listener }, this.connections.size);
    });
  }

  private countTurns(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turnScheduled = false;
      this.turn += 1;
      if (this.turn - this.lastAdmitTurn < YOUNG_TURNS) this.countTurns();
    });
  }

  /**
   * Makes room at the cap, closing the first there is of: the connection whose peer has gone
   * longest without taking any of its answer (a peer that does not read must not hold its place
   * until the write timeout); the one whose body is furthest behind the minimum rate; the oldest
   * idle keep-alive or half-sent head; the one served most lately that has had an answer
   * already; the oldest that has sent nothing yet. A connection that has sent nothing is most
   * likely a newcomer whose head is on its way (an honest one admitted a moment ago), so it
   * goes last: one that stays silent is closed at the headers timeout.
   * False when every connection is on its first request, reading and sending at a fair rate.
   */
  private evictOne(): boolean {
    const now = this.now();
    const idle = (connection: Connection) => connection.active === undefined && connection.waiting.length === 0 && this.turn - connection.turn >= YOUNG_TURNS;
    const silent = (connection: Connection) => connection.service.answers === 0 && connection.socket.bytesRead === 0;
    const choices: [Connection | undefined, CloseReason][] = [
      [this.longestStalled(now), 'evicted'],
      [this.slowestBody(now), 'slow_body'],
      [this.oldest((connection) => idle(connection) && !silent(connection)), 'evicted'],
      [this.servedMost(now), 'fairness'],
      [this.oldest((connection) => idle(connection) && silent(connection)), 'evicted'],
    ];
    for (const [evictable, reason] of choices) {
      if (evictable === undefined) continue;
      this.close(evictable, reason);
      return true;
    }
    return false;
  }

  /** Of the requests whose body arrives below the minimum rate (past the grace), the one furthest behind it. */
  private slowestBody(now: number): Connection | undefined {
    const rate = this.limits.minBodyBytesPerSecond;
    if (rate <= 0) return undefined;
    let slowest: { connection: Connection; behind: number } | undefined;
    for (const connection of this.connections.values()) {
      const active = connection.active;
      if (active === undefined || active.request.complete || connection.socket.destroyed) continue;
      const elapsed = now - active.startedAt;
      if (elapsed < SLOW_BODY_GRACE_MS) continue;
      const behind = (rate * elapsed) / 1000 - (connection.socket.bytesRead - active.bytesReadAtStart);
      if (behind > 0 && (slowest === undefined || behind > slowest.behind)) slowest = { connection, behind };
    }
    return slowest?.connection;
  }

  /** Of the connections answered at least once, the one served most lately (the oldest of equals). */
  private servedMost(now: number): Connection | undefined {
    let most: { connection: Connection; served: number } | undefined;
    for (const connection of this.connections.values()) {
      if (connection.service.answers === 0 || connection.socket.destroyed) continue;
      const served = connection.service.servedLately(now);
      if (most === undefined || served > most.served) most = { connection, served };
    }
    return most?.connection;
  }

  private oldest(matches: (connection: Connection) => boolean): Connection | undefined {
    for (const connection of this.connections.values()) if (!connection.socket.destroyed && matches(connection)) return connection;
    return undefined;
  }

  /** Since when the peer has taken none of the answer's queued bytes, if that is STALLED_WRITE_MS or longer (as the sweeps saw it). */
  private stalledSince(connection: Connection, now: number): number | undefined {
    const progress = connection.active?.progress;
    if (progress === undefined || connection.socket.destroyed || connection.socket.writableLength === 0) return undefined;
    return now - progress.at >= STALLED_WRITE_MS ? progress.at : undefined;
  }

  /** Of the connections whose peers stalled, the one stalled longest. */
  private longestStalled(now: number): Connection | undefined {
    let longest: { connection: Connection; since: number } | undefined;
    for (const connection of this.connections.values()) {
      const since = this.stalledSince(connection, now);
      if (since !== undefined && (longest === undefined || since < longest.since)) longest = { connection, since };
    }
    return longest?.connection;
  }

  /**
   * Hands the request to the handler now, or once its connection has credit again: a peer that
   * repeats cheap requests (HEAD, /-/ready) as fast as they are answered gets its share of the
   * event loop and no more. The request counts as in progress meanwhile.
   */
  private dispatchAtRate(connection: Connection, handler: http.RequestListener, request: http.IncomingMessage, response: http.ServerResponse): void {
    const rate = this.limits.maxRequestRate;
    if (rate <= 0) return this.dispatch(connection, handler, request, response);
    const now = this.now();
    const waitMs = connection.service.takeRequest(now, rate);
    if (waitMs === 0) return this.dispatch(connection, handler, request, response);
    this.metrics?.requestsDelayed.inc({ listener: this.listener });
    connection.active = { request, response, startedAt: now, bytesReadAtStart: connection.socket.bytesRead, writingSince: undefined, progress: undefined };
    const timer = setTimeout(() => {
      connection.socket.off('close', cancel);
      if (connection.socket.destroyed) return;
      this.dispatch(connection, handler, request, response);
    }, waitMs);
    const cancel = () => clearTimeout(timer);
    connection.socket.once('close', cancel);
  }

  private dispatch(connection: Connection, handler: http.RequestListener, request: http.IncomingMessage, response: http.ServerResponse): void {
    connection.active = { request, response, startedAt: this.now(), bytesReadAtStart: connection.socket.bytesRead, writingSince: undefined, progress: undefined };
    connection.requests += 1;
    const limit = this.limits.maxRequestsPerConnection;
    const last = limit > 0 && connection.requests >= limit;
    if (last) {
      // Node closes the connection once this answer is sent; pipelined requests behind it go with it.
      response.setHeader('Connection', 'close');
      connection.waiting.length = 0;
      this.metrics?.connectionsClosed.inc({ listener: this.listener, reason: 'request_limit' });
    }
    const done = () => {
      response.off('finish', done);
      response.off('close', done);
      if (connection.active?.response !== response) return;
      connection.active = undefined;
      if (response.writableFinished) connection.service.answered(this.now());
      if (!connection.socket.destroyed && !last) connection.waiting.shift()?.();
    };
    response.on('finish', done);
    response.on('close', done);
    handler(request, response);
  }

  private connectionOf(socket: Socket): Connection | undefined {
    return this.connections.get(socket) ?? this.secure.get(socket);
  }

  private clientError(error: NodeJS.ErrnoException, socket: Socket): void {
    const connection = this.connectionOf(socket);
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // Node's check does not say which of its two timeouts expired: a connection with a request
      // handed to the handler (or waiting for one) had its head in time.
      const headComplete = connection !== undefined && (connection.active !== undefined || connection.waiting.length > 0);
      this.metrics?.connectionsClosed.inc({ listener: this.listener, reason: headComplete ? 'request_timeout' : 'headers_timeout' });
    }
    if (socket.writable && socket.bytesWritten === 0) socket.write(CLIENT_ERROR_ANSWERS[error.code ?? ''] ?? BAD_REQUEST);
    socket.destroy();
  }

  private close(connection: Connection, reason: CloseReason): void {
    if (connection.socket.destroyed) return;
    this.metrics?.connectionsClosed.inc({ listener: this.listener, reason });
    connection.waiting.length = 0;
    connection.socket.destroy();
  }
}
