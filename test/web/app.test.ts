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
