/**
 * One owner of series liveness, end to end (issue 29, defect 4): label caps filled by tools and
 * providers through pre and post events are given back once everything they wrote has been idle
 * past the series TTL, gauges of open spans included, so new tools and providers are admitted
 * again, and the exposition never shows more values of a label than its cap, whether a scrape
 * came between or not. Real sidecar, real HTTP, an injected clock.
 */
import { describe, expect, it } from 'vitest';
import type { Samples } from '../support/exposition.js';
import { startTestSidecar, type TestSidecar } from '../support/sidecar.js';

const TTL = 2;
const TOOL_CAP = 256;
const PROVIDER_CAP = 64;

const toolCall = (tool: string, id: string) => [
  { event: 'pre_tool_call', tool_name: tool, tool_call_id: id },
  { event: 'post_tool_call', tool_name: tool, tool_call_id: id, status: 'ok', duration_ms: 5 },
];
const apiCall = (provider: string, id: string) => [
  { event: 'pre_api_request', api_request_id: id, provider, model: 'm' },
  { event: 'post_api_request', api_request_id: id, provider, model: 'm', api_duration: 0.5 },
];

/** The distinct values of `label` across every agent sample (self metrics aside). */
function valuesOf(samples: Samples, label: string): Set<string> {
  const values = new Set<string>();
  const pattern = new RegExp(`[{,]${label}="([^"]*)"`);
  for (const key of samples.keys()) {
    if (!key.startsWith('hermes_') || key.startsWith('hermes_sidecar_')) continue;
    const value = pattern.exec(key)?.[1];
    if (value !== undefined) values.add(value);
  }
  return values;
}

async function post(harness: TestSidecar, lines: unknown[]): Promise<void> {
  for (let from = 0; from < lines.length; from += 500) {
    const response = await harness.postNdjson(lines.slice(from, from + 500));
    expect(response.status, response.text).toBe(202);
  }
  await harness.sidecar.queue.drained();
}

/** 300 tools and 80 providers, each with a pre and a post event: more than the caps hold. */
async function fillCaps(harness: TestSidecar, prefix: string, tools: number, providers: number): Promise<void> {
  const lines: unknown[] = [];
  for (let index = 0; index < tools; index += 1) lines.push(...toolCall(`${prefix}-tool-${index}`, `${prefix}-t${index}`));
  for (let index = 0; index < providers; index += 1) lines.push(...apiCall(`${prefix}-provider-${index}`, `${prefix}-r${index}`));
  await post(harness, lines);
}

/** Idle past the TTL: two sweeps a TTL apart (the first starts every series' idle time). */
async function idlePastTtl(harness: TestSidecar): Promise<void> {
  await harness.sidecar.sweep();
  harness.clock.advance(TTL + 3);
  await harness.sidecar.sweep();
}

const countOf = (values: Set<string>, prefix: string) => [...values].filter((value) => value.startsWith(prefix)).length;

describe('label caps given back by expiry, gauges of open spans included', () => {
  for (const scrapeBetween of [true, false]) {
    it(`admits new tools and providers once the old ones idled past the TTL, never exporting more than the cap (${scrapeBetween ? 'with' : 'without'} a scrape between)`, async () => {
      const harness = startTestSidecar({ 'metrics.series-ttl': String(TTL) });
      await fillCaps(harness, 'old', 300, 80);
      if (scrapeBetween) {
        const samples = await harness.samples();
        expect(valuesOf(samples, 'tool').size).toBe(TOOL_CAP + 1);
        expect(samples.get('hermes_tool_calls_in_flight{tool="old-tool-0"}')).toBe(0);
      }
      await idlePastTtl(harness);
      await fillCaps(harness, 'new', 50, 20);
      const samples = await harness.samples();
      const tools = valuesOf(samples, 'tool');
      const providers = valuesOf(samples, 'provider');
      expect(countOf(tools, 'new-tool-')).toBe(50);
      expect(countOf(providers, 'new-provider-')).toBe(20);
      expect(countOf(tools, 'old-tool-')).toBe(0);
      expect(countOf(providers, 'old-provider-')).toBe(0);
      expect(tools.size).toBeLessThanOrEqual(TOOL_CAP + 1);
      expect(providers.size).toBeLessThanOrEqual(PROVIDER_CAP + 1);
      expect(samples.get('hermes_tool_calls_in_flight{tool="new-tool-0"}')).toBe(0);
      expect(samples.get('hermes_api_requests_in_flight{kind="main",provider="new-provider-0"}')).toBe(0);
      expect(samples.get('hermes_sidecar_series_expired_total{metric="hermes_tool_calls_in_flight"}')).toBe(TOOL_CAP + 1);
    });
  }

  it('keeps a tool whose call is still open, and its gauge, past the TTL', async () => {
    const harness = startTestSidecar({ 'metrics.series-ttl': String(TTL), 'correlator.span-ttl': '3600' });
    await post(harness, [{ event: 'pre_tool_call', tool_name: 'long', tool_call_id: 'open-1' }]);
    await idlePastTtl(harness);
    await idlePastTtl(harness);
    let samples = await harness.samples();
    expect(samples.get('hermes_tool_calls_in_flight{tool="long"}')).toBe(1);
    await post(harness, [{ event: 'post_tool_call', tool_name: 'long', tool_call_id: 'open-1', status: 'ok', duration_ms: 5 }]);
    samples = await harness.samples();
    expect(samples.get('hermes_tool_calls_in_flight{tool="long"}')).toBe(0);
    expect(samples.get('hermes_tool_calls_total{tool="long",status="ok"}')).toBe(1);
  });
});
