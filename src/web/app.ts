/**
 * The web listener: /metrics, /-/healthy, /-/ready and a landing page. Read-only.
 *
 * A scrape first refreshes the gauges computed from state, then renders the registry in the
 * format the scraper asks for (OpenMetrics or text 0.0.4, gzipped when accepted; see
 * src/exposition/negotiate.ts). If a collector or the render fails, the failure is counted and
 * the answer is 500, never a 200 with stale or partial text, so Prometheus marks the target down
 * (`up == 0`). The whole text is rendered before the first byte is sent; renders are paced and
 * every scrape waiting for one shares it (renders.ts). HEAD is answered with the negotiated
 * headers alone, never rendered.
 */
import express, { type Express, type Response } from 'express';
import type { Exposition } from '../exposition/exposition.js';
import { acceptsGzip, CONTENT_TYPES, negotiateFormat } from '../exposition/negotiate.js';
import type { Families, MetricsRegistry } from '../metrics/registry.js';
import { DEFAULT_MAX_HELD_BYTES, HeldBodies } from './heldBodies.js';
import type { RenderedBody } from './parts.js';
import { RenderFailure, SharedRenders, type RenderPacing } from './renders.js';
import { counter, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';

/** The closed value sets of this module's labels. */
export const WEB_APP_VALUES = {
  scrape_stage: ['collect', 'render'],
} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const WEB_APP_FAMILIES = {
  scrapeErrors: fed(counter('hermes_sidecar_scrape_errors_total', { stage: WEB_APP_VALUES.scrape_stage }, 'self',
    'Failures while rendering /metrics, by stage ({stage}): a collector that threw (collect) or a render that failed and answered 500 (render).'),
    'sidecar', '/metrics'),
  scrapeAnswersDropped: fed(counter('hermes_sidecar_scrape_answers_dropped_total', {}, 'self',
    'Scrape answers dropped with their connection before the peer had read them, to keep the bytes of unread answers under 32 MiB: those peers had not read an older render than everyone else.'),
    'sidecar', '/metrics'),
  scrapeRenders: fed(counter('hermes_sidecar_scrape_renders_total', {}, 'self',
    'Renders of the exposition made for /metrics. Every scrape that waited for a render shares it, so under a crowd of scrapers this grows far slower than the scrapes.'),
    'sidecar', '/metrics'),
  scrapesPaced: fed(counter('hermes_sidecar_scrapes_paced_total', {}, 'self',
    'Scrapes that waited for a later render because one had run too recently: renders start at most once per --web.min-render-interval and take at most half the time, however many scrapers come.'),
    'sidecar', '/metrics'),
} as const satisfies Declarations;

export interface WebAppOptions {
  readonly registry: Pick<MetricsRegistry<Families<typeof WEB_APP_FAMILIES>>, 'metrics'>;
  readonly exposition: Exposition;
  readonly telemetryPath: string;
  readonly version: string;
  /** Refreshes scrape-time gauges; may throw, which is counted. */
  readonly collectors: readonly (() => void)[];
  /** Readiness and the word for it on /-/ready (503 when not ready). */
  readonly ready: () => { readonly ready: boolean; readonly reason: string };
  readonly onScrapeError: (stage: 'collect' | 'render', error: unknown) => void;
  /** Most bytes of answers sent and not yet read by their peers (DEFAULT_MAX_HELD_BYTES). */
  readonly maxHeldBytes?: number;
  /** When renders may start (renders.ts; DEFAULT_MIN_RENDER_INTERVAL_MS apart by default). */
  readonly pacing?: RenderPacing;
  /** The configured ingest listen address (host:port), shown on the landing page. */
  readonly ingestAddress?: string;
  /** Plugin instances live now, by the liveness rule hermes_plugin_instances reports. */
  readonly liveInstances?: () => number;
}

const HTML_ESCAPES: ReadonlyMap<string, string> = new Map([['&', '&amp;'], ['<', '&lt;'], ['>', '&gt;'], ['"', '&quot;'], ["'", '&#39;']]);
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => HTML_ESCAPES.get(char) ?? char);

