/**
 * Section 1 (child process): in-process aggregation of a realistic mixed stream.
 *
 *   node --expose-gc --import tsx bench/children/aggregation.ts --file .tmp/bench-stream.ndjson --batch 500 --rounds 3
 *   node --cpu-prof --import tsx bench/children/aggregation.ts --file ... --profile 3
 *
 * The NDJSON stream is prepared by the runner (tools/traffic.ts, faults off) and read here, so
 * generating it costs nothing in this process. Variants, each on fresh state per round:
 *
 *  - parse:        Buffer → string → split lines → JSON.parse each (the physical limit, by
 *                  the steps decodeBody takes);
 *  - parseLines:   JSON.parse of each line decoded from its own buffer slice (no body string);
 *  - ours:         decodeBody + sidecar.dispatcher.applyBatch (what the ingest route and the
 *                  queue do per request, minus HTTP and the per-request bookkeeping);
 *  - oursClassic:  the same with --metrics.native-histograms=false (what native buckets cost);
 *  - otel:         decodeBody + the same dispatcher on OpenTelemetry metrics (bench/alternatives.ts);
 *  - prom:         decodeBody + the same dispatcher on prom-client used directly (the same file);
 *  - oursApply / otelApply / promApply: applyBatch alone on pre-decoded events (the metrics
 *                  library's share without the shared decoding).
 *
 * Within a round the variants of one group take turns over slices of the stream (see `round`),
 * so they are measured side by side; the median round counts. `--group end-to-end` runs the
 * first six (and the equivalence check), `--group apply` the apply-only three.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { defaultConfig } from '../../src/config.js';
import { decodeBody, type DecodedBody } from '../../src/contract/decode.js';
import type { ObserverEvent } from '../../src/contract/events.js';
import { buildSidecar, scrapeText } from '../inprocess.js';
import { median, nowMs, reportResult } from '../lib.js';
import { createOtelPipeline, createPromClientPipeline } from '../alternatives.js';
import { compareSamples, expositionSamples, otelSamples, type Equivalence } from '../equivalence.js';

const { values } = parseArgs({
  options: {
    file: { type: 'string' },
    batch: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '3' },
    profile: { type: 'string' },
    slice: { type: 'string', default: '4' },
    // end-to-end: parse, parseLines, ours, otel, prom; apply: the three apply-only variants
    group: { type: 'string', default: 'end-to-end' },
  },
});
if (values.file === undefined) throw new Error('--file is required');

const batchSize = Number(values.batch);
const lines = readFileSync(values.file, 'utf8').split('\n').filter((line) => line !== '');
const batches: Buffer[] = [];
for (let start = 0; start < lines.length; start += batchSize) {
  batches.push(Buffer.from(lines.slice(start, start + batchSize).join('\n')));
}
const totalEvents = lines.length;
const bytes = batches.reduce((total, batch) => total + batch.length, 0);
lines.length = 0;

const decodeOptions = () => ({ format: 'ndjson' as const, maxEvents: 100_000, arrivedAt: Date.now() / 1000 });
type Gc = (options?: { type?: 'major' | 'minor'; execution?: 'sync' }) => void;
const gcFunction = (globalThis as { gc?: Gc }).gc;
const gc = (): void => gcFunction?.();
const minorGc = (): void => gcFunction?.({ type: 'minor' });

let sink = 0;
/** Events a pipeline threw on during the timed rounds (the runner fails unless all are 0). */
const timedApplyErrors = { ours: 0, otel: 0, prom: 0 };

/**
 * One variant during one round: `open` builds its fresh state, `run(from, to)` processes
 * batches [from, to) and returns the milliseconds it took, `close` releases it.
 */
interface Runner {
  run(from: number, to: number): number;
  close(): Promise<void>;
}

type Variant = 'parse' | 'parseLines' | 'ours' | 'oursClassic' | 'otel' | 'prom' | 'oursApply' | 'otelApply' | 'promApply';
/**
 * The two groups run in separate processes: the apply-only variants hold the whole stream
 * decoded (150k events) for the run, and in the same heap every major garbage collection the
 * end-to-end variants trigger would mark it too, a cost no ingest request pays.
 */
