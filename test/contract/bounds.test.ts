/**
 * Every value the readers let through is bounded. The fields are not listed here: they come from
 * the contract's own declarations (plugin/hermes_prometheus_bridge/contract.json, the table the
 * plugin's allow-lists are derived from), so a field added there without a bound fails here.
 */
import { describe, expect, it } from 'vitest';
import { BOUNDS, BoundCheck, DEFAULT_STRING_LIMITS } from '../../src/contract/bounds.js';
import { fitsBytes } from '../../src/wireText.js';
import { readEventData, type EventData } from '../../src/contract/events.js';
import { VALUES } from '../../src/contract/vocabulary.js';
import { readContractTable } from '../support/contractTable.js';

interface FieldDeclaration {
  readonly type?: string;
}
const table = readContractTable<FieldDeclaration>();

/** Every hook the contract declares with its fields (flat and observer registrations, and the plugin's added fields). */
function declaredHooks(): [string, Record<string, FieldDeclaration>][] {
  const hooks = new Map<string, Record<string, FieldDeclaration>>();
  for (const section of [table.hooks, table.observer]) {
    for (const [hook, entry] of Object.entries(section)) {
      hooks.set(hook, { ...hooks.get(hook), ...entry.fields, ...entry.added });
    }
  }
  hooks.set(table.heartbeat.event, { ...table.heartbeat.fields });
  return [...hooks];
}

type Payload = Record<string, unknown>;

/**
 * Where a number can sit in a hook's payload: each top-level number or integer field, each usage
 * key under `usage`, and a drop total under `dropped`.
 */
interface NumericPath {
  readonly path: string;
  /** Sets the value at the path; undefined removes it. */
  readonly set: (payload: Payload, value: number | undefined) => void;
}

function numericPaths(fields: Record<string, FieldDeclaration>): NumericPath[] {
  const paths: NumericPath[] = [];
  for (const [name, declaration] of Object.entries(fields)) {
    if (declaration.type === 'number' || declaration.type === 'integer') paths.push({ path: name, set: (payload, value) => void (payload[name] = value) });
    if (name === 'usage') {
      for (const key of table.usage_keys) {
        paths.push({ path: `usage.${key}`, set: (payload, value) => void (payload.usage = { ...(payload.usage as Payload), [key]: value }) });
      }
    }
    if (name === 'dropped') paths.push({ path: 'dropped.post_tool_call.queue_full', set: (payload, value) => void (payload.dropped = { post_tool_call: { queue_full: value } }) });
  }
  return paths;
}

/** A payload with every numeric field at a small plausible value, so derived values (differences) are computed too. */
function plausible(fields: Record<string, FieldDeclaration>): Payload {
  const payload: Payload = {};
  for (const { set } of numericPaths(fields)) set(payload, 1);
  return payload;
}

function numbersIn(value: unknown, found: number[] = []): number[] {
  if (typeof value === 'number') found.push(value);
  else if (typeof value === 'object' && value !== null) for (const inner of Object.values(value)) numbersIn(inner, found);
  return found;
}

/** Every string in the event data, with the property it sits under. */
function stringsIn(value: unknown, key = '', found: [string, string][] = []): [string, string][] {
  if (typeof value === 'string') found.push([key, value]);
  else if (typeof value === 'object' && value !== null) for (const [inner, nested] of Object.entries(value)) stringsIn(nested, inner, found);
  return found;
}

const read = (hook: string, payload: Payload): { data: EventData; rejected: readonly string[] } => {
  const check = new BoundCheck();
  const data = readEventData(hook, payload, check);
  return { data, rejected: check.take() };
};

/** The largest bound of any value that is summed into a sample. */
const LARGEST_SUMMED_BOUND = Math.max(BOUNDS.tokens, BOUNDS.durationSeconds, BOUNDS.sizeBytes, BOUNDS.droppedTotal, BOUNDS.retryCount, BOUNDS.costUsd);

const numericCases = declaredHooks().flatMap(([hook, fields]) => numericPaths(fields).map(({ path, set }) => ({ hook, path, set, fields })));

