/**
 * Section 4, ingest under scrapes: HTTP ingest throughput at 20k live series with and without a
 * scrape every second, in alternating windows against the same sidecar.
 */
import {
  fmt,
  fmtInt,
  fmtRatio,
  ensureTmp,
  median,
  ROOT,
  nowMs,
  PROMETHEUS_SCRAPE_HEADERS,
  sleep,
  table,
  timedGet,
  trafficBodies,
  writeCapsConfig,
  type Fetched,
  type RunOptions,
  type SectionResult,
} from '../lib.js';
import { accepted, load, rejects, rejectsByKind } from './ingest.js';
import { describeProfile } from './profile.js';
import { Controller, type Lag } from './scrapeChild.js';

/** Ingest events/s with a scrape every second over events/s without. */
export const INGEST_UNDER_SCRAPE_TARGET = 0.8;
const CONNECTIONS = 4;

interface Window {
  readonly round: number;
  readonly scraping: boolean;
  readonly seconds: number;
  readonly events: number;
  readonly eventsPerSecond: number;
  readonly requests: number;
  readonly p50: number;
  readonly p99: number;
  readonly rejects: number;
  /** The rejects by status code, errors and timeouts. */
  readonly rejectKinds: string;
  readonly lag: Lag;
  readonly scrapes: readonly Fetched[];
}

/** GET /metrics as Prometheus asks for it, every `intervalMs` (never two at once) until stopped. */
function scrapeEvery(url: string, intervalMs: number): { stop: () => Promise<Fetched[]> } {
  const done: Fetched[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = nowMs();
      const fetched = await timedGet(url, PROMETHEUS_SCRAPE_HEADERS);
      if (fetched.status !== 200) throw new Error(`/metrics answered ${fetched.status}`);
      done.push(fetched);
      const wait = intervalMs - (nowMs() - started);
      if (wait > 0 && !stopped) await sleep(wait);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return done;
    },
  };
}

/** Median events/s of the windows with scrapes over the median of those without. */
function ratioOf(windows: readonly Window[]): number {
  const rate = (scraping: boolean) => median(windows.filter((window) => window.scraping === scraping).map((window) => window.eventsPerSecond));
  return rate(true) / rate(false);
}

