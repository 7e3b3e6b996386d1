/** The ingestor's accounting: received events by source and name, and the scrape-time queue gauges. */
import { describe, expect, it } from 'vitest';
import { samplesOf, series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';

describe('Ingestor', () => {
  it('counts each received event under the route and shape that brought it, not as plugin by default', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      { event: 'pre_tool_call', instance: 'p1', seq: 1, data: { tool_name: 't', tool_call_id: 'a' } },
      { event: 'pre_tool_call', data: { tool_name: 't', tool_call_id: 'b' } },
      { event: 'pre_tool_call', tool_name: 't', tool_call_id: 'c' },
      { event: 'post_tool_call', tool_name: 't', tool_call_id: 'c', status: 'ok' },
    ]);
    const received = samplesOf(await harness.samples(), 'hermes_sidecar_events_received_total');
    expect(Object.fromEntries(received)).toEqual({
      [series('hermes_sidecar_events_received_total', { source: 'plugin', event: 'pre_tool_call' })]: 1,
      [series('hermes_sidecar_events_received_total', { source: 'envelope', event: 'pre_tool_call' })]: 1,
      [series('hermes_sidecar_events_received_total', { source: 'flat', event: 'pre_tool_call' })]: 1,
      [series('hermes_sidecar_events_received_total', { source: 'flat', event: 'post_tool_call' })]: 1,
    });
  });

  it('reads the queue depth at scrape time and the capacity from the configuration', async () => {
    const harness = startTestSidecar({ 'ingest.queue-capacity': '7' });
    const samples = await harness.samples();
    expect(samples.get('hermes_sidecar_queue_depth')).toBe(0);
    expect(samples.get('hermes_sidecar_queue_capacity')).toBe(7);
  });
});