const GROUPS = {
  'end-to-end': ['parse', 'parseLines', 'ours', 'oursClassic', 'otel', 'prom'],
  apply: ['oursApply', 'otelApply', 'promApply'],
} as const satisfies Record<string, readonly Variant[]>;
const group = values.group;
if (group !== 'end-to-end' && group !== 'apply') throw new Error('--group is end-to-end or apply');
const VARIANTS: readonly Variant[] = GROUPS[group];
const NEWLINE = 0x0a;

function timed(work: () => void): number {
  const started = nowMs();
  work();
  return nowMs() - started;
}

function open(variant: Variant, decoded: readonly ObserverEvent[][]): Runner {
  switch (variant) {
    case 'parse':
      return {
        run: (from, to) =>
          timed(() => {
            for (let index = from; index < to; index += 1) {
              for (const line of (batches[index] as Buffer).toString('utf8').split('\n')) {
                if (line === '') continue;
                const value = JSON.parse(line) as { seq?: number };
                sink += value.seq ?? 1;
              }
            }
          }),
        close: async () => undefined,
      };
    case 'parseLines':
      // The same parse, decoding each line from its own slice of the buffer instead of the
      // whole body to one string first (no large string, no split).
      return {
        run: (from, to) =>
          timed(() => {
            for (let index = from; index < to; index += 1) {
              const batch = batches[index] as Buffer;
              for (let start = 0; start < batch.length; ) {
                let end = batch.indexOf(NEWLINE, start);
                if (end === -1) end = batch.length;
                if (end > start) {
                  const value = JSON.parse(batch.toString('utf8', start, end)) as { seq?: number };
                  sink += value.seq ?? 1;
                }
                start = end + 1;
              }
            }
          }),
        close: async () => undefined,
      };
    case 'ours':
    case 'oursClassic':
    case 'oursApply': {
      const sidecar = buildSidecar({ classicOnly: variant === 'oursClassic' });
      return {
        run: (from, to) =>
          timed(() => {
            for (let index = from; index < to; index += 1) {
              const events = variant === 'oursApply' ? (decoded[index] as ObserverEvent[]) : decodeBody(batches[index] as Buffer, decodeOptions()).events;
              sidecar.dispatcher.applyBatch(events);
            }
          }),
        close: async () => {
          sink += sidecar.dispatcher.applied;
          timedApplyErrors.ours += sidecar.applyErrors();
        },
      };
    }
    case 'prom':
    case 'promApply': {
      const pipeline = createPromClientPipeline(defaultConfig());
      return {
        run: (from, to) =>
          timed(() => {
            for (let index = from; index < to; index += 1) {
              const events = variant === 'prom' ? decodeBody(batches[index] as Buffer, decodeOptions()).events : (decoded[index] as ObserverEvent[]);
              pipeline.dispatcher.applyBatch(events);
            }
          }),
        close: async () => {
          sink += pipeline.dispatcher.applied;
          timedApplyErrors.prom += pipeline.applyErrors();
        },
      };
    }
    case 'otel':
    case 'otelApply': {
      const pipeline = createOtelPipeline(defaultConfig());
      return {
        run: (from, to) =>
          timed(() => {
            for (let index = from; index < to; index += 1) {
              const events = variant === 'otel' ? decodeBody(batches[index] as Buffer, decodeOptions()).events : (decoded[index] as ObserverEvent[]);
              pipeline.dispatcher.applyBatch(events);
            }
          }),
        close: async () => {
          sink += pipeline.dispatcher.applied;
          timedApplyErrors.otel += pipeline.applyErrors();
          await pipeline.shutdown();
        },
      };
    }
  }
}

/**
 * One round: every variant on fresh state, the stream cut into slices of `slice` batches and
 * the variants taking turns slice by slice (the order rotating each slice), a minor GC before
 * each turn. A noisy machine then slows every variant alike instead of whichever ran during a
 * burst; each variant's round time is the sum of its turns.
 */
async function round(decoded: readonly ObserverEvent[][], count: number, slice: number): Promise<Record<Variant, number>> {
  const runners = VARIANTS.map((variant) => ({ variant, runner: open(variant, decoded) }));
  const totals = Object.fromEntries(VARIANTS.map((variant) => [variant, 0])) as Record<Variant, number>;
  for (let from = 0, turn = 0; from < count; from += slice, turn += 1) {
    const to = Math.min(count, from + slice);
    for (let offset = 0; offset < runners.length; offset += 1) {
      const entry = runners[(turn + offset) % runners.length];
      if (entry === undefined) continue;
      minorGc();
      totals[entry.variant] += entry.runner.run(from, to);
    }
  }
  for (const { runner } of runners) await runner.close();
  return totals;
}

