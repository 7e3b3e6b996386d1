/** The run recorder: envelope agent_end and memory_write, each one series per label set. */
import { describe, expect, it } from 'vitest';
import { RUN_FAMILIES, RunRecorder } from '../../../src/correlate/recorders/runs.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

function setup() {
  const harness = recorderHarness();
  return { harness, runs: new RunRecorder(harness.context, familiesFor(harness.metrics, RUN_FAMILIES)) };
}

describe('RunRecorder', () => {
  it('counts finished runs by stop reason and observes their duration', async () => {
    const { harness, runs } = setup();
    runs.runFinished({ type: 'agent_run_finished', stopReason: 'end_turn', durationSeconds: 2.5 });
    runs.runFinished({ type: 'agent_run_finished', stopReason: 'end_turn', durationSeconds: 0.5 });
    runs.runFinished({ type: 'agent_run_finished' });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_agent_runs_total', { stop_reason: 'end_turn' }))).toBe(2);
    expect(samples.get(series('hermes_agent_runs_total', { stop_reason: 'unknown' }))).toBe(1);
    expect(samples.get(series('hermes_agent_run_duration_seconds_count', { stop_reason: 'end_turn' }))).toBe(2);
    expect(samples.get(series('hermes_agent_run_duration_seconds_sum', { stop_reason: 'end_turn' }))).toBe(3);
    // A run without a duration is counted, not observed.
    expect(samples.get(series('hermes_agent_run_duration_seconds_count', { stop_reason: 'unknown' }))).toBeUndefined();
  });

  it('counts memory writes and their bytes by provider and action', async () => {
    const { harness, runs } = setup();
    runs.memoryWritten({ type: 'memory_written', memoryProvider: 'honcho', action: 'add', sizeBytes: 100 });
    runs.memoryWritten({ type: 'memory_written', memoryProvider: 'honcho', action: 'add', sizeBytes: 28 });
    runs.memoryWritten({ type: 'memory_written', memoryProvider: 'honcho', action: 'replace' });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_memory_writes_total', { memory_provider: 'honcho', action: 'add' }))).toBe(2);
    expect(samples.get(series('hermes_memory_write_bytes_total', { memory_provider: 'honcho', action: 'add' }))).toBe(128);
    expect(samples.get(series('hermes_memory_writes_total', { memory_provider: 'honcho', action: 'replace' }))).toBe(1);
    expect(samples.get(series('hermes_memory_write_bytes_total', { memory_provider: 'honcho', action: 'replace' }))).toBeUndefined();
  });
});
