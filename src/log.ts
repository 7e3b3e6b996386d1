/**
 * Structured logs (pino) as JSON lines or logfmt, with level names and ISO-8601 times. Log calls
 * pass codes, counts and addresses only: event content never reaches a log line, and nothing
 * here logs request bodies, headers or paths a client chose.
 */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export type LogFormat = 'json' | 'logfmt';

/** Fields written first in a logfmt line, in this order; the rest follow as pino wrote them. */
const LEADING_FIELDS = ['time', 'level', 'msg'] as const;

/** A bare logfmt value: no space, quote, equals sign, backslash or control character. */
const BARE = /^[^\s"=\\\p{Cc}]+$/u;

function logfmtValue(value: unknown): string {
  if (typeof value === 'string') return BARE.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  // Arrays and anything else pino could hand over, as one quoted JSON string on the same line.
  return JSON.stringify(JSON.stringify(value) ?? typeof value);
}

const logfmtKey = (key: string): string => key.replace(/[^\w.-]/g, '_');

/** key=value pairs of one record; nested objects become dotted keys (`web.host=…`). */
function logfmtPairs(record: Record<string, unknown>, prefix: string, out: string[]): void {
  for (const [key, value] of Object.entries(record)) {
    const name = prefix === '' ? logfmtKey(key) : `${prefix}.${logfmtKey(key)}`;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) logfmtPairs(value as Record<string, unknown>, name, out);
    else out.push(`${name}=${logfmtValue(value)}`);
  }
}

/** One pino JSON line as one logfmt line (`time=… level=info msg=listening web=…`). */
export function toLogfmt(jsonLine: string): string {
  const record = JSON.parse(jsonLine) as Record<string, unknown>;
  const ordered: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const field of LEADING_FIELDS) if (Object.hasOwn(record, field)) ordered[field] = record[field];
  for (const [key, value] of Object.entries(record)) if (!Object.hasOwn(ordered, key)) ordered[key] = value;
  const pairs: string[] = [];
  logfmtPairs(ordered, '', pairs);
  return `${pairs.join(' ')}\n`;
}

/**
 * Rewrites each line in the same synchronous write call, so logfmt keeps pino's ordering and
 * durability; a worker-thread transport would not (see createLogger).
 */
export function logfmtDestination(destination: DestinationStream): DestinationStream {
  return { write: (line: string) => destination.write(toLogfmt(line)) };
}

/**
 * Writes synchronously: the sidecar logs at start, stop, on faults and (at debug) once per
 * refused request, never per event, and an asynchronous stdout could reorder or lose the last
 * lines before process.exit().
 */
export function createLogger(level: string, format: LogFormat = 'json', destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'hermes-prometheus-sidecar' },
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const sink = destination ?? pino.destination({ dest: 1, sync: true });
  return pino(options, format === 'logfmt' ? logfmtDestination(sink) : sink);
}
