/** The web listener's failure paths: a failing collector or render answers 500, counted. */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createWebApp } from '../../src/web/app.js';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { createExposition } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { series, parseSamples } from '../support/exposition.js';

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
