/**
 * Request bodies into events: NDJSON (one event per line), JSON (one event or an array) or the
 * plugin's compact body (compact.ts).
 * A body that cannot be read at all is an error for the whole request; a bad line is reported
 * by index and the other lines still count.
 */
import { SidecarError } from '../errors.js';
import { decodeCompact } from './compact.js';
import type { ObserverEvent } from './events.js';
import { BoundCheck, type StringLimits } from './bounds.js';
import { readLine, type LineRejection } from './shapes.js';
import { runInSlices, type Slicer } from '../slices.js';

export type BodyFormat = 'ndjson' | 'json' | 'compact';

export interface LineError {
  readonly index: number;
  readonly reason: LineRejection | 'invalid_json' | 'line_too_large';
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
  /** A longer NDJSON line is refused unread (`line_too_large`): a real event is a few KiB. */
  readonly maxLineBytes?: number;
  /** A JSON or compact body is one document, parsed in one go: it is bounded on its own. */
  readonly maxJsonBytes?: number;
  /** Byte limits of ids and names (bounds.ts); a longer one is absent and counted. */
  readonly strings?: StringLimits;
}

/** Defaults of --ingest.max-line-bytes and --ingest.max-json-bytes. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024;
export const DEFAULT_MAX_JSON_BYTES = 1024 * 1024;

/** Lines (read or skipped) between two points where the decoder may pause. */
export const LINES_PER_STEP = 64;

// Marks a line that is not JSON, so it is reported by its index.
const UNPARSEABLE = Symbol('unparseable');

/** The parsed value, or UNPARSEABLE: no result object per line. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return UNPARSEABLE;
  }
}

/** Adds one parsed item (or its error) to the result being built; `check` serves the whole body. */
function collectItem(decoded: DecodedBody, index: number, item: unknown, options: DecodeOptions, check: BoundCheck): void {
  if (item === UNPARSEABLE) {
    decoded.errors.push({ index, reason: 'invalid_json' });
    return;
  }
  const result = readLine(item, options.arrivedAt, check);
  if (typeof result === 'string') decoded.errors.push({ index, reason: result });
  else decoded.events.push(result);
}

/** Whether bytes [start, end) hold nothing but JSON whitespace. */
function isBlank(body: Buffer, start: number, end: number): boolean {
  for (let index = start; index < end; index += 1) {
    const byte = body[index];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}

/**
 * NDJSON, one line at a time, pausing (yield) every LINES_PER_STEP lines, blank ones included,
 * so a body of millions of tiny or empty lines never holds the event loop.
 */
function* decodeNdjson(body: Buffer, options: DecodeOptions): Generator<void, DecodedBody> {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const decoded: { events: ObserverEvent[]; errors: LineError[]; lines: number } = { events: [], errors: [], lines: 0 };
  const check = new BoundCheck(options.strings);
  let unparseable = 0;
  let start = 0;
  for (let index = 0; start <= body.length; index += 1) {
    if (index % LINES_PER_STEP === LINES_PER_STEP - 1) yield;
    let end = body.indexOf(0x0a, start);
    if (end === -1) end = body.length;
    const lineStart = start;
    start = end + 1;
    // Length first: an over-long line is never scanned, let alone parsed.
    if (end - lineStart > maxLineBytes) {
      decoded.lines += 1;
      if (decoded.lines > options.maxEvents) throw new SidecarError('too_many_events');
      decoded.errors.push({ index, reason: 'line_too_large' });
      continue;
    }
    if (isBlank(body, lineStart, end)) continue;
    decoded.lines += 1;
    if (decoded.lines > options.maxEvents) throw new SidecarError('too_many_events');
    // Decoding each line from its own bytes is about twice as fast as splitting one body string
    // (JSON.parse then works on flat strings; bench/RESULTS.md, section 1).
    const parsed = parseJson(body.toString('utf8', lineStart, end));
    if (parsed === UNPARSEABLE) unparseable += 1;
    collectItem(decoded, index, parsed, options, check);
  }
  if (decoded.lines === 0) throw new SidecarError('empty_body');
  if (unparseable === decoded.lines) throw new SidecarError('invalid_json');
  return decoded;
}

function* decodeJson(body: Buffer, options: DecodeOptions): Generator<void, DecodedBody> {
  if (body.length > (options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES)) throw new SidecarError('too_large');
  const text = body.toString('utf8');
  if (text.trim() === '') throw new SidecarError('empty_body');
  const value = parseJson(text);
  if (value === UNPARSEABLE) throw new SidecarError('invalid_json');
  if (Array.isArray(value)) {
    if (value.length === 0) throw new SidecarError('empty_body');
    if (value.length > options.maxEvents) throw new SidecarError('too_many_events');
    const decoded: DecodedBody = { events: [], errors: [], lines: value.length };
    const check = new BoundCheck(options.strings);
    for (let index = 0; index < value.length; index += 1) {
      if (index % LINES_PER_STEP === LINES_PER_STEP - 1) yield;
      collectItem(decoded, index, value[index], options, check);
    }
    return decoded;
  }
  if (typeof value !== 'object' || value === null) throw new SidecarError('invalid_body');
  const decoded: DecodedBody = { events: [], errors: [], lines: 1 };
  collectItem(decoded, 0, value, options, new BoundCheck(options.strings));
  return decoded;
}

/** The decoding steps: each `next()` does a bounded amount of work. */
export function decodeSteps(body: Buffer, options: DecodeOptions): Generator<void, DecodedBody> {
  if (options.format === 'compact') return decodeCompact(body, options, options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES);
  return options.format === 'ndjson' ? decodeNdjson(body, options) : decodeJson(body, options);
}

/** Decodes in one go (tests, benchmarks, files). */
export function decodeBody(body: Buffer, options: DecodeOptions): DecodedBody {
  const steps = decodeSteps(body, options);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * Decodes in slices of at most `sliceMs` of work, handing the event loop back between them
 * (`pause`), so scrapes and other requests are answered while a large body is decoded.
 */
export async function decodeBodyInSlices(body: Buffer, options: DecodeOptions, slicer: Slicer): Promise<DecodedBody> {
  const steps = decodeSteps(body, options);
  let decoded: DecodedBody | undefined;
  await runInSlices(() => {
    const step = steps.next();
    if (step.done === true) decoded = step.value;
    return decoded === undefined;
  }, slicer);
  return decoded as DecodedBody;
}