/** What a newcomer opening the web port needs: where to send events, and whether any plugin reports. */
function ingestStatus(options: WebAppOptions): string {
  const lines: string[] = [];
  if (options.ingestAddress !== undefined) {
    lines.push(`<p>Ingest listener: <code>${escapeHtml(options.ingestAddress)}</code> (POST <code>/v1/events</code> from the bridge plugin, <code>/v1/hooks</code> for signed webhooks).</p>`);
  }
  if (options.liveInstances !== undefined) {
    const live = options.liveInstances();
    lines.push(
      live === 0
        ? '<p>Live plugin instances: 0. No bridge plugin is reporting; see the README to install it.</p>'
        : `<p>Live plugin instances: ${live}.</p>`,
    );
  }
  return lines.join('\n');
}

function landingPage(options: WebAppOptions): string {
  const telemetryPath = escapeHtml(options.telemetryPath);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Hermes Prometheus sidecar</title></head>
<body>
<h1>Hermes Prometheus sidecar</h1>
<p>Version ${escapeHtml(options.version)}. Prometheus metrics for Hermes Agent observer-hook events.</p>
${ingestStatus(options)}
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
function runCollectors(options: WebAppOptions, metrics: Families<typeof WEB_APP_FAMILIES>): boolean {
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

/** The body at once, chunk by chunk: the chunks are shared with other scrapes, so no copy is made and no wait is needed. */
function sendBody(response: Response, body: RenderedBody): void {
  response.setHeader('Content-Length', String(body.bytes));
  for (const chunk of body.chunks) response.write(chunk);
  response.end();
}

export function createWebApp(options: WebAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // An ETag would hash every multi-megabyte exposition; scrapes are never conditional.
  app.disable('etag');
  const { metrics } = options.registry;

  const renders = new SharedRenders({
    exposition: options.exposition,
    collect: () => runCollectors(options, metrics),
    renderFailed: (error) => {
      metrics.scrapeErrors.inc({ stage: 'render' });
      options.onScrapeError('render', error);
    },
    pacing: options.pacing,
    rendered: () => metrics.scrapeRenders.inc({}),
    paced: () => metrics.scrapesPaced.inc({}),
  });

  const held = new HeldBodies(options.maxHeldBytes ?? DEFAULT_MAX_HELD_BYTES, (count) => metrics.scrapeAnswersDropped.inc({}, count));

  // HEAD gets the headers a scrape would, without a render: a peer repeating it costs nothing.
  // Content-Length is left out (HEAD may omit it); knowing it would take the render HEAD spares.
  app.head(options.telemetryPath, (request, response) => {
    const format = negotiateFormat(request.get('accept'));
    response.status(200).set({ 'Content-Type': CONTENT_TYPES[format], Vary: 'Accept, Accept-Encoding' });
    if (acceptsGzip(request.get('accept-encoding'))) response.set('Content-Encoding', 'gzip');
    response.end();
  });
  app.get(options.telemetryPath, async (request, response) => {
    const format = negotiateFormat(request.get('accept'));
    const gzip = acceptsGzip(request.get('accept-encoding'));
    let body: RenderedBody;
    try {
      body = await renders.body(format, gzip);
    } catch (error) {
      if (error instanceof RenderFailure) return failScrape(response);
      throw error;
    }
    // A scraper that went away while the render ran gets nothing.
    if (response.destroyed) return;
    response.status(200).set({ 'Content-Type': CONTENT_TYPES[format], Vary: 'Accept, Accept-Encoding' });
    if (gzip) response.set('Content-Encoding', 'gzip');
    held.hold(body, response);
    sendBody(response, body);
  });
  app.get('/-/healthy', (_request, response) => {
    response.type('text/plain').send('Healthy\n');
  });
  app.get('/-/ready', (_request, response) => {
    const { ready, reason } = options.ready();
    response.status(ready ? 200 : 503).type('text/plain').send(`${reason}\n`);
  });
  app.get('/', (_request, response) => {
    // Rendered per request: the live count changes while the page stays open elsewhere.
    response.type('html').send(landingPage(options));
  });
  app.use((_request, response) => {
    response.status(404).type('text/plain').send('Not found\n');
  });
  return app;
}
