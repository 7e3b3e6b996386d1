/**
 * The web listener: /metrics, /-/healthy, /-/ready and a landing page. Read-only.
 *
 * A scrape first refreshes the gauges computed from state, then renders the registry. If a
 * collector or the render fails, the failure is counted and the answer is 500, never a 200 with
 * stale or partial text, so Prometheus marks the target down (`up == 0`).
 */
import express, { type Express, type Response } from 'express';
import { metricsOwnedBy, type MetricsRegistry, type OwnedMetrics } from '../metrics/registry.js';

export interface WebAppOptions {
  readonly registry: MetricsRegistry;
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

  app.get(options.telemetryPath, async (_request, response) => {
    if (!runCollectors(options, metrics)) return failScrape(response);
    try {
      // Encoded once: the length comes from the bytes, not from a second pass over the text
      // (send() would also hash it for an ETag).
      const body = Buffer.from(await options.registry.render());
      response.status(200).set({ 'Content-Type': options.registry.contentType, 'Content-Length': String(body.length) }).end(body);
    } catch (error) {
      metrics.scrapeErrors.inc({ stage: 'render' });
      options.onScrapeError('render', error);
      failScrape(response);
    }
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
