/**
 * Section 3, scrape: /metrics render time and size at 1k, 5k and 20k live agent series, and the
 * event-loop lag a scrape causes under ingest load, measured inside the sidecar process.
 */
import type { ChildProcess } from 'node:child_process';
import {
  fmt,
  fmtInt,
  fmtRatio,
  median,
  nowMs,
  scrape,
  sleep,
  spawnTsx,
  table,
  trafficBodies,
  writeCapsConfig,
  type RunOptions,
  type SectionResult,
  type SidecarProcess,
} from '../lib.js';
import { drained, load, rejects } from './ingest.js';

interface Reply {
  readonly id?: number;
  readonly ok?: boolean;
  readonly result?: unknown;
  readonly error?: string;
  readonly ready?: boolean;
  readonly web?: string;
  readonly ingest?: string;
}

interface Lag {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
  readonly count: number;
}

interface RenderTiming {
  readonly ms: number[];
  readonly bytes: number;
  readonly lines: number;
  readonly promMs: number[];
  readonly promBytes: number;
}

/** The child over IPC: one outstanding command at a time. */
class Controller {
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: Reply) => void>();
  private stderr = '';

  constructor(readonly child: ChildProcess) {
    child.on('message', (reply: Reply) => {
      if (reply.id === undefined) return;
      this.waiting.get(reply.id)?.(reply);
      this.waiting.delete(reply.id);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    child.once('exit', (code) => {
      for (const settle of this.waiting.values()) settle({ ok: false, error: `scrape child exited with ${code}: ${this.stderr}` });
      this.waiting.clear();
    });
  }

  static start(config: string): Promise<{ controller: Controller; sidecar: SidecarProcess }> {
    const child = spawnTsx('children/scrape.ts', ['--config', config], { ipc: true });
    const controller = new Controller(child);
    return new Promise((resolve, reject) => {
      child.on('message', (reply: Reply) => {
        if (reply.ready === true && reply.web !== undefined && reply.ingest !== undefined) {
          resolve({
            controller,
            sidecar: { child, web: reply.web, ingest: reply.ingest, stop: () => controller.stop() },
          });
        }
      });
      child.once('exit', (code) => reject(new Error(`scrape child exited with ${code}: ${controller.stderr}`)));
    });
  }

  call<T>(command: Record<string, unknown>): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (reply) => (reply.ok === true ? resolve(reply.result as T) : reject(new Error(reply.error))));
      if (!this.child.connected) reject(new Error(`scrape child is gone: ${this.stderr}`));
      else this.child.send({ id, ...command });
    });
  }

  /** Disconnecting ends the child. ('close' may never come after a disconnect; 'exit' does.) */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', resolve));
    if (this.child.connected) this.child.disconnect();
    return exited;
  }
}

interface Row {
  readonly target: number;
  readonly series: number;
  readonly render: RenderTiming;
  readonly httpMs: number[];
  readonly httpBytes: number;
  readonly quiet: Lag;
  readonly scraping: Lag;
  readonly loadedScrapeMs: number[];
  readonly ingestRejects: number;
}

