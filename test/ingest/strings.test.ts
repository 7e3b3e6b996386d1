/**
 * Client strings are bounded in bytes before anything stores or hashes them: 64 KiB values in
 * every id and name field the contract declares are absent, counted by field, and open nothing.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSamples, series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';

interface HookEntry {
  readonly fields: Readonly<Record<string, { readonly type?: string }>>;
  readonly added?: Readonly<Record<string, { readonly type?: string }>>;
}
const table = JSON.parse(
  readFileSync(new URL('../../plugin/hermes_prometheus_bridge/contract.json', import.meta.url), 'utf8'),
) as { readonly hooks: Readonly<Record<string, HookEntry>>; readonly observer: Readonly<Record<string, HookEntry>> };

/** Each declared hook with its string fields (flat and observer registrations together). */
function stringFields(): Map<string, Set<string>> {
  const hooks = new Map<string, Set<string>>();
  for (const section of [table.hooks, table.observer]) {
    for (const [hook, entry] of Object.entries(section)) {
      const names = hooks.get(hook) ?? new Set<string>();
      for (const [name, declaration] of Object.entries({ ...entry.fields, ...entry.added })) if (declaration.type === 'string') names.add(name);
      hooks.set(hook, names);
    }
  }
  return hooks;
}

const KIB_64 = 64 * 1024 - 512;
/** A distinct 64 KiB string: they differ at the end, past any cut. */
const huge = (index: number): string => `${'h'.repeat(KIB_64)}${index}`;

describe('64 KiB strings in every id and name field', () => {
  const hooks = stringFields();
  let index = 0;
  // Envelopes: session_event has a field named `event` of its own.
  const lines = [...hooks].map(([hook, names]) => ({ event: hook, data: Object.fromEntries([...names].map((name) => [name, huge(index++)])) }));

  it('are absent from every metric, counted by field, and open no span, session or subagent', async () => {
    const harness = startTestSidecar({ 'ingest.max-line-bytes': String(4 * 1024 * 1024) });
    const response = await harness.postNdjson(lines);
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ accepted: lines.length, rejected: 0 });
    const text = await harness.scrape();
    const samples = parseSamples(text);
    // Every field the readers read was counted under its wire name, once per line that carried it.
    for (const field of ['session_id', 'turn_id', 'api_request_id', 'tool_call_id', 'child_session_id', 'session_key', 'model', 'tool_name', 'pattern_key', 'provider', 'platform']) {
      const carried = lines.filter((line) => Object.hasOwn(line.data, field)).length;
      expect(carried).toBeGreaterThan(0);
      expect([field, samples.get(series('hermes_sidecar_values_rejected_total', { field }))]).toEqual([field, carried]);
    }
    // Nothing was opened under a long id: the gauges counted from the open tables are empty.
    for (const gauge of ['hermes_tool_calls_in_flight', 'hermes_api_requests_in_flight', 'hermes_sessions_active', 'hermes_subagents_active']) {
      const open = [...samples].filter(([name, value]) => name.startsWith(gauge) && value !== 0);
      expect(open).toEqual([]);
    }
    // Names that would be labels are `unknown`; no sample line carries a long value.
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'unknown', status: 'unknown' }))).toBe(1);
    expect(text.split('\n').filter((line) => line.length > 4096)).toEqual([]);
  });

  it('a plugin line whose instance is past the id limit is rejected as invalid, and no instance is remembered', async () => {
    const harness = startTestSidecar();
    const response = await harness.postNdjson([
      { event: 'post_tool_call', instance: 'i'.repeat(257), seq: 1, data: { tool_name: 't' } },
      { event: 'post_tool_call', instance: 'i'.repeat(256), seq: 1, data: { tool_name: 't' } },
    ]);
    expect(response.body).toMatchObject({ accepted: 1, rejected: 1, errors: [{ index: 0, reason: 'invalid_event' }] });
    const samples = await harness.samples();
    // One instance, the one within the limit.
    const instances = (samples.get(series('hermes_plugin_instances', { state: 'live' })) ?? 0) + (samples.get(series('hermes_plugin_instances', { state: 'stale' })) ?? 0);
    expect(instances).toBe(1);
  });

  it('--ingest.max-id-bytes and --ingest.max-label-value-bytes set the limits', async () => {
    const harness = startTestSidecar({ 'ingest.max-id-bytes': '8', 'ingest.max-label-value-bytes': '16' });
    await harness.postNdjson([
      { event: 'pre_tool_call', tool_call_id: 'c'.repeat(9), tool_name: 't'.repeat(16) },
      { event: 'pre_tool_call', tool_call_id: 'c'.repeat(8), tool_name: 't'.repeat(17) },
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'tool_call_id' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'tool_name' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_in_flight', { tool: 'unknown' }))).toBe(1);
  });
});
