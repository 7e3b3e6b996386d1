/**
 * Structured JSON logs (pino). Log calls pass codes, counts and addresses only: event content
 * never reaches a log line, and nothing here logs request bodies or headers.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Writes synchronously: the sidecar logs only at start, stop and on faults (never per event),
 * and an asynchronous stdout could reorder or lose the last lines before process.exit().
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, base: { service: 'hermes-prometheus-sidecar' } }, destination ?? pino.destination({ dest: 1, sync: true }));
}