function predecode(): ObserverEvent[][] {
  return batches.map((batch) => decodeBody(batch, decodeOptions()).events);
}

/**
 * All pipelines fed the whole stream, on one fixed clock (timestamp gauges then agree), must
 * hold the same samples, and none may have thrown on an event.
 */
async function equivalence(): Promise<{ check: Equivalence; applyErrors: Record<'ours' | 'otel' | 'prom', number> }> {
  const clock = () => 1_800_000_000;
  const sidecar = buildSidecar({ clock });
  const classic = buildSidecar({ clock, classicOnly: true });
  const otel = createOtelPipeline(defaultConfig(), clock);
  const prom = createPromClientPipeline(defaultConfig(), false, clock);
  for (const batch of batches) {
    const decoded: DecodedBody = decodeBody(batch, { ...decodeOptions(), arrivedAt: clock() });
    sidecar.dispatcher.applyBatch(decoded.events);
    classic.dispatcher.applyBatch(decoded.events);
    otel.dispatcher.applyBatch(decoded.events);
    prom.dispatcher.applyBatch(decoded.events);
  }
  otel.collect();
  prom.collect();
  const check = compareSamples({
    ours: expositionSamples(await scrapeText(sidecar)),
    'ours classic-only': expositionSamples(await scrapeText(classic)),
    otel: await otelSamples(otel.exporter),
    'prom-client': expositionSamples(await prom.registry.metrics()),
  });
  await otel.shutdown();
  return { check, applyErrors: { ours: sidecar.applyErrors() + classic.applyErrors(), otel: otel.applyErrors(), prom: prom.applyErrors() } };
}

/**
 * The profiled run (node --cpu-prof): the sidecar's path only, several rounds, on the compiled
 * dist/ modules (what production runs; their source maps lead back to src/). Everything runs
 * inside `profiledWorkload`, so the summary can keep to its samples.
 */
async function profiledRun(rounds: number): Promise<void> {
  const dist = async <T>(path: string): Promise<T> => (await import(new URL(`../../dist/${path}`, import.meta.url).href)) as T;
  const { createSidecar } = await dist<typeof import('../../src/app.js')>('app.js');
  const { defaultConfig: distDefaultConfig } = await dist<typeof import('../../src/config.js')>('config.js');
  const { decodeBody: distDecodeBody } = await dist<typeof import('../../src/contract/decode.js')>('contract/decode.js');
  const { pino } = await import('pino');
  function profiledWorkload(): void {
    for (let index = 0; index < rounds; index += 1) {
      const sidecar = createSidecar(distDefaultConfig(), { logger: pino({ level: 'silent' }), defaultMetrics: false });
      for (const batch of batches) sidecar.dispatcher.applyBatch(distDecodeBody(batch, decodeOptions()).events);
      sink += sidecar.dispatcher.applied;
    }
  }
  profiledWorkload();
  reportResult({ events: totalEvents, rounds, sink });
}

async function main(): Promise<void> {
  if (values.profile !== undefined) {
    await profiledRun(Number(values.profile));
    return;
  }
  const decoded = group === 'apply' ? predecode() : [];
  const slice = Number(values.slice);
  const samples = Object.fromEntries(VARIANTS.map((variant) => [variant, [] as number[]])) as Record<Variant, number[]>;
  const rounds = Number(values.rounds);
  // Round 0 warms the JIT on a quarter of the stream and is not counted.
  await round(decoded, Math.max(1, Math.ceil(batches.length / 4)), slice);
  for (let index = 0; index < rounds; index += 1) {
    gc();
    const totals = await round(decoded, batches.length, slice);
    for (const variant of VARIANTS) samples[variant].push(totals[variant]);
  }
  const perSecond = (ms: number[]) => totalEvents / (median(ms) / 1000);
  const variants = Object.fromEntries(
    Object.entries(samples).map(([name, ms]) => [name, { ms, medianMs: median(ms), eventsPerSecond: perSecond(ms) }]),
  );
  // The equivalence check runs once, with the end-to-end group.
  const checked = group === 'end-to-end' ? await equivalence() : undefined;
  reportResult({ events: totalEvents, batches: batches.length, batchSize, slice, bytes, rounds, variants, equivalence: checked, timedApplyErrors, sink });
}

await main();
