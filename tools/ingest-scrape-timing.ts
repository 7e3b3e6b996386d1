/**
 * A quick local measurement of what scraping costs ingest: an in-process sidecar at N live
 * series (default 20,000) applies NDJSON batches as fast as it can for a few seconds, once
 * without scrapes and once with a scrape every second (rendered and gzipped as /metrics gzips
 * them, the bytes then dropped), alternating, medians of several rounds:
 * `npx tsx tools/ingest-scrape-timing.ts [series] [rounds] [seconds]`. The benchmark proper
 * (bench/, over HTTP) is the reference.
 */
import { loadavg } from 'node:os';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { applyNdjson, buildSidecar, seedSeries } from '../bench/inprocess.js';
import { ndjson, seriesLines, trafficBodies, writeCapsConfig } from '../bench/lib.js';
import { gzipParts } from '../src/web/gzip.js';

const target = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 3);
const seconds = Number(process.argv[4] ?? 4);
// `traffic` (default): the traffic model's agents, as the benchmark sends, on top of the seeded
// series; `all`: batches that write every seeded series in turn (the worst case for the cache).
const mode = process.argv[5] ?? 'traffic';

const sidecar = buildSidecar({ configFile: writeCapsConfig(), defaultMetrics: true });
const seeded = seedSeries(sidecar, target, 'ingest');
const bodies =
  mode === 'all'
    ? Array.from({ length: 64 }, (_, batch) => {
        const lines = [];
        for (let index = 0; index < 250; index += 1) lines.push(...seriesLines(((batch * 250 + index) * 31) % seeded, 'ingest'));
        return Buffer.from(ndjson(lines));
      })
    : trafficBodies(64, 500, 7).map((body) => Buffer.from(body.body));

/** The compressions' scratch, reused as /metrics reuses it. */
const scratch = Buffer.allocUnsafeSlow(1024 * 1024);

const phases: string[] = [];
async function scrapeOnce(): Promise<number> {
  const started = performance.now();
  const parts = await sidecar.exposition.render('openmetrics');
  const rendered = performance.now();
  await gzipParts(parts, scratch);
  phases.push(`render ${(rendered - started).toFixed(0)} ms, write ${(performance.now() - rendered).toFixed(0)} ms`);
  return performance.now() - started;
}

async function ingestFor(withScrapes: boolean): Promise<{ eventsPerSecond: number; scrapes: number[] }> {
  const scrapes: number[] = [];
  let scraping = false;
  const timer = withScrapes
    ? setInterval(() => {
        if (scraping) return;
        scraping = true;
        void scrapeOnce().then((ms) => {
          scrapes.push(ms);
          scraping = false;
        });
      }, 1000)
    : undefined;
  const started = performance.now();
  let events = 0;
  let next = 0;
  while (performance.now() - started < seconds * 1000) {
    events += applyNdjson(sidecar, bodies[next % bodies.length] ?? Buffer.alloc(0));
    next += 1;
    await yieldToLoop();
  }
  clearInterval(timer);
  while (scraping) await yieldToLoop();
  return { eventsPerSecond: events / ((performance.now() - started) / 1000), scrapes };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
console.log(`mode ${mode}, live agent series ${sidecar.registry.agentSeries()}, load at start ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
const without: number[] = [];
const withScrapes: number[] = [];
const scrapeMs: number[] = [];
for (let round = 0; round < rounds; round += 1) {
  without.push((await ingestFor(false)).eventsPerSecond);
  const scraped = await ingestFor(true);
  withScrapes.push(scraped.eventsPerSecond);
  scrapeMs.push(...scraped.scrapes);
}
console.log(`ingest without scrapes: median ${median(without).toFixed(0)} events/s (${without.map((v) => v.toFixed(0)).join(' ')})`);
console.log(`ingest with a scrape every second: median ${median(withScrapes).toFixed(0)} events/s (${withScrapes.map((v) => v.toFixed(0)).join(' ')})`);
console.log(`ratio ${(median(withScrapes) / median(without)).toFixed(2)} (target ≥ 0.8); scrape median ${median(scrapeMs).toFixed(0)} ms over ${scrapeMs.length}`);
if (process.env.PHASES === '1') console.log(phases.join('\n'));
console.log(`load at end ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
