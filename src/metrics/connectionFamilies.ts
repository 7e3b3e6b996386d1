/**
 * The listeners' connection families and their value sets, written by src/net/connections.ts.
 * Declared at the metrics layer, below src/net/, which imports them through
 * src/metrics/catalogue.ts (ValueOf) and src/metrics/registry.ts (OwnedMetrics) until its own
 * modules name CONNECTION_FAMILIES directly.
 */
import { counter, gauge, type Declarations } from './declare.js';

/** The closed value sets of this module's labels. */
export const CONNECTION_VALUES = {
  /** The sidecar's two listeners. */
  listener: ['web', 'ingest'],
  /**
   * Why a listener closed a connection itself: refused at the connection cap (every connection
   * mid-request), evicted at the cap to make room, its request head or whole request too slow,
   * its response not drained in time, too many pipelined requests waiting.
   */
  connection_close_reason: ['limit', 'evicted', 'headers_timeout', 'request_timeout', 'write_timeout', 'pipeline_limit'],

} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const CONNECTION_FAMILIES = {
  connectionsClosed: counter('hermes_sidecar_connections_closed_total', { listener: CONNECTION_VALUES.listener, reason: CONNECTION_VALUES.connection_close_reason }, 'self',
    'Connections a listener closed itself, by listener and reason ({reason}): refused at --<listener>.max-connections with every connection mid-request (limit), the oldest idle or half-sent one closed to make room at the cap (evicted), request head or whole request too slow (headers_timeout, request_timeout), a response not drained within --<listener>.write-timeout (write_timeout), more pipelined requests waiting than allowed (pipeline_limit).'),
  connectionsOpen: gauge('hermes_sidecar_connections_open', { listener: CONNECTION_VALUES.listener }, 'self',
    'Connections open on each listener (bounded by --web.max-connections and --ingest.max-connections).'),
  connectionsLimit: gauge('hermes_sidecar_connections_limit', { listener: CONNECTION_VALUES.listener }, 'self',
    'The configured cap on open connections of each listener.'),
} as const satisfies Declarations;
