/** The web listener's failure paths: a failing collector or render answers 500, counted. */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createWebApp } from '../../src/web/app.js';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { createExposition } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { series, parseSamples } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';

function webWith(options: { failCollect?: () => boolean; failRender?: () => boolean }) {
  const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false });
  const errors: string[] = [];
  const exposition = createExposition(registry);
  const app = createWebApp({
    registry,
    exposition: { render: (format) => (options.failRender?.() === true ? Promise.reject(new Error('boom')) : exposition.render(format)) },
    telemetryPath: '/metrics',
    version: 'test',
    ready: () => ({ ready: true, reason: "Ready" }),
    onScrapeError: (stage) => errors.push(stage),
    collectors: [
      () => {
        if (options.failCollect?.() === true) throw new Error('collector broke');
      },
      () => registry.metrics.queueDepth.set({}, 4),
    ],
  });
  return { app, errors };
}

describe('/metrics failures', () => {
  it('answers 500 (not a partial 200) when a collector throws, and counts it', async () => {
    let failing = true;
    const { app, errors } = webWith({ failCollect: () => failing });
    const failed = await request(app).get('/metrics');
    expect(failed.status).toBe(500);
    expect(failed.text).toBe('metrics could not be rendered\n');
    failing = false;
    const samples = parseSamples((await request(app).get('/metrics').expect(200)).text);
    expect(samples.get(series('hermes_sidecar_scrape_errors_total', { stage: 'collect' }))).toBe(1);
    // the other collectors still ran
    expect(samples.get('hermes_sidecar_queue_depth')).toBe(4);
    expect(errors).toEqual(['collect']);
  });

  it('answers 500 when rendering fails, and counts it', async () => {
    let failing = true;
    const { app, errors } = webWith({ failRender: () => failing });
    expect((await request(app).get('/metrics')).status).toBe(500);
    failing = false;
    const samples = parseSamples((await request(app).get('/metrics').expect(200)).text);
    expect(samples.get(series('hermes_sidecar_scrape_errors_total', { stage: 'render' }))).toBe(1);
    expect(errors).toEqual(['render']);
  });
});

describe('HEAD /metrics', () => {
  it('answers with the negotiated headers alone, without collecting or rendering (issue 29 defect 1)', async () => {
    let collected = 0;
    let rendered = 0;
    const { app } = webWith({ failCollect: () => ((collected += 1), false), failRender: () => ((rendered += 1), false) });
    const answer = await request(app)
      .head('/metrics')
      .set('Accept', 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5')
      .set('Accept-Encoding', 'gzip');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(answer.headers['content-encoding']).toBe('gzip');
    expect(answer.headers.vary).toBe('Accept, Accept-Encoding');
    expect(answer.headers['content-length']).toBeUndefined();
    expect([collected, rendered]).toEqual([0, 0]);
    // A GET still renders, and the render counter shows the HEAD made none.
    const samples = parseSamples((await request(app).get('/metrics').expect(200)).text);
    expect([collected, rendered]).toEqual([1, 1]);
    expect(samples.get('hermes_sidecar_scrape_renders_total')).toBe(1);
  });
});

describe('landing page', () => {
  it('shows the ingest address and the live plugin instances, by the rule hermes_plugin_instances uses', async () => {
    const harness = startTestSidecar();
    const before = (await harness.web.get('/').expect(200)).text;
    expect(before).toContain('Ingest listener: <code>127.0.0.1:0</code>');
    expect(before).toContain('Live plugin instances: 0. No bridge plugin is reporting');
    const heartbeat = (instance: string) => ({ event: 'plugin_heartbeat', instance, data: { interval_seconds: 5, dropped: {} } });
    await harness.postNdjson([heartbeat('a'), heartbeat('b')]);
    expect((await harness.web.get('/').expect(200)).text).toContain('Live plugin instances: 2.</p>');
    expect((await harness.samples()).get(series('hermes_plugin_instances', { state: 'live' }))).toBe(2);
    // two missed heartbeats later both are stale: the page and the metric agree again
    harness.clock.advance(16);
    expect((await harness.web.get('/').expect(200)).text).toContain('Live plugin instances: 0.');
    expect((await harness.samples()).get(series('hermes_plugin_instances', { state: 'live' }))).toBe(0);
  });

  it('escapes what it shows from configuration', async () => {
    const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false });
    const app = createWebApp({
      registry,
      exposition: createExposition(registry),
      telemetryPath: '/metrics',
      version: 'test',
      ingestAddress: '<b>&',
      liveInstances: () => 3,
      ready: () => ({ ready: true, reason: 'Ready' }),
      onScrapeError: () => undefined,
      collectors: [],
    });
    const page = (await request(app).get('/').expect(200)).text;
    expect(page).toContain('<code>&lt;b&gt;&amp;</code>');
    expect(page).toContain('Live plugin instances: 3.</p>');
  });
});
