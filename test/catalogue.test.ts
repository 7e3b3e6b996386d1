import { describe, expect, it } from 'vitest';
import { CATALOGUE, ENVELOPE_ONLY_METRICS, FED_BY, METRIC_NAMES, type MetricKey } from '../src/catalogue.js';
import { TOOL_FAMILIES } from '../src/correlate/recorders/tools.js';
import { RUN_FAMILIES } from '../src/correlate/recorders/runs.js';
import { closedValues, DEFAULT_BUCKETS, type MetricSpec } from '../src/metrics/declare.js';
import { VALUES } from '../src/contract/vocabulary.js';
import { INGESTOR_VALUES } from '../src/ingest/ingestor.js';
import { SPAN_VALUES } from '../src/correlate/recorders/spanTables.js';
import { STATE_VALUES } from '../src/correlate/stateTableNames.js';
import { createMetricsRegistry } from '../src/catalogue.js';
import { initialLabelSets } from '../src/metrics/registry.js';
import { createExposition, renderText } from '../src/exposition/exposition.js';
import { OPEN_LABELS } from '../src/metrics/labels.js';
import { TESTED_HERMES } from '../src/contract/hooks.js';

const SPECS: MetricSpec[] = Object.values(CATALOGUE);
const words = (text: string): Set<string> => new Set(text.match(/[\w/]+/g) ?? []);

describe('the catalogue', () => {
  it('fills every HELP placeholder', () => {
    expect(SPECS.filter((spec) => /[{}]/.test(spec.help)).map((spec) => spec.name)).toEqual([]);
  });

  it('lists all of a closed label\'s values in a HELP text that lists some of them (no drift)', () => {
    const drifted: string[] = [];
    for (const spec of SPECS) {
      const help = words(spec.help);
      for (const label of spec.labelNames) {
        const values = closedValues(spec.labels[label] ?? 'open', SPECS) ?? [];
        const named = values.filter((value) => help.has(value));
        if (named.length >= 2 && named.length < values.length) drifted.push(`${spec.name}{${label}}: ${values.filter((value) => !help.has(value)).join(', ')}`);
      }
    }
    expect(drifted).toEqual([]);
  });

  it('says what hermes_sidecar_events_dropped_total counts, from its value set', () => {
    expect(CATALOGUE.eventsDropped.help).toContain('(queue_full, shutdown, internal_error)');
  });

  it('declares open labels only where the label guard has a cap for them', () => {
    const open = SPECS.flatMap((spec) => spec.labelNames.filter((label) => spec.labels[label] === 'open'));
    expect(open.filter((label) => !(OPEN_LABELS as readonly string[]).includes(label))).toEqual([]);
  });

  it('uses token_type, never type, as a label name', () => {
    expect(CATALOGUE.tokens.labelNames).toEqual(['kind', 'provider', 'model', 'token_type']);
    expect(SPECS.filter((spec) => spec.labelNames.includes('type'))).toEqual([]);
  });

  it('gives each histogram a bucket set', () => {
    for (const spec of SPECS.filter((candidate) => candidate.type === 'histogram')) {
      expect(Object.keys(DEFAULT_BUCKETS)).toContain(spec.buckets);
    }
  });
});

