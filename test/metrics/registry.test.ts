import { describe, expect, it } from 'vitest';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { parseSamples, series } from '../support/exposition.js';

describe('metrics registry', () => {
  it('counts every value the storage refuses, and stores none of them', async () => {
    const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false });
    const { metrics } = registry;
    const labels = { tool: 't', status: 'ok' } as const;
    metrics.toolCalls.inc(labels, Number.NaN);
    metrics.toolCalls.inc(labels, -1);
    metrics.toolCallDuration.observe(labels, Number.POSITIVE_INFINITY);
    metrics.toolCallDuration.handle(labels).observe(-0.5);
    metrics.pluginLastSeen.set({}, Number.NaN);
    metrics.toolCalls.inc(labels, 2);
    const samples = parseSamples(await renderText(createExposition(registry)));
    expect(samples.get('hermes_sidecar_invalid_values_total')).toBe(5);
    expect(samples.get(series('hermes_tool_calls_total', labels))).toBe(2);
    expect(samples.get(series('hermes_tool_call_duration_seconds_count', labels))).toBe(0);
    expect(samples.get('hermes_plugin_last_seen_timestamp_seconds')).toBe(0);
  });
});
