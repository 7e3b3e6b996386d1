/**
 * The compact body: the same events as the NDJSON lines it stands for (same readers, bounds and
 * per-line rejections), its rows numbered from `seq`, and a clear, counted error for a malformed
 * frame or schema, whatever the input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMPACT_VERSION, MAX_SCHEMA_EVENTS } from '../../src/contract/compact.js';
import { decodeBody, type DecodeOptions } from '../../src/contract/decode.js';
import { ERRORS, SidecarError } from '../../src/errors.js';

const ndjson: DecodeOptions = { format: 'ndjson', maxEvents: 10_000, arrivedAt: 1_800_000_000 };
const compact: DecodeOptions = { ...ndjson, format: 'compact' };

const USAGE = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'prompt_tokens', 'completion_tokens'];
const FLAGS = USAGE.slice(0, 6);
/** The plugin's schema for the two hooks used here (codes 0 and 1). */
const SCHEMA = {
  events: [
    ['post_api_request', 'provider', 'model', 'api_request_id', 'turn_id', 'api_duration', 'started_at', 'first_chunk_at', 'finish_reason', 'context_length', 'usage', 'cost_usd', 'cost_status'],
    ['post_tool_call', 'tool_call_id', 'tool_name', 'turn_id', 'status', 'error_type', 'duration_ms'],
  ],
  usage: USAGE,
  usage_flags: FLAGS,
};
const INSTANCE = '0123456789abcdef0123456789abcdef';

const apiRow = [0, 1789862412481000, 'openrouter', 'anthropic/claude-sonnet-4.6', 't_1:api:0', 't_1', 6.842, 1789862412.481, 1789862413.902, 'tool_calls', null, [1204, 412, 18030, 952, 0, 20186, null, [true, true, false, null, null, true]], 0.0123, 'priced'];
const toolRow = [1, 1789862412482000, 'toolu_01', 'terminal', 't_1', 'ok', null, 3412];

/** The plugin lines the rows above stand for. */
const lines = [
  {
    event: 'post_api_request', observed_at: 1789862412.481, instance: INSTANCE, seq: 7,
    data: {
      provider: 'openrouter', model: 'anthropic/claude-sonnet-4.6', api_request_id: 't_1:api:0', turn_id: 't_1', api_duration: 6.842,
      started_at: 1789862412.481, first_chunk_at: 1789862413.902, finish_reason: 'tool_calls',
      usage: {
        input_tokens: 1204, output_tokens: 412, cache_read_tokens: 18030, cache_write_tokens: 952, reasoning_tokens: 0, prompt_tokens: 20186,
        reported_usage_fields: { input_tokens: true, output_tokens: true, cache_read_tokens: false, prompt_tokens: true },
      },
      cost_usd: 0.0123, cost_status: 'priced',
    },
  },
  { event: 'post_tool_call', observed_at: 1789862412.482, instance: INSTANCE, seq: 8, data: { tool_call_id: 'toolu_01', tool_name: 'terminal', turn_id: 't_1', status: 'ok', duration_ms: 3412 } },
];
const heartbeat = { event: 'plugin_heartbeat', observed_at: 1789862412.4, instance: INSTANCE, data: { dropped: {}, queue_depth: 0, acked_seq: 6, plugin_version: '0.1.0' } };

const body = (frame: Record<string, unknown>) => Buffer.from(JSON.stringify({ v: COMPACT_VERSION, instance: INSTANCE, schema: SCHEMA, seq: 7, ...frame }));
const asNdjson = (values: readonly unknown[]) => Buffer.from(values.map((value) => JSON.stringify(value)).join('\n'));

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as SidecarError).code;
  }
};

