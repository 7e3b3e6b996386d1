/** The approval recorder: requests, decisions, waits matched to their request, pending, escalations. */
import { describe, expect, it } from 'vitest';
import { APPROVAL_FAMILIES, ApprovalRecorder } from '../../../src/correlate/recorders/approvals.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness, START } from '../../support/recorders.js';

function setup() {
  const harness = recorderHarness();
  return { harness, approvals: new ApprovalRecorder(harness.context, familiesFor(harness.metrics, APPROVAL_FAMILIES)) };
}

const REQUEST = { type: 'approval_requested', surface: 'cli', patternKey: 'rm', sessionKey: 's1' } as const;
const RESPONSE = { ...REQUEST, type: 'approval_responded', choice: 'once' } as const;

describe('ApprovalRecorder', () => {
  it('counts requests and decisions, and observes the wait from the matched request', async () => {
    const { harness, approvals } = setup();
    approvals.requested(REQUEST, START);
    expect((await harness.samples()).get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(1);
    approvals.responded(RESPONSE, START + 7);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_requests_total', { surface: 'cli', pattern_key: 'rm' }))).toBe(1);
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'cli', pattern_key: 'rm', choice: 'once' }))).toBe(1);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'once' }))).toBe(7);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(0);
  });

  it('matches by tool_call_id before the session queue', async () => {
    const { harness, approvals } = setup();
    approvals.requested(REQUEST, START);
    approvals.requested({ ...REQUEST, toolCallId: 'c1' }, START + 5);
    approvals.responded({ ...RESPONSE, toolCallId: 'c1' }, START + 6);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'once' }))).toBe(1);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(1);
  });

  it('answers the oldest request of the same surface and pattern in the session first', async () => {
    const { harness, approvals } = setup();
    approvals.requested({ ...REQUEST, patternKey: 'sudo' }, START);
    approvals.requested(REQUEST, START + 2);
    approvals.requested(REQUEST, START + 4);
    approvals.responded(RESPONSE, START + 10);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'once' }))).toBe(8);
  });

  it("counts a person's request for an operation the auxiliary model was asked about as an escalation", async () => {
    const { harness, approvals } = setup();
    approvals.requested({ ...REQUEST, surface: 'smart' }, START);
    approvals.requested(REQUEST, START + 3);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm', choice: 'escalated' }))).toBe(1);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'smart', choice: 'escalated' }))).toBe(3);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'smart' }))).toBe(0);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(1);
  });

  it('takes a decision by the auxiliary model without a surface as smart, and folds an unlisted choice into other', async () => {
    const { harness, approvals } = setup();
    approvals.responded({ type: 'approval_responded', patternKey: 'rm', decidedBy: 'aux_llm', choice: 'maybe' }, START);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm', choice: 'other' }))).toBe(1);
    // No request was open: no wait.
    expect([...samples.keys()].filter((key) => key.startsWith('hermes_approval_wait_seconds_count'))).toEqual([]);
  });
});
