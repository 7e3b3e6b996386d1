/**
 * The compact body (`Content-Type: application/x-hermes-events-compact+json`, docs/contract.md
 * "Compact encoding"): one JSON document in which the bridge plugin sends a batch as positional
 * rows, the field names once per body in its `schema`:
 *
 *   {"v": 1, "instance": <id>, "schema": {"events": [[<event>, <field>, ...], ...],
 *    "usage": [<usage key>, ...], "usage_flags": [<usage key>, ...], "micros": [<field>, ...]}, "seq": <first seq>,
 *    "heartbeat": <plugin_heartbeat line>?, "events": [[<code>, <observed_at µs>, <value>, ...], ...]}
 *
 * Each row becomes the plugin line it stands for (`{event, observed_at, instance, seq, data}`,
 * seq counting up from `seq`; a number under a field `micros` names is integer microseconds and
 * becomes seconds) and is read by readLine like any NDJSON line: same readers, same
 * bounds, same per-line rejections. A body whose frame or schema is malformed is refused whole
 * (invalid_compact_body, 400); a version this sidecar does not read is a 415, which the plugin
 * answers by sending NDJSON.
 */
import { SidecarError } from '../errors.js';
import { BoundCheck, type StringLimits } from './bounds.js';
import type { ObserverEvent } from './events.js';
import { isRecord, type Fields } from './fields.js';
import { readLine, type LineRejection } from './shapes.js';

export const COMPACT_MEDIA_TYPE = 'application/x-hermes-events-compact+json';
export const COMPACT_VERSION = 1;

/** Event shapes one schema may describe (the contract has about thirty). */
export const MAX_SCHEMA_EVENTS = 256;
/** Fields one event shape may name. */
export const MAX_SCHEMA_FIELDS = 64;
/** Usage keys (and flags) a schema may name. */
export const MAX_USAGE_KEYS = 32;

/** A field or usage key name: a lower-case identifier (never `__proto__` or other prototype names with underscores first). */
const FIELD_NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** An event name, as a line's `event` (shapes.ts: 1 to 128 characters), and an identifier. */
const EVENT_NAME = /^[a-z][a-z0-9_]{0,127}$/;
const USAGE_FIELD = 'usage';
const REPORTED_USAGE_FIELDS = 'reported_usage_fields';

/** Rows between two points where the decoder may pause (as NDJSON lines). */
const ROWS_PER_STEP = 64;

/** What decoding a compact body needs (decode.ts hands it its DecodeOptions). */
export interface CompactOptions {
  readonly maxEvents: number;
  readonly arrivedAt: number;
  readonly strings?: StringLimits;
}

/** The events of a compact body and its rejected rows (decode.ts's DecodedBody). */
export interface DecodedRows {
  readonly events: ObserverEvent[];
  readonly errors: { readonly index: number; readonly reason: LineRejection }[];
  /** Rows, and the heartbeat when there is one. */
  readonly lines: number;
}

interface Schema {
  readonly events: readonly (readonly [string, ...string[]])[];
  readonly usage: readonly string[];
  readonly usageFlags: readonly string[];
  /** Fields whose numbers are integer microseconds (numbers in seconds, cheaper to encode). */
  readonly micros: ReadonlySet<string>;
}

function invalid(): SidecarError {
  return new SidecarError('invalid_compact_body');
}

function names(value: unknown, pattern: RegExp, max: number): string[] {
  if (!Array.isArray(value) || value.length > max) throw invalid();
  const seen = new Set<string>();
  for (const name of value) {
    if (typeof name !== 'string' || !pattern.test(name) || seen.has(name)) throw invalid();
    seen.add(name);
  }
  return value as string[];
}

function readSchema(value: unknown): Schema {
  if (!isRecord(value) || !Array.isArray(value.events) || value.events.length > MAX_SCHEMA_EVENTS) throw invalid();
  const events = value.events.map((entry: unknown) => {
    if (!Array.isArray(entry) || entry.length === 0) throw invalid();
    const [event, ...fields] = entry as unknown[];
    if (typeof event !== 'string' || !EVENT_NAME.test(event)) throw invalid();
    return [event, ...names(fields, FIELD_NAME, MAX_SCHEMA_FIELDS)] as [string, ...string[]];
  });
  return {
    events,
    usage: names(value.usage ?? [], FIELD_NAME, MAX_USAGE_KEYS),
    usageFlags: names(value.usage_flags ?? [], FIELD_NAME, MAX_USAGE_KEYS),
    micros: new Set(names(value.micros ?? [], FIELD_NAME, MAX_SCHEMA_FIELDS)),
  };
}

