/**
 * Section 1, in-process aggregation (runner side): prepares the NDJSON stream, runs
 * bench/children/aggregation.ts in a fresh `node --expose-gc` process and reports the ratios.
 */
import { writeFileSync } from 'node:fs';
import { TrafficModel } from '../../tools/traffic.js';
import { assertEquivalent, describeEquivalence, type Equivalence } from '../equivalence.js';
import { ensureTmp, fmt, fmtInt, fmtRatio, median, ndjson, runChild, table, type RunOptions, type SectionResult } from '../lib.js';

export interface Stream {
  readonly file: string;
  readonly events: number;
  readonly batch: number;
}

/** The generator's realistic mixed stream (8 agents, 5% provider errors, faults off), as plugin lines. */
export function prepareStream(options: RunOptions): Stream {
  const events = options.smoke ? 1_000 : 150_000;
  const lines = new TrafficModel({ seed: 1, agents: 8, errorRate: 0.05, faults: false }).batch(events);
  const file = `${ensureTmp()}bench-stream${options.smoke ? '-smoke' : ''}.ndjson`;
  writeFileSync(file, ndjson(lines));
  return { file, events: lines.length, batch: options.smoke ? 100 : 500 };
}

interface Variant {
  readonly ms: number[];
  readonly medianMs: number;
  readonly eventsPerSecond: number;
}

interface ChildResult<V extends string> {
  readonly events: number;
  readonly batches: number;
  readonly batchSize: number;
  readonly slice: number;
  readonly bytes: number;
  readonly rounds: number;
  readonly variants: Record<V, Variant>;
  readonly equivalence?: { readonly check: Equivalence; readonly applyErrors: Record<'ours' | 'otel' | 'prom', number> };
  readonly timedApplyErrors: Record<'ours' | 'otel' | 'prom', number>;
}


