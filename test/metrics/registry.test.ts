import { describe, expect, it } from 'vitest';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { defaultLabelRules } from '../../src/metrics/labels.js';
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

  it('builds the label guard on its own storage, with the rules it is given: its folds are counted in the registry, and a value leaves the cap with its last series at the registry expiry sweep', async () => {
    const rules = { ...defaultLabelRules(), tool: { cap: 1 } };
    const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false, labels: rules, seriesTtlSeconds: 60 });
    const tool = registry.labels.value('tool', 'shell');
    registry.metrics.toolCalls.inc({ tool, status: 'ok' });
    expect(registry.labels.value('tool', 'browser')).toBe('other');
    // The first sweep starts the idle time, the second (past the TTL) removes the series; the guard's sweep is its last step.
    for (const now of [1000, 2000]) {
      const step = registry.expirySteps(now);
      while (step()) {
        // bounded steps
      }
    }
    expect(registry.labels.admittedCount('tool')).toBe(0);
    expect(registry.labels.value('tool', 'browser')).toBe('browser');
    const samples = parseSamples(await renderText(createExposition(registry)));
    expect(samples.get(series('hermes_sidecar_label_overflow_total', { label: 'tool' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_series_expired_total', { metric: 'hermes_tool_calls_total' }))).toBe(1);
  });
});