export async function scrapeSection(options: RunOptions): Promise<SectionResult> {
  const sizes = options.smoke ? [100, 300] : [1_000, 5_000, 20_000];
  const renders = options.smoke ? 2 : 5;
  const scrapesUnderLoad = options.smoke ? 2 : 5;
  const quietMs = options.smoke ? 200 : 1000;
  // Background ingest: ~100-event bodies (existing tools and models) at a fixed request rate.
  const rate = options.smoke ? 50 : 200;
  const bodies = trafficBodies(options.smoke ? 4 : 20, 100, 300);
  const meanEvents = bodies.reduce((total, body) => total + body.events, 0) / bodies.length;
  const { controller, sidecar } = await Controller.start(writeCapsConfig());
  const rows: Row[] = [];
  try {
    for (const target of sizes) {
      const { series } = await controller.call<{ series: number }>({ cmd: 'seed', target });
      const render = await controller.call<RenderTiming>({ cmd: 'render', times: renders });
      const httpMs: number[] = [];
      let httpBytes = 0;
      // Two untimed scrapes warm the HTTP path (Prometheus scrapes over and over).
      for (let index = 0; index < 2; index += 1) await scrape(sidecar.web);
      for (let index = 0; index < renders; index += 1) {
        const started = nowMs();
        httpBytes = Buffer.byteLength(await scrape(sidecar.web));
        httpMs.push(nowMs() - started);
      }

      // Under ingest load: a quiet window (ingest only), then a window of back-to-back scrapes.
      const running = load(sidecar, bodies, { connections: 2, duration: 60, overallRate: rate });
      await sleep(options.smoke ? 100 : 300);
      await controller.call({ cmd: 'lagReset' });
      await sleep(quietMs);
      const quiet = await controller.call<Lag>({ cmd: 'lagRead' });
      await controller.call({ cmd: 'lagReset' });
      const loadedScrapeMs: number[] = [];
      for (let index = 0; index < scrapesUnderLoad; index += 1) {
        const started = nowMs();
        await scrape(sidecar.web);
        loadedScrapeMs.push(nowMs() - started);
        await sleep(100);
      }
      const scraping = await controller.call<Lag>({ cmd: 'lagRead' });
      running.stop();
      const result = await running;
      await drained(sidecar.web);
      rows.push({ target, series, render, httpMs, httpBytes, quiet, scraping, loadedScrapeMs, ingestRejects: rejects(result) });
    }
  } finally {
    await controller.stop();
  }

  const at5k = rows.find((row) => row.target === 5_000) ?? rows[rows.length - 1];
  const http5k = at5k === undefined ? Number.POSITIVE_INFINITY : median(at5k.httpMs);
  const render5k = at5k === undefined ? Number.POSITIVE_INFINITY : median(at5k.render.ms);
  const markdown = [
    'An in-process sidecar (`createSidecar` with `loadConfig({argv: ["--config.file", …]})`, label caps of `tool` and `model` raised to 100000 and the ' +
      'global series cap to 1000000, prom-client default metrics on) serving real loopback listeners in a child process (`tsx bench/children/scrape.ts`); ' +
      'series are created by feeding distinct tool names (3 series each: in-flight, calls, duration) and models (10 series each) through the decoder and ' +
      'dispatcher. "Series" is `hermes_sidecar_series` (live label sets of agent metrics; a histogram label set counts once), "samples" the rendered sample lines.',
    '',
    `Render: \`registry.render()\` timed inside the sidecar (median of ${renders}). prom-client: a registry of plain prom-client metrics for the same catalogue ` +
      '(with the same default process metrics), fed the very same events in the same process (bench/alternatives.ts), rendered by `registry.metrics()` ' +
      `in turn with ours. HTTP: \`GET /metrics\` wall time from the runner (collectors + render + ` +
      `express \`res.send\` + loopback + reading the body; median of ${renders} after 2 untimed ones). The gap between render and HTTP is the rest of the ` +
      'route (collectors, express), writing the text to the socket (a string built by concatenation must be flattened and UTF-8 encoded) and the ' +
      'runner reading it over loopback.',
    '',
    table(
      ['live series', 'samples', 'bytes', 'render median ms', 'render max ms', 'prom-client render median ms', 'prom-client bytes', 'ours/prom-client speed', 'HTTP median ms', 'HTTP max ms'],
      rows.map((row) => [
        fmtInt(row.series),
        fmtInt(row.render.lines),
        fmtInt(row.httpBytes),
        fmt(median(row.render.ms), 1),
        fmt(Math.max(...row.render.ms), 1),
        fmt(median(row.render.promMs), 1),
        fmtInt(row.render.promBytes),
        fmtRatio(median(row.render.promMs) / median(row.render.ms)),
        fmt(median(row.httpMs), 1),
        fmt(Math.max(...row.httpMs), 1),
      ]),
    ),
    '',
    `Event-loop delay inside the sidecar (\`perf_hooks.monitorEventLoopDelay\`, 1 ms resolution) under ingest load ` +
      `(autocannon, 2 connections, ${rate} requests/s of ~${fmt(meanEvents, 0)} events = ~${fmtInt(rate * meanEvents)} events/s): ` +
      `a ${quietMs} ms window with ingest only, then a window of ${scrapesUnderLoad} scrapes 100 ms apart. ` +
      'The max in the scrape window is the longest the loop was blocked: ingest requests wait that long behind a scrape.',
    '',
    table(
      ['live series', 'lag p50 ms (ingest only)', 'lag p99 ms (ingest only)', 'lag max ms (ingest only)', 'lag p99 ms (with scrapes)', 'lag max ms (with scrapes)', 'scrape under load median ms', 'ingest non-202'],
      rows.map((row) => [
        fmtInt(row.series),
        fmt(row.quiet.p50, 1),
        fmt(row.quiet.p99, 1),
        fmt(row.quiet.max, 1),
        fmt(row.scraping.p99, 1),
        fmt(row.scraping.max, 1),
        fmt(median(row.loadedScrapeMs), 1),
        fmtInt(row.ingestRejects),
      ]),
    ),
  ].join('\n');
  return {
    key: 'scrape',
    title: '3. Scrape',
    summary: rows
      .map(
        (row) =>
          `${fmtInt(row.series)} series: HTTP ${fmt(median(row.httpMs), 1)} ms (render ${fmt(median(row.render.ms), 1)} ms, prom-client ${fmt(median(row.render.promMs), 1)} ms), ${fmtInt(row.httpBytes)} B, lag max ${fmt(row.scraping.max, 1)} ms`,
      )
      .join('; '),
    markdown,
    targets: [
      {
        name: '`GET /metrics` at 5k series (HTTP median, what Prometheus waits for)',
        target: '≤ 100 ms',
        measured: `${fmt(http5k, 1)} ms${options.smoke ? ' (smoke size)' : ''}`,
        met: http5k <= 100,
      },
      {
        name: '`registry.render()` alone at 5k series (median)',
        target: '(≤ 100 ms)',
        measured: `${fmt(render5k, 1)} ms${options.smoke ? ' (smoke size)' : ''}`,
        met: render5k <= 100,
      },
    ],
  };
}
