/**
 * Section 3, scrape time against prom-client: `/metrics` at 1k/5k/20k/50k live agent series,
 * ours and prom-client used directly for the same catalogue, fed the very same events in the
 * same child process (checked sample by sample), timed in turns.
 */
import {
  fmt,
  fmtInt,
  fmtRatio,
  ensureTmp,
  median,
  ROOT,
  PROMETHEUS_SCRAPE_HEADERS,
  table,
  sleep,
  timedGet,
  writeCapsConfig,
  type Fetched,
  type RunOptions,
  type SectionResult,
} from '../lib.js';
import type { Equivalence } from '../equivalence.js';
import { assertEquivalent, describeEquivalence } from '../equivalence.js';
import { DEFAULT_MIN_RENDER_INTERVAL_MS } from '../../src/web/renders.js';
import { describeProfile } from './profile.js';
import { Controller } from './scrapeChild.js';

/** Ours' time over prom-client's at 20k series, HTTP (what Prometheus waits for). */
export const SCRAPE_TARGET = 0.2;

interface RenderTiming {
  readonly ms: number[];
  readonly bytes: number;
  readonly lines: number;
  readonly promMs: number[];
  readonly promBytes: number;
}

type Variant = 'ours' | 'prom' | 'oursGzip' | 'promGzip' | 'oursPrometheus';

interface Row {
  readonly target: number;
  readonly series: number;
  readonly samples: number;
  readonly check: Equivalence;
  readonly render: RenderTiming;
  readonly http: Record<Variant, Fetched[]>;
}

const PLAIN = { 'accept-encoding': 'identity' };
const GZIP = { 'accept-encoding': 'gzip' };

const isOurs = (variant: Variant): boolean => variant === 'ours' || variant === 'oursGzip' || variant === 'oursPrometheus';

/**
 * Keeps each of ours' scrapes out of the render pacing (src/web/scrape.ts): the sidecar starts a
 * render no sooner than the minimum interval after the previous one started, nor sooner after it
 * ended than it took. Prometheus, scraping every few seconds, never meets that wait; two of ours'
 * variants in a row would, and the second would time the wait instead of its render.
 */
class RenderSlots {
  private nextAt = 0;

  async fetch(url: string, headers: Readonly<Record<string, string>>): Promise<Fetched> {
    const wait = this.nextAt - performance.now();
    if (wait > 0) await sleep(wait);
    const started = performance.now();
    const fetched = await timedGet(url, headers);
    // The fetch took at least as long as the render; a few ms for the timers' granularity.
    this.nextAt = Math.max(started + DEFAULT_MIN_RENDER_INTERVAL_MS, started + 2 * fetched.ms) + 5;
    return fetched;
  }
}

const medianMs = (fetched: readonly Fetched[]): number => median(fetched.map((one) => one.ms));
const lastOf = (fetched: readonly Fetched[]): Fetched | undefined => fetched[fetched.length - 1];

