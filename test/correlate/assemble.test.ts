/**
 * The event path assembled: each component handed its stage's families, the state counters
 * (evictions by table, values out of bounds by field) written once for every table, the sweep
 * over every state table, and the gauges computed from the instance table at collect time.
 */
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { decodeBody } from '../../src/contract/decode.js';
import { DEFAULT_STRING_LIMITS } from '../../src/contract/bounds.js';
import { createEventPipeline, DEFAULT_MAX_TABLE_BYTES, tableBudgets, type EventPipelineSettings } from '../../src/correlate/assemble.js';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { parseSamples, series } from '../support/exposition.js';

const START = 1_700_000_000;

const SETTINGS: EventPipelineSettings = {
  correlator: { spanTtlSeconds: 60, sessionTtlSeconds: 3600, maxSpans: 1 },
  sequence: { instanceTtlSeconds: 3600, maxInstances: 10 },
};

function setup() {
  const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 1000, defaultMetrics: false });
  const exposition = createExposition(registry);
  let now = START;
  const errors: unknown[] = [];
  const pipeline = createEventPipeline(SETTINGS, registry.metrics, registry.labels, () => now, (error) => errors.push(error));
  const apply = (lines: readonly object[]): void => {
    const body = Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n'));
    pipeline.dispatcher.applyBatch(decodeBody(body, { format: 'ndjson', maxEvents: lines.length, arrivedAt: now, strings: DEFAULT_STRING_LIMITS }).events);
  };
  const sweep = (): void => {
    const step = pipeline.sweepSteps();
    while (step()) {
      // one table per step
    }
  };
  return {
    pipeline,
    errors,
    apply,
    sweep,
    advance: (seconds: number) => void (now += seconds),
    samples: async () => parseSamples(await renderText(exposition)),
  };
}

describe('table budgets', () => {
  it('give sessions a third of the bytes and each of the five span tables two fifteenths', () => {
    expect(tableBudgets(15)).toEqual({ sessions: 5, eachSpanTable: 2 });
    expect(DEFAULT_MAX_TABLE_BYTES).toBe(16 * 1024 * 1024);
    expect(tableBudgets(DEFAULT_MAX_TABLE_BYTES)).toEqual({ sessions: 5_592_405, eachSpanTable: 2_236_962 });
  });
});

describe('the event pipeline', () => {
  it('counts each state table\'s evictions under its name, once', async () => {
    const { apply, samples, errors } = setup();
    apply([
      { event: 'pre_tool_call', tool_name: 'terminal', tool_call_id: 'c1' },
      { event: 'pre_tool_call', tool_name: 'terminal', tool_call_id: 'c2' },
      { event: 'pre_tool_call', tool_name: 'terminal', tool_call_id: 'c3' },
    ]);
    const read = await samples();
    expect(read.get(series('hermes_sidecar_state_evictions_total', { table: 'tool_calls' }))).toBe(2);
    expect(read.get(series('hermes_sidecar_state_evictions_total', { table: 'sessions' }))).toBe(0);
    expect(read.get(series('hermes_sidecar_orphaned_spans_total', { kind: 'tool' }))).toBe(2);
    expect(errors).toEqual([]);
  });

  it('counts a value out of its bounds under its field, and still applies the event', async () => {
    const { apply, samples } = setup();
    apply([{ event: 'post_tool_call', tool_name: 'terminal', status: 'ok', tool_call_id: 'x'.repeat(300) }]);
    const read = await samples();
    expect(read.get(series('hermes_sidecar_values_rejected_total', { field: 'tool_call_id' }))).toBe(1);
    expect(read.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(1);
  });

  it('sweeps every state table: a span past its TTL is orphaned', async () => {
    const { apply, sweep, advance, samples } = setup();
    apply([{ event: 'pre_tool_call', tool_name: 'terminal', tool_call_id: 'c1' }]);
    sweep();
    expect((await samples()).get(series('hermes_sidecar_orphaned_spans_total', { kind: 'tool' }))).toBe(0);
    advance(61);
    sweep();
    expect((await samples()).get(series('hermes_sidecar_orphaned_spans_total', { kind: 'tool' }))).toBe(1);
  });

  it('sets the instance gauges and the plugin info from one liveness pass at collect', async () => {
    const { apply, pipeline, samples } = setup();
    apply([{ event: 'plugin_heartbeat', instance: 'i1', data: { interval_seconds: 30, acked_seq: 0, dropped: {}, hermes_version: '0.21.3', plugin_version: '1.0.0', profile: 'default' } }]);
    pipeline.collect();
    const read = await samples();
    expect(read.get(series('hermes_plugin_instances', { state: 'live' }))).toBe(1);
    expect(read.get(series('hermes_plugin_info', { hermes_version: '0.21.3', plugin_version: '1.0.0', profile: 'default' }))).toBe(1);
  });
});
