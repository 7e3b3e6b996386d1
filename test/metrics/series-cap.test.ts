/** The global series cap: new agent label sets past it fold into overflow series and are counted. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';
import { scratchDir } from '../support/scratch.js';

const call = (tool: string, status = 'ok') => ({ event: 'post_tool_call', tool_name: tool, status, duration_ms: 10 });

describe('global series cap', () => {
  it('keeps live agent label sets at the cap and folds the rest into overflow series', async () => {
    // Each new tool makes 2 label sets (tool_calls_total, tool_call_duration_seconds): a cap of 6
    // holds three tools, and the fourth and fifth go to the overflow series.
    const harness = startTestSidecar({ 'metrics.max-series': '6' });
    await harness.postNdjson([call('a'), call('b'), call('c'), call('d'), call('e'), call('a')]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'a', status: 'ok' }))).toBe(2);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'b', status: 'ok' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'c', status: 'ok' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'd', status: 'ok' }))).toBeUndefined();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'other', status: 'ok' }))).toBe(2);
    expect(samples.get(series('hermes_tool_call_duration_seconds_count', { tool: 'other', status: 'ok' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_series_overflow_total', { metric: 'hermes_tool_calls_total' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_series_overflow_total', { metric: 'hermes_tool_call_duration_seconds' }))).toBe(2);
    // Totals are never lost: 6 calls in all.
    const total = [...samples].filter(([key]) => key.startsWith('hermes_tool_calls_total{')).reduce((sum, [, value]) => sum + value, 0);
    expect(total).toBe(6);
    expect(samples.get('hermes_sidecar_series_limit')).toBe(6);
    expect(samples.get('hermes_sidecar_series')).toBe(8); // 6 admitted + 2 overflow series
  });

  it('sums the scrape-time gauges of folded label sets into their overflow series', async () => {
    const harness = startTestSidecar({ 'metrics.max-series': '2' });
    const start = (tool: string, id: string) => ({ event: 'pre_tool_call', tool_name: tool, tool_call_id: id });
    await harness.postNdjson([start('a', '1'), start('b', '2'), start('c', '3'), start('d', '4'), start('d', '5')]);
    const first = await harness.samples();
    expect(first.get(series('hermes_tool_calls_in_flight', { tool: 'a' }))).toBe(1);
    expect(first.get(series('hermes_tool_calls_in_flight', { tool: 'b' }))).toBe(1);
    expect(first.get(series('hermes_tool_calls_in_flight', { tool: 'other' }))).toBe(3);
    await harness.postNdjson([{ event: 'post_tool_call', tool_name: 'd', tool_call_id: '4', status: 'ok' }]);
    const second = await harness.samples();
    expect(second.get(series('hermes_tool_calls_in_flight', { tool: 'other' }))).toBe(2);
    const inFlight = [...second].filter(([key]) => key.startsWith('hermes_tool_calls_in_flight{')).reduce((sum, [, value]) => sum + value, 0);
    expect(inFlight).toBe(4);
  });

  it('folds the API path (resolved series handles) the same way, counting every folded write', async () => {
    const harness = startTestSidecar({ 'metrics.max-series': '2' });
    const success = (model: string) => ({ event: 'post_api_request', provider: 'p', model });
    // m1 takes requests_total and finish_reasons_total; m2 and its repeat fold.
    await harness.postNdjson([success('m1'), success('m2'), success('m2'), success('m1')]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_api_requests_total', { kind: 'main', provider: 'p', model: 'm1', outcome: 'success' }))).toBe(2);
    expect(samples.get(series('hermes_api_requests_total', { kind: 'main', provider: 'other', model: 'other', outcome: 'success' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_series_overflow_total', { metric: 'hermes_api_requests_total' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_series_overflow_total', { metric: 'hermes_api_finish_reasons_total' }))).toBe(2);
  });

  it('keeps closed labels on the overflow series', async () => {
    const harness = startTestSidecar({ 'metrics.max-series': '2' });
    await harness.postNdjson([call('a'), call('b', 'error'), call('c', 'timeout')]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'b', status: 'error' }))).toBeUndefined();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'other', status: 'error' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'other', status: 'timeout' }))).toBe(1);
    expect(samples.get(series('hermes_tool_errors_total', { tool: 'other', error_type: 'unknown' }))).toBe(2);
  });

  it('bounds /metrics whatever the input: 20,000 distinct tools', async () => {
    // The per-label cap is lifted so only the global cap stands between the input and /metrics.
    const file = join(scratchDir('sidecar-cap-'), 'config.yaml');
    writeFileSync(file, 'labels:\n  tool:\n    cap: 100000\n');
    const harness = startTestSidecar({ 'metrics.max-series': '500' }, { configFile: file });
    for (let batch = 0; batch < 20; batch += 1) {
      await harness.postNdjson(Array.from({ length: 1000 }, (_, index) => call(`tool-${batch}-${index}`)));
    }
    const samples = await harness.samples();
    expect(samples.get('hermes_sidecar_series')).toBe(502);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'other', status: 'ok' }))).toBe(20_000 - 250);
    expect(samples.get(series('hermes_sidecar_label_overflow_total', { label: 'tool' }))).toBe(0);
    expect((await harness.scrape()).split('\n').length).toBeLessThan(12_000);
  });
});
