/**
 * Section 4 (fresh child process, `node --expose-gc`): RSS and V8 heap before and after creating
 * `--series N` live agent series in an in-process sidecar with raised label caps.
 *
 * Baseline: the sidecar after a warm-up of ordinary traffic and one render (JIT, the first
 * series, lazily built structures). Then distinct tools and models up to N series, a full GC,
 * and a render (the size a scrape allocates, then collected).
 */
import { parseArgs } from 'node:util';
import { buildSidecar, applyNdjson, seedSeries } from '../inprocess.js';
import { reportResult, trafficBodies } from '../lib.js';

const { values } = parseArgs({ options: { series: { type: 'string' }, config: { type: 'string' } } });
const target = Number(values.series ?? 1000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

interface Usage {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly externalBytes: number;
  readonly series: number;
}

async function settle(): Promise<void> {
  for (let pass = 0; pass < 3; pass += 1) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const sidecar = buildSidecar({ ...(values.config === undefined ? {} : { configFile: values.config }), defaultMetrics: true });
const usage = (): Usage => {
  const memory = process.memoryUsage();
  return { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, externalBytes: memory.external, series: sidecar.registry.agentSeries() };
};

for (const body of trafficBodies(10, 500, 400)) applyNdjson(sidecar, Buffer.from(body.body));
await sidecar.registry.render();
await settle();
const before = usage();
seedSeries(sidecar, target, 'memory');
await settle();
const after = usage();
async function renderOnce(): Promise<{ bytes: number; peak: Usage }> {
  const text = await sidecar.registry.render();
  return { bytes: Buffer.byteLength(text), peak: usage() };
}
const { bytes: renderBytes, peak: peakAfterRender } = await renderOnce();
await settle();
const afterRender = usage();
reportResult({ target, before, after, peakAfterRender, afterRender, renderBytes });
