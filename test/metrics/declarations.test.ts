/**
 * A component is handed the families of its own declaration object and nothing else: writing a
 * family it did not declare, or a closed label value its declaration does not list, does not
 * type-check (the `@ts-expect-error` lines below fail `npm run typecheck` the moment they
 * compile), and at run time the handle is simply not there. Beside each `@ts-expect-error` a
 * run-time check shows what the line would do if it compiled.
 */
import { describe, expect, it } from 'vitest';
import { CATALOGUE, createMetricsRegistry } from '../../src/catalogue.js';
import { API_FAMILIES } from '../../src/correlate/recorders/api.js';
import { RunRecorder, RUN_FAMILIES } from '../../src/correlate/recorders/runs.js';
import { TOOL_FAMILIES } from '../../src/correlate/recorders/tools.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { familiesFor, type Families } from '../../src/metrics/registry.js';
import { INGESTOR_FAMILIES } from '../../src/ingest/ingestor.js';
import { series } from '../support/exposition.js';
import { recorderHarness } from '../support/recorders.js';

const registry = () => createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 1000, defaultMetrics: false });

/** What a tool recorder may write: its own declaration's families. */
function writeAsToolRecorder(metrics: Families<typeof TOOL_FAMILIES>): void {
  metrics.toolCalls.inc({ tool: 'terminal', status: 'ok' });
  // @ts-expect-error hermes_api_requests_total is the API recorder's, not declared by the tool recorder
  metrics.apiRequests.inc({ kind: 'main', provider: 'p', model: 'm', outcome: 'success' }); // eslint-disable-line @typescript-eslint/no-unsafe-call
}

describe('family declarations', () => {
  it('hand a component only the families it declares', () => {
    const metrics = familiesFor(registry().metrics, TOOL_FAMILIES);
    expect(Object.keys(metrics).sort()).toEqual(Object.keys(TOOL_FAMILIES).sort());
    // The undeclared write is refused by the type-check and finds no handle at run time.
    expect(() => writeAsToolRecorder(metrics)).toThrow(TypeError);
  });

  it('refuse a closed label value the declaration does not list: at type-check, and in storage at run time', async () => {
    const harness = recorderHarness();
    const { eventsDropped } = familiesFor(harness.metrics, INGESTOR_FAMILIES);
    // The value the compiler refuses is one the declaration does not list, beside one it does.
    const reasons: readonly string[] = INGESTOR_FAMILIES.eventsDropped.labels.reason;
    expect(reasons).not.toContain('lost');
    expect(reasons).toContain('queue_full');
    // @ts-expect-error 'lost' is not a drop reason of the ingestor's declaration
    eventsDropped.inc({ reason: 'lost' });
    eventsDropped.inc({ reason: 'queue_full' });
    // Past the type-check (a cast), storage refuses the value, counts the refusal and writes the
    // drop as reason="other", so it is still counted.
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_dropped_total', { reason: 'lost' }))).toBeUndefined();
    expect(samples.get(series('hermes_sidecar_events_dropped_total', { reason: 'other' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_events_dropped_total', { reason: 'queue_full' }))).toBe(1);
    expect(samples.get('hermes_sidecar_invalid_values_total')).toBe(1);
  });

  it('refuse the handles of another component where a component is built', () => {
    const harness = recorderHarness();
    const build = (context: ConstructorParameters<typeof RunRecorder>[0]) =>
      // @ts-expect-error the run recorder is built with its own families, not the API recorder's
      new RunRecorder(context, familiesFor(harness.metrics, API_FAMILIES));
    // Built anyway, it finds none of its own handles at its first write.
    const wrong = build(harness.context);
    expect(() => wrong.runFinished({ type: 'agent_run_finished', stopReason: 'done' })).toThrow(TypeError);
    const right = new RunRecorder(harness.context, familiesFor(harness.metrics, RUN_FAMILIES));
    expect(() => right.runFinished({ type: 'agent_run_finished', stopReason: 'done' })).not.toThrow();
    expect(Object.keys(familiesFor(harness.metrics, RUN_FAMILIES))).toEqual(['agentRuns', 'agentRunDuration', 'memoryWrites', 'memoryWriteBytes']);
  });

  it('gather into a catalogue whose specs are the declarations themselves', () => {
    expect(CATALOGUE.toolCalls).toBe(TOOL_FAMILIES.toolCalls);
    expect(CATALOGUE.apiRequests).toBe(API_FAMILIES.apiRequests);
  });
});