export async function scrapeLoadSection(options: RunOptions): Promise<SectionResult> {
  const seriesTarget = options.smoke ? 200 : 20_000;
  // Many short windows rather than a few long ones: other work on the machine comes and goes
  // over tens of seconds, and finer interleaving spreads it over both kinds.
  const rounds = options.smoke ? 1 : 6;
  const windowSeconds = options.smoke ? 0.5 : 3;
  const bodies = trafficBodies(options.smoke ? 4 : 40, 500, 700);
  const meanEvents = bodies.reduce((total, body) => total + body.events, 0) / bodies.length;
  const { controller, sidecar } = await Controller.start(writeCapsConfig());
  const windows: Window[] = [];
  let series = 0;
  let profile: { file: string; markdown: string; head: string; totalMs: number } | undefined;
  try {
    ({ series } = await controller.call<{ series: number }>({ cmd: 'seed', target: seriesTarget }));
    // Warm-up (not counted): JIT, sockets, one scrape.
    await timedGet(`${sidecar.web}/metrics`, PROMETHEUS_SCRAPE_HEADERS);
    await load(sidecar, bodies, options.smoke ? { connections: CONNECTIONS, amount: 8 } : { connections: CONNECTIONS, duration: 1 });
    for (let round = 0; round < rounds; round += 1) {
      // The order alternates by round, so neither kind always runs first.
      const kinds = round % 2 === 0 ? [false, true] : [true, false];
      for (const scraping of kinds) {
        const before = await controller.call<{ applied: number }>({ cmd: 'applied' });
        await controller.call({ cmd: 'lagReset' });
        const started = nowMs();
        const scraper = scraping ? scrapeEvery(`${sidecar.web}/metrics`, 1000) : undefined;
        const result = await load(sidecar, bodies, { connections: CONNECTIONS, duration: windowSeconds });
        const scrapes = (await scraper?.stop()) ?? [];
        const after = await controller.call<{ applied: number }>({ cmd: 'applied' });
        const seconds = (nowMs() - started) / 1000;
        const lag = await controller.call<Lag>({ cmd: 'lagRead' });
        const events = after.applied - before.applied;
        windows.push({
          round,
          scraping,
          seconds,
          events,
          eventsPerSecond: events / seconds,
          requests: accepted(result),
          p50: result.latency.p50,
          p99: result.latency.p99,
          rejects: rejects(result),
          rejectKinds: rejectsByKind(result),
          lag,
          scrapes,
        });
      }
    }
    if (ratioOf(windows) < INGEST_UNDER_SCRAPE_TARGET) {
      // Missed: one more window with scrapes, not counted, under V8's CPU profiler, to show where the sidecar's time goes.
      const file = `${ensureTmp()}scrapeload-${series}.cpuprofile`;
      await controller.call({ cmd: 'profileStart' });
      const scraper = scrapeEvery(`${sidecar.web}/metrics`, 1000);
      await load(sidecar, bodies, { connections: CONNECTIONS, duration: windowSeconds });
      await scraper.stop();
      await controller.call({ cmd: 'applied' });
      await controller.call({ cmd: 'profileStop', file });
      profile = { file, ...describeProfile(file) };
    }
  } finally {
    await controller.stop();
  }

  const of = (scraping: boolean) => windows.filter((window) => window.scraping === scraping);
  const quiet = median(of(false).map((window) => window.eventsPerSecond));
  const loaded = median(of(true).map((window) => window.eventsPerSecond));
  const ratio = ratioOf(windows);
  const p99Quiet = median(of(false).map((window) => window.p99));
  const p99Loaded = median(of(true).map((window) => window.p99));
  const allScrapes = of(true).flatMap((window) => window.scrapes);
  const rejected = windows.reduce((total, window) => total + window.rejects, 0);
  const lastScrape = allScrapes[allScrapes.length - 1];
  const markdown = [
    `The scrape child of section 3 (in-process sidecar on loopback listeners, raised caps, default process metrics on), grown to ${fmtInt(series)} live ` +
      `agent series, then loaded by autocannon from the runner with ${CONNECTIONS} connections as fast as it answers, ${bodies.length} distinct ` +
      `prepared NDJSON bodies of ~${fmt(meanEvents, 0)} events cycled. ${rounds} rounds of two ${windowSeconds} s windows against the same sidecar, ` +
      'one without scrapes and one with `GET /metrics` every second (Prometheus\'s own scrape headers: OpenMetrics preferred, gzip accepted; the ' +
      'next scrape starts a second after the previous one started, or when it ends), the order alternating by round. Events/s = events the ' +
      'dispatcher applied during the window, counted after the queue drained, over the window including the drain. Latency is autocannon\'s per ' +
      'request (1 ms resolution); event-loop delay is measured inside the sidecar (`monitorEventLoopDelay`).',
    '',
    table(
      ['round', 'scrape every 1 s', 'events/s', 'requests', 'p50 ms', 'p99 ms', 'loop delay p99 / max ms', 'scrapes (median ms)', 'non-202'],
      windows.map((window) => [
        String(window.round + 1),
        window.scraping ? 'yes' : 'no',
        fmtInt(window.eventsPerSecond),
        fmtInt(window.requests),
        fmt(window.p50, 0),
        fmt(window.p99, 0),
        `${fmt(window.lag.p99, 1)} / ${fmt(window.lag.max, 1)}`,
        window.scraping ? `${window.scrapes.length} (${fmt(median(window.scrapes.map((one) => one.ms)), 1)})` : '—',
        window.rejects === 0 ? '0' : `${fmtInt(window.rejects)} (${window.rejectKinds})`,
      ]),
    ),
    '',
    `Median events/s without scrapes ${fmtInt(quiet)}, with a scrape every second ${fmtInt(loaded)}: **${fmtRatio(ratio)}**. ` +
      `Median p99 latency ${fmt(p99Quiet, 0)} → ${fmt(p99Loaded, 0)} ms (${fmtRatio(p99Loaded / Math.max(1, p99Quiet))}). ` +
      `Scrapes under load: ${allScrapes.length}, median ${fmt(median(allScrapes.map((one) => one.ms)), 1)} ms, ` +
      `${fmtInt(lastScrape?.bytes ?? 0)} bytes on the wire as \`${lastScrape?.contentType ?? '?'}\` (${lastScrape?.contentEncoding ?? '?'}).`,
    ...(profile === undefined
      ? []
      : [
          '',
          `Target missed, so one more window with scrapes (not counted) ran under V8's CPU profiler (the one \`node --cpu-prof\` runs, started over ` +
            `the inspector for the window only) in the sidecar's process: ${fmt(profile.totalMs, 0)} ms of samples, idle excluded ` +
            `(\`${profile.file.replace(ROOT, '')}\`). Self time, top functions and modules:`,
          '',
          profile.markdown,
        ]),
  ].join('\n');
  return {
    key: 'scrapeload',
    title: '4. Ingest with and without a scrape every second',
    summary: `${fmtInt(series)} series: ${fmtInt(quiet)} ev/s without scrapes, ${fmtInt(loaded)} ev/s with one every second (${fmtRatio(ratio)}), p99 ${fmt(p99Quiet, 0)} → ${fmt(p99Loaded, 0)} ms`,
    markdown,
    targets: [
      {
        name: `HTTP ingest with a scrape every second / without, at ${options.smoke ? fmtInt(series) : '20k'} series (median events/s)`,
        target: `≥ ${INGEST_UNDER_SCRAPE_TARGET}`,
        measured: `${fmt(ratio, 2)}${options.smoke ? ' (smoke size)' : ''}`,
        met: ratio >= INGEST_UNDER_SCRAPE_TARGET,
      },
      { name: 'HTTP ingest rejects (non-202) in those windows', target: '0', measured: fmtInt(rejected), met: rejected === 0 },
    ],
  };
}
