/**
 * What a series costs, measured against what the series byte budget charges for it
 * (src/metrics/seriesBudget.ts): `node --expose-gc --import tsx tools/series-bytes.ts [kind]
 * [label length]`, kind `counter`, `histogram` (20 observations) or `native` (160 spread
 * observations: native buckets at their limit). It creates 4,000 series of four labels, two of
 * them `label length` characters long, scrapes them in text, OpenMetrics and protobuf (so every
 * rendering is cached), and prints the live heap and Buffer bytes each added, beside the bytes the
 * budget charged each.
 */
import { createMetricsRegistry } from '../src/catalogue.js';
import { createExposition, renderProtobuf, renderText } from '../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../src/metrics/declare.js';

const SERIES = 4_000;

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  const kind = process.argv[2] ?? 'counter';
  const length = Number(process.argv[3] ?? 20);
  const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100_000, maxSeriesBytes: 0, defaultMetrics: false });
  const exposition = createExposition(registry);
  const scrapeAll = async () => {
    await renderText(exposition, 'text');
    await renderText(exposition, 'openmetrics');
    await renderProtobuf(exposition);
  };
  await scrapeAll();
  const live = () => {
    gc();
    gc();
    const usage = process.memoryUsage();
    return usage.heapUsed + usage.arrayBuffers;
  };
  const pad = (text: string) => (text + 'x'.repeat(length)).slice(0, length);
  const before = live();
  const chargedBefore = registry.seriesBytes();
  const { metrics } = registry;
  const observations = kind === 'native' ? 160 : 20;
  for (let index = 0; index < SERIES; index += 1) {
    const labels = { kind: 'main', provider: pad(`p${index % 50}`), model: pad(`m${index}`) } as const;
    if (kind === 'counter') metrics.tokens.inc({ ...labels, token_type: 'input' }, index);
    else for (let step = 0; step < observations; step += 1) metrics.apiRequestDuration.observe({ ...labels, outcome: 'success' }, 0.001 * 1.1 ** step);
  }
  await scrapeAll();
  const measured = (live() - before) / SERIES;
  const charged = (registry.seriesBytes() - chargedBefore) / SERIES;
  console.log(`${kind}, labels of ${length} characters: measured ${Math.round(measured)} B a series, charged ${Math.round(charged)} B`);
}

await main();