/** The frame of a compact body: version, instance, first seq, schema, rows. */
interface Frame {
  readonly instance: string;
  readonly seq: number;
  readonly schema: Schema;
  readonly heartbeat: unknown;
  readonly rows: readonly unknown[];
}

function readFrame(value: unknown, options: CompactOptions): Frame {
  if (!isRecord(value)) throw invalid();
  if (value.v !== COMPACT_VERSION) throw new SidecarError('unsupported_compact_version');
  const { instance, seq, events: rows, heartbeat } = value;
  if (typeof instance !== 'string' || instance === '') throw invalid();
  if (!Array.isArray(rows)) throw invalid();
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0 || !Number.isSafeInteger(seq + rows.length)) throw invalid();
  if (heartbeat !== undefined && !isRecord(heartbeat)) throw invalid();
  if (rows.length + (heartbeat === undefined ? 0 : 1) > options.maxEvents) throw new SidecarError('too_many_events');
  if (rows.length === 0 && heartbeat === undefined) throw new SidecarError('empty_body');
  return { instance, seq, schema: readSchema(value.schema), heartbeat, rows };
}

/** A compact usage list as the usage object it stands for; undefined when it is not one. */
function usageObject(value: unknown[], schema: Schema): Record<string, unknown> | undefined {
  if (value.length > schema.usage.length + 1) return undefined;
  const usage: Record<string, unknown> = {};
  schema.usage.forEach((key, index) => {
    const count = value[index];
    if (count !== null && count !== undefined) usage[key] = count;
  });
  const flags = value[schema.usage.length];
  if (flags !== undefined) {
    if (!Array.isArray(flags) || flags.length > schema.usageFlags.length) return undefined;
    const reported: Record<string, unknown> = {};
    schema.usageFlags.forEach((key, index) => {
      const flag: unknown = flags[index];
      if (flag !== null && flag !== undefined) reported[key] = flag;
    });
    usage[REPORTED_USAGE_FIELDS] = reported;
  }
  return usage;
}

/**
 * A row as the plugin line it stands for, or undefined when it does not fit the schema (the
 * row is then rejected as invalid_event, like a malformed line).
 */
export function rowLine(row: unknown, seq: number, instance: string, schema: Schema): Fields | undefined {
  if (!Array.isArray(row) || row.length < 2) return undefined;
  const [code, micros] = row as unknown[];
  if (typeof code !== 'number' || !Number.isInteger(code)) return undefined;
  const shape = schema.events[code];
  if (shape === undefined || row.length > shape.length + 1) return undefined;
  const data: Record<string, unknown> = {};
  for (let index = 2; index < row.length; index += 1) {
    const value: unknown = row[index];
    if (value === null) continue;
    const name = shape[index - 1] as string;
    if (name === USAGE_FIELD && Array.isArray(value)) {
      const usage = usageObject(value, schema);
      if (usage === undefined) return undefined;
      data[name] = usage;
    } else if (typeof value === 'number' && schema.micros.has(name)) data[name] = value / 1e6;
    else data[name] = value;
  }
  const line: Record<string, unknown> = { event: shape[0], instance, seq, data };
  if (typeof micros === 'number') line.observed_at = micros / 1e6;
  return line;
}

function collect(decoded: DecodedRows, index: number, line: unknown, arrivedAt: number, check: BoundCheck): void {
  const result = line === undefined ? 'invalid_event' : readLine(line, arrivedAt, check);
  if (typeof result === 'string') decoded.errors.push({ index, reason: result });
  else decoded.events.push(result);
}

/**
 * Decodes a compact body into the events its rows stand for (the heartbeat, when present,
 * first, as line 0), pausing every ROWS_PER_STEP rows. Bounded like a JSON body: by
 * --ingest.max-json-bytes before it is parsed, by --ingest.max-events-per-request after.
 */
export function* decodeCompact(body: Buffer, options: CompactOptions, maxJsonBytes: number): Generator<void, DecodedRows> {
  if (body.length > maxJsonBytes) throw new SidecarError('too_large');
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new SidecarError('invalid_json');
  }
  const frame = readFrame(value, options);
  const check = new BoundCheck(options.strings);
  const offset = frame.heartbeat === undefined ? 0 : 1;
  const decoded: DecodedRows = { events: [], errors: [], lines: frame.rows.length + offset };
  if (frame.heartbeat !== undefined) collect(decoded, 0, frame.heartbeat, options.arrivedAt, check);
  for (let index = 0; index < frame.rows.length; index += 1) {
    if (index % ROWS_PER_STEP === ROWS_PER_STEP - 1) yield;
    const line = rowLine(frame.rows[index], frame.seq + index, frame.instance, frame.schema);
    collect(decoded, index + offset, line, options.arrivedAt, check);
  }
  return decoded;
}