export async function aggregationSection(options: RunOptions, stream: Stream): Promise<SectionResult> {
  const rounds = options.smoke ? 1 : 5;
  const child = <V extends string>(group: 'end-to-end' | 'apply') =>
    runChild<ChildResult<V>>(
      'children/aggregation.ts',
      ['--file', stream.file, '--batch', String(stream.batch), '--rounds', String(rounds), '--group', group],
      { nodeFlags: ['--expose-gc'] },
    );
  // Two processes: the apply-only variants keep the whole stream decoded in their heap.
  const result = await child<'parse' | 'parseLines' | 'ours' | 'oursClassic' | 'otel' | 'prom'>('end-to-end');
  const applyOnly = await child<'oursApply' | 'otelApply' | 'promApply'>('apply');
  const { parse, parseLines, ours, oursClassic, otel, prom } = result.variants;
  const { oursApply, otelApply, promApply } = applyOnly.variants;
  if (result.equivalence === undefined) throw new Error('the end-to-end child ran no equivalence check');
  // The targets are the median of each round's ratio: the variants of one round ran interleaved,
  // so a round's ratio is the steadiest figure this machine gives. The physical limit of a round
  // is the faster way of parsing the same lines in that round.
  const perRound = (ratioOf: (round: number) => number) => median(ours.ms.map((_, round) => ratioOf(round)));
  const at = (variant: Variant, round: number) => variant.ms[round] ?? Number.NaN;
  const vsParse = perRound((round) => Math.min(at(parse, round), at(parseLines, round)) / at(ours, round));
  const ratioTo = (variant: Variant) => `ours/this ${fmtRatio(ours.eventsPerSecond / variant.eventsPerSecond)}`;
  const vsOtel = perRound((round) => at(otel, round) / at(ours, round));
  const classicVsParse = median(oursClassic.ms.map((_, round) => Math.min(at(parse, round), at(parseLines, round)) / at(oursClassic, round)));
  // What native buckets cost: the share of ours' time that classic-only saves, per round.
  const nativeShare = perRound((round) => 1 - at(oursClassic, round) / at(ours, round));
  const applyVsOtel = oursApply.eventsPerSecond / otelApply.eventsPerSecond;
  const vsProm = ours.eventsPerSecond / prom.eventsPerSecond;
  const applyVsProm = oursApply.eventsPerSecond / promApply.eventsPerSecond;
  const row = (name: string, variant: Variant, ratio: string) => [
    name,
    fmtInt(variant.eventsPerSecond),
    fmt(variant.medianMs, 0),
    fmt((variant.medianMs * 1000) / result.events, 2),
    variant.ms.map((ms) => fmt(ms, 0)).join(' / '),
    ratio,
  ];
  const { check, applyErrors } = result.equivalence;
  assertEquivalent(check, applyErrors, 'equivalence run');
  assertEquivalent({ ...check, mismatches: 0 }, result.timedApplyErrors, 'timed rounds');
  assertEquivalent({ ...check, mismatches: 0 }, applyOnly.timedApplyErrors, 'timed apply-only rounds');
  const markdown = [
    `Stream: ${fmtInt(result.events)} plugin lines from \`tools/traffic.ts\` (seed 1, 8 agents, 5% provider errors, faults off), ` +
      `${fmt(result.bytes / 2 ** 20, 1)} MiB of NDJSON in ${result.batches} batches of ${result.batchSize}, prepared before timing. ` +
      `The end-to-end variants (the two parses, ours, ours classic-only, otel, prom-client) run in one \`node --expose-gc\` child, the apply-only ones in a second ` +
      `(they hold the whole stream decoded, and in the first child's heap every major garbage collection would mark it too); each round on fresh ` +
      `state (a new sidecar or pipeline). Within a round the variants of a child take turns over ` +
      `slices of ${result.slice} batches (the order rotating every slice, a minor GC before each turn), so a noisy machine slows all of them alike; ` +
      `a variant's round time is the sum of its turns. ${rounds} measured rounds after a warm-up round on a quarter of the stream. The table gives each ` +
      `variant's median round; the two targets are the median over rounds of that round's ratio (ours against the faster parse of the same round, ` +
      `ours against OpenTelemetry), since the variants of a round ran side by side: ours/limit ${fmtRatio(vsParse)}, ours/otel ${fmtRatio(vsOtel)}.`,
    '',
    '- **parse** — `buffer.toString()` → `split("\\n")` → `JSON.parse` per line.',
    '- **parse-lines** — `JSON.parse(buffer.toString("utf8", start, end))` per line, found with `buffer.indexOf(10)`: the same parse without first ' +
      'turning the whole body into one large string and splitting it.',
    '- The **physical limit** is the faster of the two; the target ratio is ours against it.',
    '- **ours** — `decodeBody(buffer)` then `sidecar.dispatcher.applyBatch(events)` on `createSidecar(defaultConfig(), {logger: silent, defaultMetrics: false})`. ' +
      'This is what one ingest request costs once the body is read, minus HTTP/express and the per-request bookkeeping ' +
      '(`events_received` per hook, the batch-size histogram, p-queue), which section 2 measures end to end. Calling the dispatcher directly keeps ' +
      'express and the socket out of the ratio.',
    '- **ours, classic only** — the same with `--metrics.native-histograms=false`: no native buckets beside the classic ones. ' +
      'The difference to ours is what native buckets cost on the event path.',
    '- **otel** — the same `decodeBody` and the same dispatcher, recorders, label guard and span tables, but every catalogue metric built on ' +
      '`@opentelemetry/sdk-metrics` `MeterProvider` with the `PrometheusExporter` (preventServerStart) as its reader (bench/alternatives.ts): ' +
      'counters → Counter, histograms → Histogram with the same buckets, in-flight/active gauges → UpDownCounter, set gauges → Gauge. ' +
      'Same label objects, same sanitizing and caps: only the metrics library differs.',
    '- **prom-client** — the same again on prom-client 15 used directly (one `Counter`/`Gauge`/`Histogram` per catalogue entry, labels passed through), ' +
      'the plain way: the baseline for the sidecar\'s own metric code.',
    '- **…-apply** — `applyBatch` alone on pre-decoded events: the metrics library\'s share without the shared decoding.',
    '',
    table(
      ['variant', 'events/s', 'median ms', 'µs/event', 'rounds (ms)', 'ratio'],
      [
        row('parse (body string + split + JSON.parse)', parse, ratioTo(parse)),
        row('parse-lines (per-line slices + JSON.parse)', parseLines, ratioTo(parseLines)),
        row('ours (decode + apply)', ours, `ours/limit ${fmtRatio(vsParse)}`),
        row('ours, classic only (decode + apply)', oursClassic, `classic/limit ${fmtRatio(classicVsParse)}; native buckets ${fmt(nativeShare * 100, 1)}% of ours`),
        row('otel (decode + apply)', otel, `ours/otel ${fmtRatio(vsOtel)}`),
        row('prom-client (decode + apply)', prom, `ours/prom-client ${fmtRatio(vsProm)}`),
        row('ours-apply (apply only)', oursApply, '—'),
        row('otel-apply (apply only)', otelApply, `ours/otel ${fmtRatio(applyVsOtel)}`),
        row('prom-client-apply (apply only)', promApply, `ours/prom-client ${fmtRatio(applyVsProm)}`),
      ],
    ),
    '',
    `Equivalence check (the four pipelines, ours with and without native buckets, otel and prom-client, fed the whole stream once more on one fixed clock, then every sample of every catalogue family the event ` +
      `path writes compared — histogram buckets, sums and counts included — with bench/equivalence.ts): ${describeEquivalence(check)}; ` +
      `events a recorder threw on: ${Object.entries(applyErrors).map(([name, count]) => `${name} ${count}`).join(', ')} ` +
      `(timed rounds: ${Object.entries(result.timedApplyErrors).map(([name, count]) => `${name} ${count}`).join(', ')}; apply-only rounds: ` +
      `${Object.entries(applyOnly.timedApplyErrors).map(([name, count]) => `${name} ${count}`).join(', ')}). Any mismatch or error fails the benchmark.`,
  ].join('\n');
  return {
    key: 'aggregation',
    title: '1. In-process aggregation',
    summary: `ours ${fmtInt(ours.eventsPerSecond)} ev/s (classic only ${fmtRatio(classicVsParse)} of the limit; native buckets ${fmt(nativeShare * 100, 1)}% of ours), parse-only ${fmtInt(parse.eventsPerSecond)} ev/s (body string) / ${fmtInt(parseLines.eventsPerSecond)} ev/s (per line), ours/limit ${fmtRatio(vsParse)}, otel ${fmtInt(otel.eventsPerSecond)} ev/s (ours/otel ${fmtRatio(vsOtel)}; apply only ${fmtRatio(applyVsOtel)}), prom-client ${fmtInt(prom.eventsPerSecond)} ev/s (ours/prom-client ${fmtRatio(vsProm)}; apply only ${fmtRatio(applyVsProm)})`,
    markdown,
    targets: [
      { name: 'aggregation vs JSON.parse alone (ours/faster parse)', target: '≥ 0.5', measured: fmt(vsParse, 2), met: vsParse >= 0.5 },
      { name: 'aggregation vs OpenTelemetry (ours/otel)', target: '≥ 2', measured: fmt(vsOtel, 2), met: vsOtel >= 2 },
    ],
  };
}
