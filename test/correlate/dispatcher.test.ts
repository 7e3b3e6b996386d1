/**
 * The dispatcher: sequence verdicts before any recorder, one held clock reading per batch, a
 * recorder's failure costing one event, heartbeats routed through the instance table, ignored
 * events counted by name.
 */
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../src/contract/decode.js';
import { DEFAULT_STRING_LIMITS } from '../../src/contract/bounds.js';
import type { ObserverEvent } from '../../src/contract/events.js';
import { DISPATCHER_FAMILIES, Dispatcher } from '../../src/correlate/dispatcher.js';
import { HeldClock } from '../../src/correlate/heldClock.js';
import { PluginInstances } from '../../src/correlate/instances.js';
import { DELIVERY_FAMILIES, DeliveryRecorder } from '../../src/correlate/recorders/delivery.js';
import { createRecorders, RECORDER_FAMILIES } from '../../src/correlate/recorders/index.js';
import { familiesFor } from '../../src/metrics/registry.js';
import { series } from '../support/exposition.js';
import { recorderHarness, START } from '../support/recorders.js';

function decode(lines: readonly object[]): ObserverEvent[] {
  const body = Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n'));
  return decodeBody(body, { format: 'ndjson', maxEvents: lines.length, arrivedAt: START, strings: DEFAULT_STRING_LIMITS }).events;
}

function setup() {
  const harness = recorderHarness();
  const delivery = new DeliveryRecorder(familiesFor(harness.metrics, DELIVERY_FAMILIES));
  const recorders = createRecorders(harness.context, familiesFor(harness.metrics, RECORDER_FAMILIES), delivery);
  const held = new HeldClock(harness.context.clock);
  const stale: string[] = [];
  // Wired as the event path wires it (assemble.ts).
  const instances = new PluginInstances({
    clock: held.now,
    ttlSeconds: 3600,
    maxInstances: 10,
    onEvict: () => undefined,
    onLost: (events) => delivery.lost(events),
    onReset: (reason) => delivery.sequenceReset(reason),
    onStale: (reason) => stale.push(reason),
  });
  const errors: unknown[] = [];
  const rejected: string[] = [];
  const dispatcher = new Dispatcher(recorders, instances, familiesFor(harness.metrics, DISPATCHER_FAMILIES), held, (error) => errors.push(error), (field) => rejected.push(field));
  return { harness, recorders, instances, dispatcher, errors, rejected, stale };
}

const toolCall = (seq: number) => ({
  event: 'post_tool_call',
  instance: 'inst',
  seq,
  observed_at: START + seq,
  data: { tool_name: 'terminal', status: 'ok', tool_call_id: `c${seq}` },
});
const toolCalls = series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' });

