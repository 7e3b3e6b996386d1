/**
 * Structured JSON logs (pino). Log calls pass codes, counts and addresses only: event content
 * never reaches a log line, and nothing here logs request bodies or headers.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, base: { service: 'hermes-prometheus-sidecar' } }, destination);
}
