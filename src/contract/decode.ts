/**
 * Request bodies into events: NDJSON (one event per line) or JSON (one event or an array).
 * A body that cannot be read at all is an error for the whole request; a bad line is reported
 * by index and the other lines still count.
 */
import { SidecarError } from '../errors.js';
import type { EventSource, ObserverEvent } from './events.js';
import { normalizeLine, type LineRejection } from './shapes.js';

export type BodyFormat = 'ndjson' | 'json';

export interface LineError {
  readonly index: number;
  readonly reason: LineRejection | 'invalid_json';
}

export interface DecodedBody {
  readonly events: ObserverEvent[];
  readonly errors: LineError[];
  /** Events the sender meant to send: non-blank lines or array items. */
  readonly lines: number;
}

export interface DecodeOptions {
  readonly format: BodyFormat;
  readonly maxEvents: number;
  readonly source: EventSource;
  readonly arrivedAt: number;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

// Marks an NDJSON line that is not JSON, so it is reported by its index.
const UNPARSEABLE = Symbol('unparseable');

function collect(items: Iterable<[number, unknown | typeof UNPARSEABLE]>, options: DecodeOptions, lines: number): DecodedBody {
  const events: ObserverEvent[] = [];
  const errors: LineError[] = [];
  for (const [index, item] of items) {
    if (item === UNPARSEABLE) {
      errors.push({ index, reason: 'invalid_json' });
      continue;
    }
    const result = normalizeLine(item, options.source, options.arrivedAt);
    if (result.ok) events.push(result.event);
    else errors.push({ index, reason: result.reason });
  }
  return { events, errors, lines };
}

function* ndjsonItems(lines: readonly string[]): Generator<[number, unknown]> {
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const parsed = parseJson(line);
    yield [index, parsed.ok ? parsed.value : UNPARSEABLE];
  }
}

function decodeNdjson(text: string, options: DecodeOptions): DecodedBody {
  const lines = text.split('\n');
  const count = lines.reduce((total, line) => (line.trim() === '' ? total : total + 1), 0);
  if (count === 0) throw new SidecarError('empty_body');
  if (count > options.maxEvents) throw new SidecarError('too_many_events');
  const decoded = collect(ndjsonItems(lines), options, count);
  const unparseable = decoded.errors.filter((error) => error.reason === 'invalid_json').length;
  if (unparseable === count) throw new SidecarError('invalid_json');
  return decoded;
}

function decodeJson(text: string, options: DecodeOptions): DecodedBody {
  if (text.trim() === '') throw new SidecarError('empty_body');
  const parsed = parseJson(text);
  if (!parsed.ok) throw new SidecarError('invalid_json');
  const { value } = parsed;
  if (Array.isArray(value)) {
    if (value.length === 0) throw new SidecarError('empty_body');
    if (value.length > options.maxEvents) throw new SidecarError('too_many_events');
    return collect(value.entries(), options, value.length);
  }
  if (typeof value !== 'object' || value === null) throw new SidecarError('invalid_body');
  return collect([[0, value]], options, 1);
}

export function decodeBody(body: Buffer, options: DecodeOptions): DecodedBody {
  const text = body.toString('utf8');
  return options.format === 'ndjson' ? decodeNdjson(text, options) : decodeJson(text, options);
}