describe('Dispatcher', () => {
  it('applies an event only when its sequence number admits it, and counts each verdict once', async () => {
    const { harness, dispatcher } = setup();
    dispatcher.applyBatch(decode([toolCall(1), toolCall(3), toolCall(3), toolCall(2), toolCall(6)]));
    dispatcher.applyBatch(decode([{ event: 'plugin_heartbeat', instance: 'inst', data: { interval_seconds: 5, acked_seq: 6, dropped: {} } }]));
    // 4 and 5 were settled as lost by the heartbeat: 5 arriving now would make lost + applied count it twice.
    dispatcher.applyBatch(decode([toolCall(5), toolCall(7)]));
    const samples = await harness.samples();
    expect(samples.get(toolCalls)).toBe(5);
    expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(1);
    expect(samples.get('hermes_sidecar_events_late_total')).toBe(1);
    expect(samples.get(series('hermes_sidecar_events_discarded_total', { reason: 'after_lost' }))).toBe(1);
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(2);
    expect([dispatcher.applied, dispatcher.heartbeats]).toEqual([5, 1]);
  });

  it('applies lines without an instance unsequenced, and without touching the plugin last-seen time', async () => {
    const { harness, dispatcher } = setup();
    const line = { event: 'post_tool_call', tool_name: 'terminal', status: 'ok', tool_call_id: 'c1' };
    dispatcher.applyBatch(decode([line, line]));
    const samples = await harness.samples();
    expect(samples.get(toolCalls)).toBe(2);
    expect(samples.get('hermes_sidecar_last_event_timestamp_seconds')).toBe(START);
    expect(samples.get('hermes_plugin_last_seen_timestamp_seconds')).toBe(0);
  });

  it('holds one clock reading for a whole batch and stamps the batch with it', async () => {
    const { harness, instances, dispatcher } = setup();
    harness.advance(7);
    dispatcher.applyBatch(decode([toolCall(1), { event: 'plugin_heartbeat', instance: 'other', data: { interval_seconds: 1, dropped: {} } }]));
    const samples = await harness.samples();
    expect(samples.get('hermes_sidecar_last_event_timestamp_seconds')).toBe(START + 7);
    expect(samples.get('hermes_plugin_last_seen_timestamp_seconds')).toBe(START + 7);
    // Outside the batch the table reads the source clock again: 3 s after, the 1 s instance is stale.
    harness.advance(3.5);
    expect(instances.liveness()).toMatchObject({ live: 1, stale: 1 });
  });

  it('a recorder that throws costs its event, counted by the caller; the rest of the batch and the clock carry on', async () => {
    const { harness, recorders, dispatcher, errors } = setup();
    const failure = new Error('recorder bug');
    const original = recorders.runs.runFinished.bind(recorders.runs);
    recorders.runs.runFinished = () => {
      throw failure;
    };
    const failed = dispatcher.applyBatch(decode([toolCall(1), { event: 'agent_end', instance: 'inst', seq: 2, data: {} }, toolCall(3)]));
    recorders.runs.runFinished = original;
    expect(failed).toBe(1);
    expect(errors).toEqual([failure]);
    harness.advance(2);
    dispatcher.applyBatch(decode([toolCall(4)]));
    const samples = await harness.samples();
    expect(samples.get(toolCalls)).toBe(3);
    expect(samples.get('hermes_sidecar_last_event_timestamp_seconds')).toBe(START + 2);
    // The failed event's number was admitted: a retry of it is a duplicate, not applied twice.
    dispatcher.applyBatch(decode([{ event: 'agent_end', instance: 'inst', seq: 2, data: {} }]));
    expect((await harness.samples()).get('hermes_sidecar_events_duplicate_total')).toBe(1);
  });

  it('counts values out of their bounds for every event, a duplicate included', () => {
    const { dispatcher, rejected } = setup();
    const line = { ...toolCall(1), data: { ...toolCall(1).data, duration_ms: 1e15 } };
    dispatcher.applyBatch(decode([line, line]));
    expect(rejected).toEqual(['duration', 'duration']);
  });

  it('hands a heartbeat to the instance table and writes the rises it returns; a stale one writes nothing', async () => {
    const { harness, dispatcher, stale } = setup();
    const beat = (boot: string, total: number) => ({
      event: 'plugin_heartbeat',
      instance: 'inst',
      data: { interval_seconds: 5, boot, dropped: { post_tool_call: { queue_full: total } }, refused_fields: { model: total }, hermes_version: '0.21.3' },
    });
    dispatcher.applyBatch(decode([beat('a'.repeat(32), 4), beat('b'.repeat(32), 2), beat('a'.repeat(32), 50)]));
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'post_tool_call', reason: 'queue_full' }))).toBe(6);
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'model' }))).toBe(6);
    expect(stale).toEqual(['boot']);
  });

  it('counts events without a metric mapping by name', async () => {
    const { harness, dispatcher } = setup();
    dispatcher.applyBatch(decode([{ event: 'agent_start', data: {} }]));
    const samples = await harness.samples();
    expect([...samples].filter(([name]) => name.startsWith('hermes_sidecar_events_ignored_total'))).toEqual([
      [series('hermes_sidecar_events_ignored_total', { event: 'agent_start' }), 1],
    ]);
    expect(dispatcher.applied).toBe(1);
  });
});
