/**
 * The web listener: /metrics, /-/healthy, /-/ready and a landing page. Read-only.
 *
 * A scrape first refreshes the gauges computed from state, then renders the registry in the
 * format the scraper asks for (OpenMetrics or text 0.0.4, gzipped when accepted; see
 * src/exposition/negotiate.ts). If a collector or the render fails, the failure is counted and
 * the answer is 500, never a 200 with stale or partial text, so Prometheus marks the target down
 * (`up == 0`). The whole text is rendered before the first byte is sent.
 */
import express, { type Express, type Response } from 'express';
import type { Exposition } from '../exposition/exposition.js';
import { acceptsGzip, CONTENT_TYPES, negotiateFormat } from '../exposition/negotiate.js';
import { writeGzipped, writeParts } from '../exposition/write.js';
import { metricsOwnedBy, type MetricsRegistry, type OwnedMetrics } from '../metrics/registry.js';

export interface WebAppOptions {
  readonly registry: Pick<MetricsRegistry, 'metrics'>;
  readonly exposition: Exposition;
  readonly telemetryPath: string;
  readonly version: string;
  /** Refreshes scrape-time gauges; may throw, which is counted. */
  readonly collectors: readonly (() => void)[];
  /** Readiness and the word for it on /-/ready (503 when not ready). */
  readonly ready: () => { readonly ready: boolean; readonly reason: string };
  readonly onScrapeError: (stage: 'collect' | 'render', error: unknown) => void;
}

function landingPage(telemetryPath: string, version: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Hermes Prometheus sidecar</title></head>
<body>
<h1>Hermes Prometheus sidecar</h1>
<p>Version ${version}. Prometheus metrics for Hermes Agent observer-hook events.</p>
<ul>
<li><a href="${telemetryPath}">Metrics</a></li>
<li><a href="/-/healthy">Health</a></li>
<li><a href="/-/ready">Readiness</a></li>
</ul>
</body>
</html>
`;
}

/** Runs every collector (a failing one does not stop the others); false when any failed. */
function runCollectors(options: WebAppOptions, metrics: OwnedMetrics<'web/app'>): boolean {
  let ok = true;
  for (const collect of options.collectors) {
    try {
      collect();
    } catch (error) {
      ok = false;
      metrics.scrapeErrors.inc({ stage: 'collect' });
      options.onScrapeError('collect', error);
    }
  }
  return ok;
}

function failScrape(response: Response): void {
  response.status(500).type('text/plain').send('metrics could not be rendered\n');
}

export function createWebApp(options: WebAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // An ETag would hash every multi-megabyte exposition; scrapes are never conditional.
  app.disable('etag');
  const metrics = metricsOwnedBy(options.registry.metrics, 'web/app');
  const page = landingPage(options.telemetryPath, options.version);

  app.get(options.telemetryPath, async (request, response) => {
    if (!runCollectors(options, metrics)) return failScrape(response);
    const format = negotiateFormat(request.get('accept'));
    let parts: string[];
    try {
      parts = await options.exposition.render(format);
    } catch (error) {
      metrics.scrapeErrors.inc({ stage: 'render' });
      options.onScrapeError('render', error);
      return failScrape(response);
    }
    const gzip = acceptsGzip(request.get('accept-encoding'));
    response.status(200).set({ 'Content-Type': CONTENT_TYPES[format], Vary: 'Accept, Accept-Encoding' });
    if (gzip) response.set('Content-Encoding', 'gzip');
    // A scraper that goes away mid-answer only ends its own response.
    await (gzip ? writeGzipped(parts, response) : writeParts(parts, response));
  });
  app.get('/-/healthy', (_request, response) => {
    response.type('text/plain').send('Healthy\n');
  });
  app.get('/-/ready', (_request, response) => {
    const { ready, reason } = options.ready();
    response.status(ready ? 200 : 503).type('text/plain').send(`${reason}\n`);
  });
  app.get('/', (_request, response) => {
    response.type('html').send(page);
  });
  app.use((_request, response) => {
    response.status(404).type('text/plain').send('Not found\n');
  });
  return app;
}
