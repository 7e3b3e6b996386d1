/**
 * The three shapes events arrive in (docs/contract.md, "Wire format"), told apart and
 * normalized into one ObserverEvent:
 *
 *  1. plugin line: {event, observed_at, instance, seq, data}
 *  2. envelope:    {event, data}
 *  3. flat kwargs: {event | hook, ...fields}
 *
 * The same logical event in any shape yields the same ObserverEvent (observedAt aside, which
 * falls back to the arrival time when the sender did not stamp it).
 */
import { boundedObservedAt, readBoundedEventData, type BoundedField } from './bounds.js';
import type { ObserverEvent } from './events.js';
import { withErrorClass } from './errorClass.js';
import { isRecord, type Fields } from './fields.js';
import type { ValueOf } from '../metrics/catalogue.js';

export type LineRejection = Extract<ValueOf<'rejection_reason'>, 'invalid_event' | 'unknown_shape'>;

export type ShapeResult =
  | { readonly ok: true; readonly event: ObserverEvent }
  | { readonly ok: false; readonly reason: LineRejection };

const MAX_NAME_LENGTH = 128;
const MAX_INSTANCE_LENGTH = 128;

const reject = (reason: LineRejection): ShapeResult => ({ ok: false, reason });

function eventName(line: Fields): string | undefined | null {
  const name = line.event ?? line.hook;
  if (name === undefined) return undefined;
  if (typeof name !== 'string' || name === '' || name.length > MAX_NAME_LENGTH) return null;
  return name;
}

/** Sequence metadata is ours, not Hermes': a malformed value rejects the line rather than risk double counting. */
function sequenceMeta(line: Fields): { instance?: string; seq?: number } | null {
  const { instance, seq } = line;
  if (instance === undefined && seq === undefined) return {};
  if (typeof instance !== 'string' || instance === '' || instance.length > MAX_INSTANCE_LENGTH) return null;
  if (seq === undefined) return { instance };
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return null;
  return { instance, seq };
}

function observedAt(line: Fields, arrivedAt: number): { at: number; rejected: boolean } {
  const stamped = line.observed_at;
  return boundedObservedAt(typeof stamped === 'number' && Number.isFinite(stamped) && stamped > 0 ? stamped : undefined, arrivedAt);
}

/** Flat kwargs: everything but the name keys is the payload. */
function flatFields(line: Fields): Fields {
  const { event: _event, hook: _hook, ...fields } = line;
  return fields;
}

export function normalizeLine(line: unknown, arrivedAt: number): ShapeResult {
  if (!isRecord(line)) return reject('invalid_event');
  const name = eventName(line);
  if (name === undefined) return reject('unknown_shape');
  if (name === null) return reject('invalid_event');
  const meta = sequenceMeta(line);
  if (meta === null) return reject('invalid_event');

  const envelope = isRecord(line.data) && (line.event !== undefined);
  // Raw Hermes kwargs in any shape: api_request_error's exception class is taken as the plugin does.
  const fields = withErrorClass(name, envelope ? (line.data as Fields) : flatFields(line));
  // The bridge plugin stamps every line with its instance; anything else was posted by another client.
  const source = meta.instance !== undefined ? 'plugin' : envelope ? 'envelope' : 'flat';
  const observed = observedAt(line, arrivedAt);
  const { data, rejected } = readBoundedEventData(name, fields);
  const rejectedValues: readonly BoundedField[] = observed.rejected ? [...rejected, 'observed_at'] : rejected;
  return {
    ok: true,
    // Every event has the same properties (instance and seq possibly undefined): one object shape.
    event: { name, source, observedAt: observed.at, instance: meta.instance, seq: meta.seq, data, rejectedValues },
  };
}
