/**
 * The benchmarks' equal-work check (bench/equivalence.ts) on the real pipelines: the sidecar's
 * own families, prom-client and the OpenTelemetry SDK behind the same Metrics agree sample by
 * sample, and a baseline that skips work or throws is caught.
 */
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { catalogueMetrics, createOtelPipeline, createPipeline, createPromClientPipeline, promClientFactory, type FamilyFactory } from '../../bench/alternatives.js';
import { assertEquivalent, compareSamples, expositionSamples, otelSamples } from '../../bench/equivalence.js';
import { buildSidecar, scrapeText } from '../../bench/inprocess.js';
import { defaultConfig } from '../../src/config.js';
import { decodeBody } from '../../src/contract/decode.js';
import type { ObserverEvent } from '../../src/contract/events.js';
import { TrafficModel } from '../../tools/traffic.js';

const clock = () => 1_800_000_000;

function events(): ObserverEvent[] {
  const lines = new TrafficModel({ seed: 7, agents: 3, errorRate: 0.1, faults: false }).batch(600);
  const body = Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n'));
  return decodeBody(body, { format: 'ndjson', maxEvents: 100_000, arrivedAt: clock() }).events;
}

describe('bench equivalence', () => {
  it('finds ours, OpenTelemetry and prom-client equal on the same events, with no event thrown on', async () => {
    const batch = events();
    const sidecar = buildSidecar({ clock });
    const otel = createOtelPipeline(defaultConfig(), clock);
    const prom = createPromClientPipeline(defaultConfig(), false, clock);
    for (const pipeline of [sidecar, otel, prom]) pipeline.dispatcher.applyBatch(batch);
    otel.collect();
    prom.collect();
    const ours = expositionSamples(await scrapeText(sidecar));
    const check = compareSamples({ ours, otel: await otelSamples(otel.exporter), prom: expositionSamples(await prom.registry.metrics()) });
    await otel.shutdown();
    expect(check.mismatches, JSON.stringify(check.examples)).toBe(0);
    expect([sidecar.applyErrors(), otel.applyErrors(), prom.applyErrors()]).toEqual([0, 0, 0]);
    // The comparison covered the API path, where a baseline that threw would have skipped it.
    const apiRequests = [...ours.entries()].filter(([key]) => key.startsWith('hermes_api_requests_total{'));
    expect(apiRequests.length).toBeGreaterThan(0);
    expect(apiRequests.reduce((total, [, value]) => total + value, 0)).toBeGreaterThan(100);
    expect(() => assertEquivalent(check, { ours: 0, otel: 0, prom: 0 }, 'test')).not.toThrow();
  });

  it('fails when a baseline skips work (counter handles that count nothing)', async () => {
    const registry = new client.Registry();
    const honest = promClientFactory(registry, defaultConfig());
    const lazy: FamilyFactory = {
      ...honest,
      counter: (spec) => {
        const family = honest.counter(spec);
        return { inc: (labels, amount) => family.inc(labels, amount), handle: () => ({ inc: () => undefined }) };
      },
    };
    const batch = events();
    const sidecar = buildSidecar({ clock });
    const baseline = createPipeline(defaultConfig(), catalogueMetrics(lazy), clock);
    sidecar.dispatcher.applyBatch(batch);
    baseline.dispatcher.applyBatch(batch);
    baseline.collect();
    const check = compareSamples({ ours: expositionSamples(await scrapeText(sidecar)), lazy: expositionSamples(await registry.metrics()) });
    expect(check.mismatches).toBeGreaterThan(0);
    expect(check.examples.some((example) => example.sample.startsWith('hermes_api_requests_total{'))).toBe(true);
    expect(() => assertEquivalent(check, { ours: 0, lazy: baseline.applyErrors() }, 'test')).toThrow(/did not do the same work/);
  });

  it('fails when a baseline throws on events, even if its samples happen to agree', () => {
    const registry = new client.Registry();
    const honest = promClientFactory(registry, defaultConfig());
    const throwing: FamilyFactory = {
      ...honest,
      histogram: (spec) => ({
        observe: (labels, value) => honest.histogram(spec).observe(labels, value),
        handle: () => ({
          observe: () => {
            throw new Error('no such method');
          },
        }),
      }),
    };
    const baseline = createPipeline(defaultConfig(), catalogueMetrics(throwing), clock);
    baseline.dispatcher.applyBatch(events());
    expect(baseline.applyErrors()).toBeGreaterThan(0);
    const none = compareSamples({ a: new Map(), b: new Map() });
    expect(() => assertEquivalent(none, { baseline: baseline.applyErrors() }, 'test')).toThrow(/apply errors baseline [1-9]/);
  });

  it('refuses a factory whose family lacks a method of its kind', () => {
    const honest = promClientFactory(new client.Registry(), defaultConfig());
    const incomplete = {
      ...honest,
      gauge: (spec: Parameters<FamilyFactory['gauge']>[0]) => {
        const gauge = honest.gauge(spec);
        return { set: gauge.set.bind(gauge), inc: gauge.inc.bind(gauge) };
      },
    };
    // @ts-expect-error: a gauge without dec() is not a GaugeFamily, which the compiler catches first.
    expect(() => catalogueMetrics(incomplete)).toThrow(/lacks a family or one of its methods/);
  });
});