export async function scrapeSection(options: RunOptions): Promise<SectionResult> {
  const sizes = options.smoke ? [100, 200] : [1_000, 5_000, 20_000, 50_000];
  const times = options.smoke ? 2 : 5;
  const { controller, sidecar, prom } = await Controller.start(writeCapsConfig());
  const urls: Record<Variant, { url: string; headers: Readonly<Record<string, string>> }> = {
    ours: { url: `${sidecar.web}/metrics`, headers: PLAIN },
    prom: { url: `${prom}/metrics`, headers: PLAIN },
    oursGzip: { url: `${sidecar.web}/metrics`, headers: GZIP },
    promGzip: { url: `${prom}/metrics`, headers: GZIP },
    oursPrometheus: { url: `${sidecar.web}/metrics`, headers: PROMETHEUS_SCRAPE_HEADERS },
  };
  const rows: Row[] = [];
  const slots = new RenderSlots();
  const get = (variant: Variant): Promise<Fetched> =>
    isOurs(variant) ? slots.fetch(urls[variant].url, urls[variant].headers) : timedGet(urls[variant].url, urls[variant].headers);
  let gzipServed = false;
  const profileAt = options.smoke ? 200 : 20_000;
  let profile: { series: number; file: string; markdown: string; head: string; totalMs: number } | undefined;
  try {
    for (const target of sizes) {
      const { series } = await controller.call<{ series: number }>({ cmd: 'seed', target });
      const { check, applyErrors } = await controller.call<{ check: Equivalence; applyErrors: Record<string, number> }>({ cmd: 'equivalence' });
      assertEquivalent(check, applyErrors, `scrape at ${fmtInt(series)} series`);
      // At 50k series one prom-client render takes seconds: fewer turns there.
      const turns = target >= 50_000 ? Math.min(times, 3) : times;
      const render = await controller.call<RenderTiming>({ cmd: 'render', times: turns });
      // Does ours compress when asked? (Only then are the gzip variants like for like.)
      gzipServed = (await get('oursGzip')).contentEncoding === 'gzip';
      const variants: Variant[] = gzipServed ? ['ours', 'prom', 'oursGzip', 'promGzip', 'oursPrometheus'] : ['ours', 'prom', 'oursPrometheus'];
      // Two untimed rounds warm every path (Prometheus scrapes over and over).
      for (let warm = 0; warm < (turns < times ? 1 : 2); warm += 1) for (const variant of variants) await get(variant);
      const http: Record<Variant, Fetched[]> = { ours: [], prom: [], oursGzip: [], promGzip: [], oursPrometheus: [] };
      for (let time = 0; time < turns; time += 1) {
        // Taking turns, the order rotating each round.
        for (let offset = 0; offset < variants.length; offset += 1) {
          const variant = variants[(time + offset) % variants.length];
          if (variant === undefined) continue;
          const fetched = await get(variant);
          if (fetched.status !== 200) throw new Error(`${variant} /metrics answered ${fetched.status}`);
          http[variant].push(fetched);
        }
      }
      rows.push({ target, series, samples: render.lines, check, render, http });
      if (target === profileAt) {
        // What ours spends a scrape on: a CPU profile of the child over a few plain scrapes.
        const file = `${ensureTmp()}scrape-${series}.cpuprofile`;
        await controller.call({ cmd: 'profileStart' });
        for (let time = 0; time < times; time += 1) await get('ours');
        await controller.call({ cmd: 'profileStop', file });
        profile = { series, file, ...describeProfile(file) };
      }
    }
  } finally {
    await controller.stop();
  }

  const ratio = (row: Row) => medianMs(row.http.ours) / medianMs(row.http.prom);
  const at20k = rows.find((row) => row.target === 20_000) ?? rows[rows.length - 1];
  const measured = at20k === undefined ? Number.POSITIVE_INFINITY : ratio(at20k);
  const prometheusFormat = lastOf(at20k?.http.oursPrometheus ?? []);
  const markdown = [
    'One child process (`tsx bench/children/scrape.ts`) holds an in-process sidecar (`createSidecar` with a config file raising the `tool` and `model` ' +
      'label caps to 100000 and the global series cap to 1000000, prom-client default process metrics on) serving real loopback listeners, and next to it ' +
      'prom-client 15 used directly for the same catalogue (bench/alternatives.ts, the same default process metrics), served by a plain `node:http` server ' +
      '(`await registry.metrics()`, one `res.end`; gzipped with `zlib.gzip` when asked). Series are created by feeding distinct tool names (3 series each) ' +
      'and models (10 series each) through the decoder once and applying the decoded events to both. Before timing, at every size, every event-path ' +
      'sample of the two expositions is compared (bench/equivalence.ts); any difference fails the benchmark.',
    '',
    `Render: \`registry.render()\` against prom-client's \`registry.metrics()\` inside the child, taking turns (median of ${times}; 3 at 50k series). ` +
      `HTTP: \`GET /metrics\` from the runner with \`node:http\` (wall time to the last byte; median of ${times} after 2 untimed rounds; ` +
      `at 50k series 3 after 1), ` +
      'ours and prom-client taking turns in a rotating order. "plain" asks for no compression; "gzip" sends `Accept-Encoding: gzip` (only measured when ' +
      'ours compresses); "as Prometheus asks" sends Prometheus\'s own scrape headers (OpenMetrics preferred, gzip). Each of ours\' scrapes starts ' +
      `outside the sidecar's render pacing (at least ${DEFAULT_MIN_RENDER_INTERVAL_MS} ms after the previous one of ours started and twice its time), as a Prometheus scraping every few seconds always does.`,
    '',
    table(
      ['live series', 'samples (ours)', 'equivalence', 'bytes ours / prom-client', 'render ms ours / prom-client', 'render ratio', 'HTTP plain ms ours / prom-client', 'HTTP ratio (target at 20k ≤ 0.2)'],
      rows.map((row) => [
        fmtInt(row.series),
        fmtInt(row.samples),
        `${fmtInt(row.check.samples)} samples, ${row.check.mismatches} mismatches`,
        `${fmtInt(row.render.bytes)} / ${fmtInt(row.render.promBytes)}`,
        `${fmt(median(row.render.ms), 1)} / ${fmt(median(row.render.promMs), 1)}`,
        fmtRatio(median(row.render.ms) / median(row.render.promMs)),
        `${fmt(medianMs(row.http.ours), 1)} / ${fmt(medianMs(row.http.prom), 1)}`,
        fmtRatio(ratio(row)),
      ]),
    ),
    '',
    gzipServed
      ? table(
          ['live series', 'gzip bytes ours / prom-client', 'gzip HTTP ms ours / prom-client', 'gzip ratio', 'as Prometheus asks: ms, bytes, type'],
          rows.map((row) => {
            const asked = lastOf(row.http.oursPrometheus);
            return [
              fmtInt(row.series),
              `${fmtInt(lastOf(row.http.oursGzip)?.bytes ?? 0)} / ${fmtInt(lastOf(row.http.promGzip)?.bytes ?? 0)}`,
              `${fmt(medianMs(row.http.oursGzip), 1)} / ${fmt(medianMs(row.http.promGzip), 1)}`,
              fmtRatio(medianMs(row.http.oursGzip) / medianMs(row.http.promGzip)),
              `${fmt(medianMs(row.http.oursPrometheus), 1)} ms, ${fmtInt(asked?.bytes ?? 0)} B, \`${asked?.contentType ?? ''}\` ${asked?.contentEncoding ?? ''}`,
            ];
          }),
        )
      : `Ours does not compress (\`Accept-Encoding: gzip\` answered \`identity\`), so no gzip rows. With Prometheus's own scrape headers ours answered ` +
        `\`${prometheusFormat?.contentType ?? '?'}\` (${prometheusFormat?.contentEncoding ?? '?'}) in ${fmt(medianMs(at20k?.http.oursPrometheus ?? []), 1)} ms at ${fmtInt(at20k?.series ?? 0)} series.`,
    '',
    `Equivalence at the largest size: ${rows.length === 0 ? '—' : describeEquivalence((rows[rows.length - 1] as Row).check)}.`,
    ...(profile === undefined
      ? []
      : [
          '',
          `Where ours spends a scrape at ${fmtInt(profile.series)} series: V8's CPU profiler (the one \`node --cpu-prof\` runs, started over the inspector ` +
            `so that only this window counts) in the child during ${times} plain \`GET /metrics\`, ${fmt(profile.totalMs, 0)} ms of samples, idle excluded ` +
            `(\`${profile.file.replace(ROOT, '')}\`). Self time, top functions and modules (the child runs src/ through tsx):`,
          '',
          profile.markdown,
        ]),
  ].join('\n');
  return {
    key: 'scrape',
    title: '3. Scrape time against prom-client',
    summary: rows
      .map(
        (row) =>
          `${fmtInt(row.series)} series: HTTP ${fmt(medianMs(row.http.ours), 1)} ms vs prom-client ${fmt(medianMs(row.http.prom), 1)} ms (${fmtRatio(ratio(row))}), render ${fmt(median(row.render.ms), 1)} vs ${fmt(median(row.render.promMs), 1)} ms`,
      )
      .join('; '),
    markdown,
    targets: [
      {
        name: '`GET /metrics` at 20k series, ours/prom-client time (same families, same run, HTTP median)',
        target: `≤ ${SCRAPE_TARGET}`,
        measured: `${fmt(measured, 2)}${options.smoke ? ' (smoke size)' : ''}`,
        met: measured <= SCRAPE_TARGET,
      },
    ],
  };
}