describe('the order and the feeds, derived from the declarations', () => {
  const keys = Object.keys(CATALOGUE) as MetricKey[];

  it('orders the families by scope, each scope in the order its components declare them', () => {
    const scopes = SPECS.map((spec) => spec.scope);
    expect([...new Set(scopes)]).toEqual(['agent', 'delivery', 'self']);
    // Each scope is one run: no family of an earlier scope after a later one.
    expect(scopes).toEqual([...scopes].sort((a, b) => ['agent', 'delivery', 'self'].indexOf(a) - ['agent', 'delivery', 'self'].indexOf(b)));
    expect(keys.slice(0, 2)).toEqual(['apiRequests', 'apiRequestDuration']);
    const tools = Object.keys(TOOL_FAMILIES);
    const first = keys.indexOf(tools[0] as MetricKey);
    expect(keys.slice(first, first + tools.length)).toEqual(tools);
    expect(new Set(METRIC_NAMES).size).toBe(keys.length);
  });

  it('says what feeds every family, each in its own declaration', () => {
    expect(Object.keys(FED_BY)).toEqual(keys);
    for (const key of keys) {
      expect(FED_BY[key].by.length, key).toBeGreaterThan(0);
      expect(FED_BY[key], key).toBe((CATALOGUE[key] as { readonly fedBy?: unknown }).fedBy);
    }
    expect(FED_BY.apiRequests.by).toBe(`\`post_api_request\` (success), \`api_request_error\` (error); \`kind="auxiliary"\` needs \`pre/post_auxiliary_call\` (newer Hermes; not in VALID_HOOKS of ${TESTED_HERMES})`);
    expect(FED_BY.invalidValues).toEqual({ feed: 'sidecar', by: 'series storage: numbers refused as not finite or negative, closed label values not declared' });
    expect(FED_BY.toolCalls).toEqual({ feed: 'hermes', by: '`post_tool_call`: `tool_name`, `status`' });
    expect(FED_BY.toolCalls).toBe(TOOL_FAMILIES.toolCalls.fedBy);
    expect(FED_BY.buildInfo).toEqual({ feed: 'sidecar', by: 'build' });
  });

  it('lists as envelope-only exactly the families fed by the envelope variant alone', () => {
    expect(ENVELOPE_ONLY_METRICS).toEqual(['sessionEvents', 'agentRuns', 'agentRunDuration', 'memoryWrites', 'memoryWriteBytes']);
    expect(Object.keys(RUN_FAMILIES).every((key) => (ENVELOPE_ONLY_METRICS as readonly string[]).includes(key))).toBe(true);
  });
});

describe('pre-initialised series', () => {
  const metricsRegistry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false });
  const exposition = createExposition(metricsRegistry);
  const registry = { ...metricsRegistry, render: () => renderText(exposition) };

  it('are every combination of closed values of the pipeline metrics, at 0, before any event', async () => {
    const text = await registry.render();
    for (const spec of SPECS.filter((candidate) => candidate.preinit && candidate.labelNames.length > 0)) {
      const sets = initialLabelSets(spec, SPECS);
      expect(sets.length).toBeGreaterThan(0);
      const sample = spec.type === 'histogram' ? `${spec.name}_count` : spec.name;
      const lines = text.split('\n').filter((line) => line.startsWith(`${sample}{`) || line.startsWith(`${sample} `));
      expect(lines).toHaveLength(sets.length);
      for (const line of lines) expect(line.endsWith(' 0')).toBe(true);
    }
  });

  it('include the drop, rejection, orphan and eviction reasons, and spend no agent series', async () => {
    const text = await registry.render();
    for (const reason of INGESTOR_VALUES.drop_reason) expect(text).toContain(`hermes_sidecar_events_dropped_total{reason="${reason}"} 0\n`);
    for (const reason of VALUES.rejection_reason) expect(text).toContain(`hermes_sidecar_events_rejected_total{reason="${reason}"} 0\n`);
    for (const kind of SPAN_VALUES.span_kind) expect(text).toContain(`hermes_sidecar_orphaned_spans_total{kind="${kind}"} 0\n`);
    for (const table of STATE_VALUES.state_table) expect(text).toContain(`hermes_sidecar_state_evictions_total{table="${table}"} 0\n`);
    expect(SPECS.filter((spec) => spec.scope === 'agent' && spec.preinit)).toEqual([]);
    expect(registry.agentSeries()).toBe(0);
  });

  it('leave out metrics with an open label', () => {
    expect(initialLabelSets(CATALOGUE.apiRequests, SPECS)).toEqual([]);
    expect(initialLabelSets(CATALOGUE.buildInfo, SPECS)).toEqual([]);
  });
});
