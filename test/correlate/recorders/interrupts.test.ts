/** The interrupt recorder: agent_loop_stopped by platform and interrupt reason. */
import { describe, expect, it } from 'vitest';
import { INTERRUPT_FAMILIES, InterruptRecorder } from '../../../src/correlate/recorders/interrupts.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

describe('InterruptRecorder', () => {
  it('counts each interrupted turn once by platform and reason, unknown when absent', async () => {
    const harness = recorderHarness();
    const interrupts = new InterruptRecorder(harness.context, familiesFor(harness.metrics, INTERRUPT_FAMILIES));
    interrupts.interrupted({ type: 'agent_interrupted', platform: 'cli', reason: 'stop' });
    interrupts.interrupted({ type: 'agent_interrupted', platform: 'cli', reason: 'stop' });
    interrupts.interrupted({ type: 'agent_interrupted', platform: 'telegram' });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_agent_interrupts_total', { platform: 'cli', reason: 'stop' }))).toBe(2);
    expect(samples.get(series('hermes_agent_interrupts_total', { platform: 'telegram', reason: 'unknown' }))).toBe(1);
  });
});
