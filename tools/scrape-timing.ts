/**
 * A quick local measurement of the /metrics render at N live series (default 20,000), against
 * prom-client's registry.metrics() over the very same events, interleaved, medians of several
 * rounds: `npx tsx tools/scrape-timing.ts [series] [rounds]`. The benchmark proper (bench/,
 * `npm run bench`) is the reference; this shows what each exposition optimisation buys:
 *
 *   cold      a fresh Serializer (no cached series text): the render without the per-series cache
 *   dirty     the long-lived Serializer after `dirty` series were written since the previous render
 *   clean     the long-lived Serializer with nothing written since (the floor)
 *   joined    `dirty` plus joining the parts into one string (what a one-string render pays)
 *   gzip      gzip (level 1, as /metrics) of the whole text, on the thread pool
 *   prom      prom-client 15's registry.metrics() for the same families and events
 */
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { gzip as gzipCallback, constants } from 'node:zlib';
import { Serializer } from '../src/exposition/serializer.js';
import { createPromClientPipeline } from '../bench/alternatives.js';
import { applyNdjson, buildSidecar, seedSeries } from '../bench/inprocess.js';
import { ndjson, seriesLines, writeCapsConfig } from '../bench/lib.js';
import { decodeBody } from '../src/contract/decode.js';

const gzip = promisify(gzipCallback);
const target = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 7);
const dirtyEvents = Number(process.argv[4] ?? 1000);

const sidecar = buildSidecar({ configFile: writeCapsConfig(), defaultMetrics: true });
const prom = createPromClientPipeline(sidecar.config, true);
const feedProm = (body: Buffer): void => {
  prom.dispatcher.applyBatch(decodeBody(body, { format: 'ndjson', maxEvents: 1_000_000, arrivedAt: Date.now() / 1000 }).events);
};
const seeded = seedSeries(sidecar, target, 'timing', 0, (events) => prom.dispatcher.applyBatch(events));

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const time = async (work: () => unknown): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

/** Writes `dirtyEvents` events to series that already exist (both pipelines, same events). */
function touch(round: number): void {
  const lines = [];
  for (let event = 0; event < dirtyEvents; event += 1) lines.push(...seriesLines((event * 7919 + round * 104_729) % seeded, 'timing'));
  const body = Buffer.from(ndjson(lines));
  applyNdjson(sidecar, body);
  feedProm(body);
}

const warm = new Serializer();
const results: Record<string, number[]> = { cold: [], dirty: [], clean: [], joined: [], gzip: [], prom: [] };
let bytes = 0;
let promBytes = 0;
warm.serialize(await sidecar.registry.collect(), 'text');
for (let round = 0; round < rounds; round += 1) {
  results.cold?.push(await time(async () => new Serializer().serialize(await sidecar.registry.collect(), 'text')));
  touch(round);
  results.dirty?.push(await time(async () => warm.serialize(await sidecar.registry.collect(), 'text')));
  results.clean?.push(await time(async () => warm.serialize(await sidecar.registry.collect(), 'text')));
  touch(round + rounds);
  let text = '';
  results.joined?.push(await time(async () => (text = warm.serialize(await sidecar.registry.collect(), 'text').join(''))));
  bytes = Buffer.byteLength(text);
  results.gzip?.push(await time(() => gzip(text, { level: constants.Z_BEST_SPEED })));
  let promText = '';
  results.prom?.push(await time(async () => (promText = await prom.registry.metrics())));
  promBytes = Buffer.byteLength(promText);
}

const promMedian = median(results.prom ?? []);
console.log(`live agent series ${sidecar.registry.agentSeries()}, ${rounds} rounds, ${dirtyEvents} events between renders, load ${(await import('node:os')).loadavg().map((load) => load.toFixed(2)).join(' ')}`);
console.log(`text ${bytes} B, prom-client ${promBytes} B`);
for (const [name, values] of Object.entries(results)) {
  const value = median(values);
  console.log(`${name.padEnd(7)} median ${value.toFixed(1).padStart(7)} ms  (${(value / promMedian).toFixed(3)}× prom-client)  runs ${values.map((v) => v.toFixed(0)).join(' ')}`);
}
