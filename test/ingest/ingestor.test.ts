/** The ingestor's accounting: received events by source and name, and the scrape-time queue gauges. */
import { describe, expect, it, vi } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { normalizeLine } from '../support/lines.js';
import { createEventPipeline } from '../../src/correlate/assemble.js';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { INGESTOR_FAMILIES, Ingestor } from '../../src/ingest/ingestor.js';
import { IngestQueue } from '../../src/ingest/queue.js';
import { createMetricsRegistry, type Metrics } from '../../src/catalogue.js';
import { familiesFor } from '../../src/metrics/registry.js';
import { parseSamples, samplesOf, series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';
import { sumOf } from '../support/accounting.js';

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

describe('Ingestor with a recorder that throws', () => {
  it('counts each event that failed to apply as dropped{reason="internal_error"}, and applies the others', async () => {
    const config = defaultConfig();
    const registry = createMetricsRegistry({ buckets: config.buckets, maxAgentSeries: 1000, defaultMetrics: false });
    // Fault injection: the tool recorder's counter throws, as a recorder bug would.
    const metrics: Metrics = {
      ...registry.metrics,
      toolCalls: { ...registry.metrics.toolCalls, inc: () => { throw new Error('recorder bug'); } },
    };
    const failures: unknown[] = [];
    const pipeline = createEventPipeline(config, metrics, registry.labels, () => 1000, (error) => failures.push(error));
    const ingestor = new Ingestor(new IngestQueue({ batches: 4, events: 100_000 }), pipeline.dispatcher, familiesFor(metrics, INGESTOR_FAMILIES));
    const events = [
      { event: 'post_tool_call', tool_name: 't', status: 'ok' },
      { event: 'on_session_start', platform: 'cli' },
      { event: 'post_tool_call', tool_name: 't', status: 'error' },
    ].map((line) => normalizeLine(line, 1000)).flatMap((result) => (result.ok ? [result.event] : []));
    const admission = ingestor.submit(events);
    expect(admission.refused).toBeUndefined();
    if (admission.refused === undefined) await admission.applied;
    const samples = parseSamples(await renderText(createExposition(registry)));
    expect(samples.get(series('hermes_sidecar_events_dropped_total', { reason: 'internal_error' }))).toBe(2);
    expect(samples.get(series('hermes_sessions_started_total', { platform: 'cli' }))).toBe(1);
    expect(failures.map((error) => (error as Error).message)).toEqual(['recorder bug', 'recorder bug']);
  });
});

describe('Ingestor accounting at every scrape', () => {
  it('counts an event received in the step that applies it, so a batch still waiting is in queue_events, not in received', async () => {
    const config = defaultConfig();
    const registry = createMetricsRegistry({ buckets: config.buckets, maxAgentSeries: 1000, defaultMetrics: false });
    const pipeline = createEventPipeline(config, registry.metrics, registry.labels, () => 1000, () => undefined);
    // A clock that makes every item outlast its slice, and a pause the test releases: one item per slice.
    let clock = 0;
    const gates: (() => void)[] = [];
    const slicer = { sliceMs: 1, now: () => (clock += 10), pause: () => new Promise<void>((resolve) => gates.push(resolve)) };
    const queue = new IngestQueue({ batches: 4, events: 100_000 });
    const ingestor = new Ingestor(queue, pipeline.dispatcher, familiesFor(registry.metrics, INGESTOR_FAMILIES), slicer);
    const line = (seq: number) => ({ event: 'post_tool_call', instance: 'p1', seq, data: { tool_name: 't', status: 'ok' } });
    const events = [line(1), line(2), line(1)].map((raw) => normalizeLine(raw, 1000)).flatMap((result) => (result.ok ? [result.event] : []));
    const scrape = async () => {
      ingestor.collect();
      const samples = parseSamples(await renderText(createExposition(registry)));
      const received = samples.get(series('hermes_sidecar_events_received_total', { source: 'plugin', event: 'post_tool_call' })) ?? 0;
      const duplicates = samples.get('hermes_sidecar_events_duplicate_total') ?? 0;
      const applied = sumOf(samples, 'hermes_tool_calls_total{');
      return { received, duplicates, applied, queued: samples.get('hermes_sidecar_queue_events') };
    };

    queue.pause();
    const admission = ingestor.submit(events);
    expect(await scrape()).toEqual({ received: 0, duplicates: 0, applied: 0, queued: 3 });
    queue.resume();
    const seen = [];
    // Two pauses: after the first event and after the second; the third ends the batch.
    for (let pause = 0; pause < 2; pause += 1) {
      await vi.waitFor(() => expect(gates).toHaveLength(1));
      seen.push(await scrape());
      gates.shift()?.();
    }
    if (admission.refused === undefined) await admission.applied;
    seen.push(await scrape());
    // received = applied + duplicates at every scrape, as the batch is applied one event per slice.
    expect(seen).toEqual([
      { received: 1, duplicates: 0, applied: 1, queued: 3 },
      { received: 2, duplicates: 0, applied: 2, queued: 3 },
      { received: 3, duplicates: 1, applied: 2, queued: 0 },
    ]);
  });
});
