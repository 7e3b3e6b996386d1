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
import { BoundCheck } from './bounds.js';
import { fitsBytes } from '../wireText.js';
import { readEventData, type ObserverEvent } from './events.js';
import { withErrorClass } from './errorClass.js';
import { isRecord, type Fields } from './fields.js';
import type { ValueOf } from './vocabulary.js';

export type LineRejection = Extract<ValueOf<'rejection_reason'>, 'invalid_event' | 'unknown_shape'>;


const MAX_NAME_LENGTH = 128;

function eventName(line: Fields): string | undefined | null {
  const name = line.event ?? line.hook;
  if (name === undefined) return undefined;
  if (typeof name !== 'string' || name === '' || name.length > MAX_NAME_LENGTH) return null;
  return name;
}

/**
 * Sequence metadata is ours, not Hermes': a malformed value, or an instance id past the id byte
 * limit, rejects the line rather than risk double counting.
 */
function validSequenceMeta(instance: unknown, seq: unknown, maxIdBytes: number): boolean {
  if (instance === undefined) return seq === undefined;
  if (typeof instance !== 'string' || instance === '' || !fitsBytes(instance, maxIdBytes)) return false;
  return seq === undefined || (typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0);
}

function stampedAt(line: Fields): number | undefined {
  const stamped = line.observed_at;
  return typeof stamped === 'number' && Number.isFinite(stamped) && stamped > 0 ? stamped : undefined;
}

/** Flat kwargs: everything but the name keys is the payload. */
function flatFields(line: Fields): Fields {
  const { event: _event, hook: _hook, ...fields } = line;
  return fields;
}

/**
 * One line into its event, or why it was refused. Every line of a body runs through here, so it
 * builds nothing but the event: no result wrapper, values bounded as they are read, and one
 * `check` for the whole body (taken afresh per line).
 */
export function readLine(line: unknown, arrivedAt: number, check: BoundCheck): ObserverEvent | LineRejection {
  if (!isRecord(line)) return 'invalid_event';
  const name = eventName(line);
  if (name === undefined) return 'unknown_shape';
  if (name === null) return 'invalid_event';
  const { instance, seq } = line;
  if (!validSequenceMeta(instance, seq, check.maxIdBytes)) return 'invalid_event';

  const envelope = isRecord(line.data) && (line.event !== undefined);
  // Raw Hermes kwargs in any shape: api_request_error's exception class is taken as the plugin does.
  const fields = withErrorClass(name, envelope ? (line.data as Fields) : flatFields(line));
  // The bridge plugin stamps every line with its instance; anything else was posted by another client.
  const source = instance !== undefined ? 'plugin' : envelope ? 'envelope' : 'flat';
  check.take();
  const data = readEventData(name, fields, check);
  const observedAt = check.observedAt(stampedAt(line), arrivedAt);
  // Every event has the same properties (instance and seq possibly undefined): one object shape.
  return {
    name,
    source,
    observedAt,
    instance: instance as string | undefined,
    seq: seq as number | undefined,
    data,
    rejectedValues: check.take(),
  };
}
