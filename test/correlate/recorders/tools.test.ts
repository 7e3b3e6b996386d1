/** The tool recorder: finished calls by status, durations, errors by type, calls in flight. */
import { describe, expect, it } from 'vitest';
import { TOOL_FAMILIES, ToolRecorder } from '../../../src/correlate/recorders/tools.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness, START } from '../../support/recorders.js';

function setup() {
  const harness = recorderHarness();
  return { harness, tools: new ToolRecorder(harness.context, familiesFor(harness.metrics, TOOL_FAMILIES)) };
}

describe('ToolRecorder', () => {
  it('counts finished calls by status and observes their duration', async () => {
    const { harness, tools } = setup();
    tools.started({ type: 'tool_started', toolCallId: 't1', tool: 'terminal' });
    tools.finished({ type: 'tool_finished', toolCallId: 't1', tool: 'terminal', status: 'ok', durationSeconds: 0.25 }, START);
    tools.finished({ type: 'tool_finished', toolCallId: 't2', tool: 'terminal', status: 'ok', durationSeconds: 0.5 }, START);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(2);
    expect(samples.get(series('hermes_tool_call_duration_seconds_count', { tool: 'terminal', status: 'ok' }))).toBe(2);
    expect(samples.get(series('hermes_tool_call_duration_seconds_sum', { tool: 'terminal', status: 'ok' }))).toBe(0.75);
    expect(samples.get(series('hermes_tool_call_duration_seconds_bucket', { le: '0.25', tool: 'terminal', status: 'ok' }))).toBe(1);
    // ok is not an error.
    expect([...samples.keys()].filter((key) => key.startsWith('hermes_tool_errors_total'))).toEqual([]);
  });

  it('counts a call that did not finish ok as an error of its type, other when unlisted', async () => {
    const { harness, tools } = setup();
    tools.finished({ type: 'tool_finished', tool: 'web', status: 'error', errorType: 'tool_timeout' }, START);
    tools.finished({ type: 'tool_finished', tool: 'web', status: 'blocked', errorType: 'something_new' }, START);
    tools.finished({ type: 'tool_finished', tool: 'web' }, START);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'web', status: 'error' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'web', status: 'blocked' }))).toBe(1);
    expect(samples.get(series('hermes_tool_errors_total', { tool: 'web', error_type: 'tool_timeout' }))).toBe(1);
    expect(samples.get(series('hermes_tool_errors_total', { tool: 'web', error_type: 'other' }))).toBe(1);
    // A call whose status was never sent is not a failure.
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'web', status: 'unknown' }))).toBe(1);
    expect(samples.get(series('hermes_tool_errors_total', { tool: 'web', error_type: 'unknown' }))).toBeUndefined();
  });

  it('counts calls in flight at scrape time, and none for a start without a tool_call_id', async () => {
    const { harness, tools } = setup();
    tools.started({ type: 'tool_started', toolCallId: 't1', tool: 'terminal' });
    tools.started({ type: 'tool_started', toolCallId: 't2', tool: 'terminal' });
    tools.started({ type: 'tool_started', tool: 'terminal' });
    expect((await harness.samples()).get(series('hermes_tool_calls_in_flight', { tool: 'terminal' }))).toBe(2);
    tools.finished({ type: 'tool_finished', toolCallId: 't1', tool: 'terminal', status: 'ok' }, START);
    expect((await harness.samples()).get(series('hermes_tool_calls_in_flight', { tool: 'terminal' }))).toBe(1);
  });
});
