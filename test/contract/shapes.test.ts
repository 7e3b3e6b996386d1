import { describe, expect, it } from 'vitest';
import { normalizeLine } from '../support/lines.js';
import { samplesOf } from '../support/exposition.js';
import { readJsonl, startTestSidecar } from '../support/sidecar.js';

type Line = Record<string, unknown>;

const splitFlat = (line: Line) => {
  const { event, observed_at: observedAt, ...data } = line;
  return { event: event as string, observedAt: observedAt as number | undefined, data };
};

/** Flat kwargs line → plugin line (instance, seq, observed_at, data). */
const asPluginLines = (lines: Line[]): Line[] =>
  lines.map((line, index) => {
    const { event, observedAt, data } = splitFlat(line);
    return { event, observed_at: observedAt, instance: 'inst-1', seq: index + 1, data };
  });

/** Flat kwargs line → envelope {event, data} (no observed_at: arrival time is used). */
const asEnvelopes = (lines: Line[]): Line[] =>
  lines.map((line) => {
    const { event, data } = splitFlat(line);
    return { event, data };
  });

/** Flat kwargs with the name under `hook` instead of `event`. */
const asHookKey = (lines: Line[]): Line[] =>
  lines.map((line) => {
    const { event, ...rest } = line;
    return { hook: event, ...rest };
  });

// Families whose values come from observed or arrival times, which differ between shapes by design.
const TIME_DERIVED = ['hermes_turn_duration_seconds', 'hermes_approval_wait_seconds', 'hermes_session_duration_seconds'];
const AGENT_PREFIXES = ['hermes_api_', 'hermes_tokens_', 'hermes_turn', 'hermes_tool_', 'hermes_approval', 'hermes_session', 'hermes_subagent', 'hermes_agent_', 'hermes_memory_'];

async function agentMetrics(lines: Line[]): Promise<Record<string, number>> {
  const harness = startTestSidecar();
  const response = await harness.postNdjson(lines);
  expect(response.status).toBe(202);
  expect(response.body.rejected).toBe(0);
  const agent = samplesOf(new Map(await harness.samples()), ...AGENT_PREFIXES);
  return Object.fromEntries([...agent].filter(([key]) => !TIME_DERIVED.some((name) => key.startsWith(name))));
}

describe('the three shapes', () => {
  it('give identical agent metrics for the same logical stream', async () => {
    const flat = readJsonl('conversation.jsonl');
    const expected = await agentMetrics(flat);
    expect(Object.keys(expected).length).toBeGreaterThan(100);
    expect(await agentMetrics(asPluginLines(flat))).toEqual(expected);
    expect(await agentMetrics(asEnvelopes(flat))).toEqual(expected);
    expect(await agentMetrics(asHookKey(flat))).toEqual(expected);
  });
});

describe('readLine (one line on its own)', () => {
  const now = 1_800_000_000;

  it('reads the plugin line metadata', () => {
    const result = normalizeLine(
      { event: 'pre_tool_call', observed_at: 1234.5, instance: 'i', seq: 7, data: { tool_name: 'x', tool_call_id: 'c' } },
      now,
    );
    expect(result).toEqual({
      ok: true,
      event: {
        name: 'pre_tool_call',
        source: 'plugin',
        observedAt: 1234.5,
        instance: 'i',
        seq: 7,
        data: { type: 'tool_started', tool: 'x', toolCallId: 'c', turnId: undefined },
        rejectedValues: [],
      },
    });
  });

  it.each([
    ['plugin', { event: 'pre_tool_call', instance: 'i', seq: 1, data: {} }],
    ['plugin', { event: 'pre_tool_call', instance: 'i', data: {} }],
    ['envelope', { event: 'pre_tool_call', data: { tool_name: 'x' } }],
    ['flat', { event: 'pre_tool_call', tool_name: 'x' }],
    ['flat', { hook: 'pre_tool_call', tool_name: 'x' }],
  ])('tells the source by the shape: %s for %j', (source, line) => {
    const result = normalizeLine(line, now);
    expect(result.ok && result.event.source).toBe(source);
  });

  it('falls back to the arrival time when observed_at is missing or not a positive finite number', () => {
    for (const observed of [undefined, 'soon', -5, 0, null]) {
      const result = normalizeLine({ event: 'x', observed_at: observed, data: {} }, now);
      expect(result.ok && result.event.observedAt).toBe(now);
    }
  });

  it.each([
    [null, 'invalid_event'],
    [[1, 2], 'invalid_event'],
    ['text', 'invalid_event'],
    [{ data: {} }, 'unknown_shape'],
    [{ tool_name: 'x' }, 'unknown_shape'],
    [{ event: 42 }, 'invalid_event'],
    [{ event: '' }, 'invalid_event'],
    [{ event: 'x'.repeat(129) }, 'invalid_event'],
    [{ event: 'x', instance: 'i', seq: -1 }, 'invalid_event'],
    [{ event: 'x', instance: 'i', seq: 1.5 }, 'invalid_event'],
    [{ event: 'x', instance: 'i', seq: '3' }, 'invalid_event'],
    [{ event: 'x', seq: 3 }, 'invalid_event'],
    [{ event: 'x', instance: 7, seq: 3 }, 'invalid_event'],
  ])('rejects %j as %s', (line, reason) => {
    expect(normalizeLine(line, now)).toEqual({ ok: false, reason });
  });

  it('treats a wrong-typed field as absent without failing the event', () => {
    const result = normalizeLine(
      { event: 'post_tool_call', tool_name: 12, duration_ms: 'slow', status: ['ok'], tool_call_id: '' },
      now,
    );
    expect(result.ok && result.event.data).toEqual({
      type: 'tool_finished',
      tool: undefined,
      toolCallId: undefined,
      turnId: undefined,
      status: undefined,
      errorType: undefined,
      durationSeconds: undefined,
    });
  });

  it('does not resolve hook names through the object prototype', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const result = normalizeLine({ event: name, data: {} }, now);
      expect(result.ok && result.event.data).toEqual({ type: 'ignored' });
    }
  });
});