describe('decodeBody, compact', () => {
  it('gives exactly the events of the NDJSON lines its rows stand for, heartbeat first, seq counted from `seq`', () => {
    const decoded = decodeBody(body({ heartbeat, events: [apiRow, toolRow] }), compact);
    expect(decoded).toEqual(decodeBody(asNdjson([heartbeat, ...lines]), ndjson));
    expect(decoded.lines).toBe(3);
    expect(decoded.events.map((event) => [event.name, event.seq, event.source])).toEqual([
      ['plugin_heartbeat', undefined, 'plugin'],
      ['post_api_request', 7, 'plugin'],
      ['post_tool_call', 8, 'plugin'],
    ]);
  });

  it('reads a number under a `micros` field as integer microseconds: the same events as the lines in seconds', () => {
    const micros = { ...SCHEMA, micros: ['api_duration', 'started_at', 'first_chunk_at'] };
    const row = [...apiRow];
    row.splice(6, 3, 6842124, 1789862412481343, 1789862413902000);
    const line = { ...lines[0], data: { ...lines[0]?.data, api_duration: 6.842124, started_at: 1789862412.481343, first_chunk_at: 1789862413.902 } };
    const decoded = decodeBody(body({ schema: micros, events: [row] }), compact);
    expect(decoded).toEqual(decodeBody(asNdjson([line]), ndjson));
    // Anything but a number is left as it is, and refused by the field's reader as on a line.
    const odd = [...row];
    odd.splice(6, 1, 'soon');
    const oddLine = { ...line, data: { ...line.data, api_duration: 'soon' } };
    expect(decodeBody(body({ schema: micros, events: [odd] }), compact)).toEqual(decodeBody(asNdjson([oddLine]), ndjson));
    // A schema naming a field twice, or a name that is not one, is malformed.
    for (const bad of [['started_at', 'started_at'], ['__proto__'], 'started_at']) {
      expect(codeOf(() => decodeBody(body({ schema: { ...SCHEMA, micros: bad }, events: [row] }), compact))).toBe('invalid_compact_body');
    }
  });

  it('bounds strings as NDJSON does: an id past --ingest.max-id-bytes is absent and counted by field', () => {
    const long = `t_${'x'.repeat(300)}`;
    const row = [1, 1789862412482000, long, 'terminal', 't_1', 'ok', null, 3412];
    const line = { ...lines[1], seq: 7, data: { ...lines[1]?.data, tool_call_id: long } };
    const decoded = decodeBody(body({ events: [row] }), compact);
    expect(decoded).toEqual(decodeBody(asNdjson([line]), ndjson));
    expect(decoded.events[0]?.rejectedValues).toEqual(['tool_call_id']);
  });

  it('rejects a row that does not fit the schema as invalid_event, by index, and keeps the others', () => {
    const bad = ['not a row', [], [9, 1], [1.5, 1], [1, 1, 'a', 'b', 'c', 'd', 'e', 3412, 'one too many'], [0, 1, ...apiRow.slice(2, 11), [1, 2, 3, 4, 5, 6, 7, [true], 'extra']]];
    const decoded = decodeBody(body({ events: [toolRow, ...bad] }), compact);
    expect(decoded.events.map((event) => event.name)).toEqual(['post_tool_call']);
    expect(decoded.errors).toEqual(bad.map((_row, index) => ({ index: index + 1, reason: 'invalid_event' })));
  });

  it('refuses a malformed frame or schema whole with invalid_compact_body (400, counted as invalid_event)', () => {
    const malformed: Record<string, unknown>[] = [
      { instance: '' },
      { instance: 7 },
      { seq: -1 },
      { seq: 1.5 },
      { seq: Number.MAX_SAFE_INTEGER },
      { events: {} },
      { heartbeat: [1] },
      { schema: { events: [['post_tool_call', '__proto__']] } },
      { schema: { events: [['post_tool_call', 'tool_name', 'tool_name']] } },
      { schema: { events: [['Not An Event']] } },
      { schema: { events: [[]] } },
      { schema: { events: Array.from({ length: MAX_SCHEMA_EVENTS + 1 }, () => ['post_tool_call']) } },
      { schema: { ...SCHEMA, usage: ['constructor', 'constructor'] } },
      { schema: 'none' },
    ];
    for (const frame of malformed) {
      expect(codeOf(() => decodeBody(body({ events: [toolRow], ...frame }), compact)), JSON.stringify(frame).slice(0, 80)).toBe('invalid_compact_body');
    }
    expect(ERRORS.invalid_compact_body).toMatchObject({ status: 400, rejected: 'invalid_event' });
  });

  it('answers a version it does not read with 415, so the plugin sends NDJSON', () => {
    expect(codeOf(() => decodeBody(body({ v: 2, events: [toolRow] }), compact))).toBe('unsupported_compact_version');
    expect(ERRORS.unsupported_compact_version).toMatchObject({ status: 415, rejected: 'unsupported_media_type' });
  });

  it('is bounded like a JSON body: bytes before parsing, events after', () => {
    const many = body({ events: Array.from({ length: 11 }, () => toolRow) });
    expect(codeOf(() => decodeBody(many, { ...compact, maxJsonBytes: many.length - 1 }))).toBe('too_large');
    expect(codeOf(() => decodeBody(many, { ...compact, maxEvents: 10 }))).toBe('too_many_events');
    expect(codeOf(() => decodeBody(body({ heartbeat, events: Array.from({ length: 10 }, () => toolRow) }), { ...compact, maxEvents: 10 }))).toBe('too_many_events');
    expect(codeOf(() => decodeBody(body({ events: [] }), compact))).toBe('empty_body');
    expect(codeOf(() => decodeBody(Buffer.from('{"v":1,'), compact))).toBe('invalid_json');
  });

  it('property: any JSON document is decoded or refused with a stable code, never a crash', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.jsonValue().map((events) => JSON.stringify({ v: 1, instance: INSTANCE, schema: SCHEMA, seq: 0, events }))), (text) => {
        try {
          const decoded = decodeBody(Buffer.from(text), compact);
          expect(decoded.events.length + decoded.errors.length).toBe(decoded.lines);
        } catch (error) {
          expect(error).toBeInstanceOf(SidecarError);
        }
      }),
      { numRuns: 300 },
    );
  });
});
