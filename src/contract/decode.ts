/**
 * Request bodies into events: NDJSON (one event per line) or JSON (one event or an array).
 * A body that cannot be read at all is an error for the whole request; a bad line is reported
 * by index and the other lines still count.
 */
import { SidecarError } from '../errors.js';
import type { ObserverEvent } from './events.js';
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

/** Adds one parsed item (or its error) to the result being built. */
function collectItem(decoded: DecodedBody, index: number, item: unknown, options: DecodeOptions): void {
  if (item === UNPARSEABLE) {
    decoded.errors.push({ index, reason: 'invalid_json' });
    return;
  }
  const result = normalizeLine(item, options.arrivedAt);
  if (result.ok) decoded.events.push(result.event);
  else decoded.errors.push({ index, reason: result.reason });
}

/** Whether bytes [start, end) hold nothing but JSON whitespace. */
function isBlank(body: Buffer, start: number, end: number): boolean {
  for (let index = start; index < end; index += 1) {
    const byte = body[index];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}

/** [start, end) of each non-blank line, found on the bytes (UTF-8 never hides 0x0a inside a character). */
function lineRanges(body: Buffer): [number, number, number][] {
  const ranges: [number, number, number][] = [];
  let start = 0;
  for (let index = 0; start <= body.length; index += 1) {
    let end = body.indexOf(0x0a, start);
    if (end === -1) end = body.length;
    if (!isBlank(body, start, end)) ranges.push([index, start, end]);
    start = end + 1;
  }
  return ranges;
}

function decodeNdjson(body: Buffer, options: DecodeOptions): DecodedBody {
  const ranges = lineRanges(body);
  const count = ranges.length;
  if (count === 0) throw new SidecarError('empty_body');
  if (count > options.maxEvents) throw new SidecarError('too_many_events');
  const decoded: DecodedBody = { events: [], errors: [], lines: count };
  for (const [index, start, end] of ranges) {
    // Decoding each line from its own bytes is about twice as fast as splitting one body string
    // (JSON.parse then works on flat strings; bench/RESULTS.md, section 1).
    const parsed = parseJson(body.toString('utf8', start, end));
    collectItem(decoded, index, parsed.ok ? parsed.value : UNPARSEABLE, options);
  }
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
    const decoded: DecodedBody = { events: [], errors: [], lines: value.length };
    value.forEach((item: unknown, index) => collectItem(decoded, index, item, options));
    return decoded;
  }
  if (typeof value !== 'object' || value === null) throw new SidecarError('invalid_body');
  const decoded: DecodedBody = { events: [], errors: [], lines: 1 };
  collectItem(decoded, 0, value, options);
  return decoded;
}

export function decodeBody(body: Buffer, options: DecodeOptions): DecodedBody {
  return options.format === 'ndjson' ? decodeNdjson(body, options) : decodeJson(body.toString('utf8'), options);
}
