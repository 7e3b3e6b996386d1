/**
 * The flags of the two listeners' connection bounds (spread into src/config.ts's OPTIONS), and
 * the settings they make. The policies behind them are connections.ts's.
 */
import { DEFAULT_MIN_BODY_BYTES_PER_SECOND, type ListenerSettings } from './listener.js';

/** The config kinds (src/configValues.ts) these flags use. */
type ListenerOptionKind = 'positiveInt' | 'nonNegativeInt' | 'seconds';

interface ListenerOption {
  readonly flag: string;
  readonly kind: ListenerOptionKind;
  readonly default: number;
  readonly help: string;
}

export const LISTENER_OPTIONS = [
  { flag: 'web.max-connections', kind: 'positiveInt', default: 64, help: 'Most connections open on the web listener. At the cap a new connection closes, in this order, the one whose peer stopped reading its answer, the oldest one with no request in progress (idle, or its request head not complete), else the one served most lately that has had an answer already; it is refused only when every connection is on its first request. Prometheus needs one per scrape job and replica; each connection may hold one unread answer in the kernel, so the cap also bounds that memory.' },
  { flag: 'web.headers-timeout', kind: 'seconds', default: 5, help: 'Seconds a request head may take to arrive on the web listener (408 and closed after; a scraper sends its head at once). The whole request may take twice this.' },
  { flag: 'web.write-timeout', kind: 'seconds', default: 30, help: 'Seconds an answer of the web listener may take to be read by the peer once sending began; past it the connection is dropped. Raise it only for scrapes of many megabytes over slow links.' },
  { flag: 'web.max-requests-per-connection', kind: 'nonNegativeInt', default: 100, help: 'Most requests one connection to the web listener may make; the last is answered with Connection: close, so a peer repeating requests wins its place again at the cap (hermes_sidecar_connections_closed_total{reason="request_limit"}). A Prometheus keeping its connection alive simply reconnects. 0: no limit.' },
  { flag: 'web.max-connection-request-rate', kind: 'nonNegativeInt', default: 10, help: 'Requests per second one connection to the web listener may make (one at once on a new connection, then credit builds up to this many); a faster request waits for its turn before it is handled (hermes_sidecar_requests_delayed_total), so a peer repeating cheap requests gets its share of the event loop and no more. A scraper makes one per scrape interval. 0: no limit.' },
  { flag: 'ingest.max-connections', kind: 'positiveInt', default: 256, help: 'Most connections open on the ingest listener, with the same eviction at the cap as --web.max-connections, a request body arriving below --ingest.min-body-rate first after a peer that stopped reading. The bridge plugin holds one per Hermes process.' },
  { flag: 'ingest.headers-timeout', kind: 'seconds', default: 5, help: 'Seconds a request head may take to arrive on the ingest listener (408 and closed after). The whole request may take this plus --ingest.body-timeout.' },
  { flag: 'ingest.write-timeout', kind: 'seconds', default: 30, help: 'Seconds an answer of the ingest listener may take to be read by the peer once sending began; past it the connection is dropped.' },
  { flag: 'ingest.max-requests-per-connection', kind: 'nonNegativeInt', default: 1000, help: 'Most requests one connection to the ingest listener may make; the last is answered with Connection: close (hermes_sidecar_connections_closed_total{reason="request_limit"}). 0: no limit.' },
  { flag: 'ingest.min-body-rate', kind: 'nonNegativeInt', default: DEFAULT_MIN_BODY_BYTES_PER_SECOND, help: 'Bytes per second below which a request body, 50 ms after its head, makes its connection the first to be closed when the ingest listener is full (hermes_sidecar_connections_closed_total{reason="slow_body"}); below the cap it still has --ingest.body-timeout. Lower it only for senders on links slower than this. 0: never.' },
] as const satisfies readonly ListenerOption[];

type ListenerFlag = (typeof LISTENER_OPTIONS)[number]['flag'];

/** The settings of both listeners from their flags' values. */
export function listenerSettings(get: (flag: ListenerFlag) => number): { readonly web: ListenerSettings; readonly ingest: ListenerSettings } {
  return {
    web: {
      maxConnections: get('web.max-connections'),
      headersTimeoutSeconds: get('web.headers-timeout'),
      writeTimeoutSeconds: get('web.write-timeout'),
      maxRequestsPerConnection: get('web.max-requests-per-connection'),
      maxRequestRate: get('web.max-connection-request-rate'),
      // The web listener reads no bodies: any that comes is slow at this rate or past it.
      minBodyBytesPerSecond: DEFAULT_MIN_BODY_BYTES_PER_SECOND,
    },
    ingest: {
      maxConnections: get('ingest.max-connections'),
      headersTimeoutSeconds: get('ingest.headers-timeout'),
      writeTimeoutSeconds: get('ingest.write-timeout'),
      maxRequestsPerConnection: get('ingest.max-requests-per-connection'),
      // A sender's batches are bounded by the queue, not by a rate: a busy Hermes posts back to back.
      maxRequestRate: 0,
      minBodyBytesPerSecond: get('ingest.min-body-rate'),
    },
  };
}
