/**
 * Section 9's memory figure (fresh child process, `node --expose-gc`): V8 heap and external memory per histogram
 * series with classic buckets only and with native buckets beside them, `--series N` series of
 * the tool-duration bucket set, each given `--observations M` durations from a seeded log-normal
 * spread (median 2 s, a factor of 8 either way within one standard deviation), as tool calls are;
 * and the time per observation (series creation included) with and without them.
 */
import { parseArgs } from 'node:util';
import { OPEN, DEFAULT_BUCKETS, type MetricSpec } from '../../src/metrics/declare.js';
import { HistogramStorage, type FamilyOptions } from '../../src/metrics/families.js';
import { DEFAULT_NATIVE_SETTINGS, type NativeHistogramSettings } from '../../src/metrics/native.js';
import { seededRandom } from '../../tools/traffic.js';
import { reportResult } from '../lib.js';

const { values } = parseArgs({ options: { series: { type: 'string' }, observations: { type: 'string' } } });
const seriesCount = Number(values.series ?? 5000);
const observations = Number(values.observations ?? 200);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

/** V8 heap used plus memory outside it (typed arrays' backing stores live there). */
async function heapUsed(): Promise<number> {
  for (let pass = 0; pass < 3; pass += 1) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const memory = process.memoryUsage();
  return memory.heapUsed + memory.external;
}

const spec: MetricSpec = { name: 'bench_seconds', help: 'h', type: 'histogram', labelNames: ['tool'], labels: { tool: OPEN }, scope: 'self', preinit: false };
const options: FamilyOptions = { spec, enabled: true, budget: undefined, foldLabels: [], foldValue: 'other', onFold: () => undefined, onInvalid: () => undefined };

/** Heap held by `seriesCount` filled series, and the native buckets they populate on average. */
async function measure(native: NativeHistogramSettings | undefined): Promise<{ bytesPerSeries: number; bucketsPerSeries: number; nsPerObservation: number }> {
  const random = seededRandom(9);
  // Drawn first, so the timed loop is the storage's work only.
  const values = Float64Array.from({ length: observations }, () => {
    // Box-Muller: a standard normal from two uniforms.
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return 2 * 8 ** normal;
  });
  const before = await heapUsed();
  const storage = new HistogramStorage(options, DEFAULT_BUCKETS.tool_seconds, native);
  const started = performance.now();
  for (let index = 0; index < seriesCount; index += 1) {
    const handle = storage.handle({ tool: `tool_${index}` });
    // Each series its own rotation of the values: the same spread, another order.
    for (let observation = 0; observation < observations; observation += 1) handle.observe(values[(observation + index) % observations] as number);
  }
  const elapsed = performance.now() - started;
  const after = await heapUsed();
  let buckets = 0;
  for (const series of storage.series()) buckets += series.native?.size ?? 0;
  return { bytesPerSeries: (after - before) / seriesCount, bucketsPerSeries: buckets / seriesCount, nsPerObservation: (elapsed * 1e6) / (seriesCount * observations) };
}

// Once each unmeasured first, so both timed runs meet warm code.
await measure(undefined);
await measure(DEFAULT_NATIVE_SETTINGS);
const classic = await measure(undefined);
const withNative = await measure(DEFAULT_NATIVE_SETTINGS);
reportResult({ seriesCount, observations, classic, withNative });
