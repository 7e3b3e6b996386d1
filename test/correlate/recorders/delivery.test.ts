/** The delivery recorder: plugin drops, sequence accounting counters, heartbeats and instances. */
import { describe, expect, it } from 'vitest';
import { DELIVERY_FAMILIES, DeliveryRecorder } from '../../../src/correlate/recorders/delivery.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness, START } from '../../support/recorders.js';

function setup() {
  const harness = recorderHarness();
  return { harness, delivery: new DeliveryRecorder(familiesFor(harness.metrics, DELIVERY_FAMILIES)) };
}

describe('DeliveryRecorder', () => {
  it('counts dropped callbacks by hook and reason, folding unknown ones into other, and leaves refused deltas alone', async () => {
    const { harness, delivery } = setup();
    delivery.dropped([
      { total: 'dropped', hook: 'pre_tool_call', reason: 'queue_full', delta: 3 },
      { total: 'refused', field: 'model', delta: 7 },
      { total: 'dropped', hook: 'pre_tool_call', reason: 'queue_full', delta: 2 },
      { total: 'dropped', hook: 'agent_end', reason: 'eaten', delta: 1 },
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'pre_tool_call', reason: 'queue_full' }))).toBe(5);
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'other', reason: 'other' }))).toBe(1);
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'model' }))).toBe(0);
    // Pre-initialised at 0 for every known pair.
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'post_tool_call', reason: 'shutdown' }))).toBe(0);
  });

  it('counts lost, late, duplicate, discarded, reset, stale and folded as told', async () => {
    const { harness, delivery } = setup();
    delivery.lost(4);
    delivery.lost(0);
    delivery.late();
    delivery.duplicate();
    delivery.duplicate();
    delivery.discarded('after_lost');
    delivery.sequenceReset('restart');
    delivery.staleHeartbeat('boot');
    delivery.dropReports([
      { hook: 'made_up', reason: 'queue_full', total: 1 },
      { hook: 'pre_tool_call', reason: 'eaten', total: 1 },
      { hook: 'pre_tool_call', reason: 'chewed', total: 1 },
      { hook: 'pre_tool_call', reason: 'send_failed', total: 1 },
    ]);
    const samples = await harness.samples();
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(4);
    expect(samples.get('hermes_sidecar_events_late_total')).toBe(1);
    expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(2);
    expect(samples.get(series('hermes_sidecar_events_discarded_total', { reason: 'after_lost' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_events_discarded_total', { reason: 'beyond_memory' }))).toBe(0);
    expect(samples.get(series('hermes_sidecar_sequence_resets_total', { reason: 'restart' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_heartbeats_stale_total', { reason: 'boot' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_heartbeat_keys_folded_total', { key: 'hook' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_heartbeat_keys_folded_total', { key: 'reason' }))).toBe(2);
  });

  it('sets the last-seen time and the instance gauges from the liveness it is handed', async () => {
    const { harness, delivery } = setup();
    delivery.pluginSeen(START + 5);
    delivery.instancesSeen({ live: 2, stale: 1 });
    const samples = await harness.samples();
    expect(samples.get('hermes_plugin_last_seen_timestamp_seconds')).toBe(START + 5);
    expect(samples.get(series('hermes_plugin_instances', { state: 'live' }))).toBe(2);
    expect(samples.get(series('hermes_plugin_instances', { state: 'stale' }))).toBe(1);
  });
});
