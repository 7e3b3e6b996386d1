/** The recorders built together: each from its own declaration, the scrape-time ones listed. */
import { describe, expect, it } from 'vitest';
import { API_FAMILIES } from '../../../src/correlate/recorders/api.js';
import { DELIVERY_FAMILIES, DeliveryRecorder } from '../../../src/correlate/recorders/delivery.js';
import { createRecorders, RECORDER_FAMILIES } from '../../../src/correlate/recorders/index.js';
import { TOOL_FAMILIES } from '../../../src/correlate/recorders/tools.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

describe('createRecorders', () => {
  it('gathers every recorder declaration, each family once', () => {
    expect(RECORDER_FAMILIES.apiRequests).toBe(API_FAMILIES.apiRequests);
    expect(RECORDER_FAMILIES.toolCalls).toBe(TOOL_FAMILIES.toolCalls);
    // 18 API, 5 turn, 4 tool, 4 approval, 10 session, 4 subagent, 4 run, 10 delivery, 1 interrupt, 2 plugin report.
    expect(Object.keys(RECORDER_FAMILIES)).toHaveLength(63);
  });

  it('builds the recorders on the families they declare, with the delivery recorder it is given', async () => {
    const harness = recorderHarness();
    const delivery = new DeliveryRecorder(familiesFor(harness.metrics, DELIVERY_FAMILIES));
    const recorders = createRecorders(harness.context, familiesFor(harness.metrics, RECORDER_FAMILIES), delivery);
    expect(recorders.delivery).toBe(delivery);
    recorders.tools.started({ type: 'tool_started', toolCallId: 't1', tool: 'terminal' });
    expect((await harness.samples()).get(series('hermes_tool_calls_in_flight', { tool: 'terminal' }))).toBe(1);
  });
});