describe('every numeric field the contract declares is bounded', () => {
  it('finds the numeric fields it checks (the contract table is read, not a copy of it)', () => {
    const paths = new Set(numericCases.map(({ path }) => path));
    for (const path of ['api_duration', 'cost_usd', 'duration_ms', 'usage.input_tokens', 'size_bytes', 'acked_seq', 'dropped.post_tool_call.queue_full']) expect(paths).toContain(path);
  });

  it.each(numericCases.map((entry) => [`${entry.hook} ${entry.path}`, entry] as const))('%s at 1e300 never reaches the event data, and is counted when it would', (_name, { hook, set, fields }) => {
    const huge = plausible(fields);
    set(huge, 1e300);
    const { data, rejected } = read(hook, huge);
    // acked_seq is compared, never summed; its bound is the largest exact integer.
    expect(numbersIn(data).filter((number) => number > BOUNDS.ackedSeq)).toEqual([]);
    // Uncounted only when the value changed nothing (a start after its end reads as no duration).
    const withoutIt = plausible(fields);
    set(withoutIt, undefined);
    if (rejected.length === 0) expect(data).toEqual(read(hook, withoutIt).data);
  });

  it('every number a sample sums stays finite even after 2^53 maximal values', () => {
    // A counter or histogram sum grows by at most its field's bound per event: no process
    // applies 2^53 events, and even that many maximal values stay far inside the finite range.
    expect(Number.isFinite(LARGEST_SUMMED_BOUND * Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(LARGEST_SUMMED_BOUND * Number.MAX_SAFE_INTEGER).toBeLessThan(Number.MAX_VALUE / 1e250);
  });

  it('cost_usd past its bound is absent and counted by field', () => {
    const check = new BoundCheck();
    const data = readEventData('post_api_request', { cost_usd: BOUNDS.costUsd * 2, cost_status: 'actual' }, check);
    expect(data).toMatchObject({ type: 'api_attempt_succeeded', cost: { usd: undefined, status: 'actual' } });
    expect(check.take()).toEqual(['cost_usd']);
    readEventData('post_api_request', { cost_usd: BOUNDS.costUsd }, check);
    expect(check.take()).toEqual([]);
  });
});

const HUGE = 'x'.repeat(64 * 1024);
const { maxIdBytes, maxLabelValueBytes } = DEFAULT_STRING_LIMITS;
/** Event data properties that hold ids (never labels): bounded by the id limit. */
const ID_PROPERTY = /Id$|^sessionKey$/;

const stringCases = declaredHooks().flatMap(([hook, fields]) =>
  Object.entries(fields)
    .filter(([, declaration]) => declaration.type === 'string')
    .map(([name]) => ({ hook, name })),
);

describe('every string field the contract declares is bounded in bytes', () => {
  it('finds the string fields it checks', () => {
    const names = new Set(stringCases.map(({ name }) => name));
    for (const name of ['session_id', 'turn_id', 'api_request_id', 'tool_call_id', 'child_session_id', 'session_key', 'model', 'tool_name', 'pattern_key']) expect(names).toContain(name);
  });

  it.each(stringCases.map((entry) => [`${entry.hook} ${entry.name}`, entry] as const))('%s of 64 KiB is absent from the event data and counted under its name', (_name, { hook, name }) => {
    const { data, rejected } = read(hook, { [name]: HUGE });
    for (const [property, value] of stringsIn(data)) {
      expect(fitsBytes(value, ID_PROPERTY.test(property) ? maxIdBytes : maxLabelValueBytes)).toBe(true);
    }
    const bareRead = JSON.stringify(read(hook, {}).data);
    // A field the reader reads (its data differs from the bare event's when given a short value) is counted.
    if (JSON.stringify(read(hook, { [name]: 'short' }).data) !== bareRead) expect(rejected).toEqual([name]);
    else expect(rejected).toEqual([]);
  });

  it('every rejected string field is a value of the field label', () => {
    const fields: readonly string[] = VALUES.bounded_field;
    for (const { hook, name } of stringCases) for (const field of read(hook, { [name]: HUGE }).rejected) expect(fields).toContain(field);
  });

  it('an id within the limit is kept whole; one byte more is absent; multi-byte characters count as their UTF-8 bytes', () => {
    const fits = 'a'.repeat(maxIdBytes);
    expect(read('pre_tool_call', { tool_call_id: fits })).toMatchObject({ data: { toolCallId: fits }, rejected: [] });
    expect(read('pre_tool_call', { tool_call_id: `${fits}a` })).toMatchObject({ data: { toolCallId: undefined }, rejected: ['tool_call_id'] });
    const wide = 'é'.repeat(maxIdBytes / 2 + 1);
    expect(read('pre_tool_call', { tool_call_id: wide })).toMatchObject({ data: { toolCallId: undefined }, rejected: ['tool_call_id'] });
  });

  it('heartbeat drop keys past the id limit are passed on as `other`, never whole', () => {
    const { data } = read('plugin_heartbeat', { dropped: { [HUGE]: { [`${HUGE}r`]: 3 } } });
    expect(data).toMatchObject({ type: 'plugin_heartbeat', dropped: [{ hook: 'other', reason: 'other', total: 3 }] });
  });

  it('limits are injected: a check built with other limits applies them', () => {
    const check = new BoundCheck({ maxIdBytes: 4, maxLabelValueBytes: 8 });
    const data = readEventData('pre_tool_call', { tool_call_id: 'abcde', tool_name: 'terminal!' }, check);
    expect(data).toMatchObject({ toolCallId: undefined, tool: undefined });
    expect(check.take()).toEqual(['tool_call_id', 'tool_name']);
  });
});
