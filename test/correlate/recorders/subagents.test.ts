/** The subagent recorder: starts, finishes with status and duration, and the active gauge. */
import { describe, expect, it } from 'vitest';
import { SUBAGENT_FAMILIES, SubagentRecorder } from '../../../src/correlate/recorders/subagents.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

function setup() {
  const harness = recorderHarness({ spanTtlSeconds: 10 });
  return { harness, subagents: new SubagentRecorder(harness.context, familiesFor(harness.metrics, SUBAGENT_FAMILIES)) };
}

describe('SubagentRecorder', () => {
  it('counts starts and finishes, observes durations and folds an unlisted status into other', async () => {
    const { harness, subagents } = setup();
    subagents.started({ type: 'subagent_started', childSessionId: 'c1', role: 'researcher' });
    subagents.started({ type: 'subagent_started', childSessionId: 'c2', role: 'researcher' });
    subagents.stopped({ type: 'subagent_stopped', childSessionId: 'c1', role: 'researcher', status: 'completed', durationSeconds: 4 });
    subagents.stopped({ type: 'subagent_stopped', childSessionId: 'c2', role: 'researcher', status: 'exploded' });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_subagents_started_total', { role: 'researcher' }))).toBe(2);
    expect(samples.get(series('hermes_subagents_finished_total', { role: 'researcher', status: 'completed' }))).toBe(1);
    expect(samples.get(series('hermes_subagents_finished_total', { role: 'researcher', status: 'other' }))).toBe(1);
    expect(samples.get(series('hermes_subagent_duration_seconds_sum', { role: 'researcher', status: 'completed' }))).toBe(4);
    expect(samples.get(series('hermes_subagents_active', { role: 'researcher' }))).toBe(0);
  });

  it('keeps a started subagent active until it stops or its span expires (counted orphaned)', async () => {
    const { harness, subagents } = setup();
    subagents.started({ type: 'subagent_started', childSessionId: 'c1', role: 'coder' });
    subagents.started({ type: 'subagent_started', role: 'coder' });
    expect((await harness.samples()).get(series('hermes_subagents_active', { role: 'coder' }))).toBe(1);
    harness.advance(11);
    harness.sweep();
    const samples = await harness.samples();
    expect(samples.get(series('hermes_subagents_active', { role: 'coder' }))).toBe(0);
    expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind: 'subagent' }))).toBe(1);
    expect(samples.get(series('hermes_subagents_started_total', { role: 'coder' }))).toBe(2);
  });
});
