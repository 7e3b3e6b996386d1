/**
 * Section 4, memory per live series: one fresh `node --expose-gc` child per size.
 */
import { readFileSync } from 'node:fs';
import { OPTIONS } from '../../src/configOptions.js';
import {
  fmt,
  fmtInt,
  fmtMiB,
  ndjson,
  runChild,
  median,
  scrape,
  seriesLines,
  sleep,
  startSidecarBinary,
  sumSamples,
  table,
  writeCapsConfig,
  type RunOptions,
  type SectionResult,
} from '../lib.js';

interface Usage {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly externalBytes: number;
  readonly series: number;
}

interface MemoryResult {
  readonly target: number;
  readonly before: Usage;
  readonly after: Usage;
  readonly peakAfterRender: Usage;
  readonly afterRender: Usage;
  readonly renderBytes: number;
}

const SETTLE_MS = 1000;
const SCRAPES = 5;
const SCRAPE_GAP_MS = 200;

interface BinaryReading {
  readonly series: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
}

interface BinarySize {
  readonly series: number;
  /** One reading per scrape (RSS moves with each render's garbage and the next GC). */
  readonly scrapes: BinaryReading[];
  readonly maxRssBytes: number;
}

/**
 * The real binary (`node dist/main.js --config.file <caps>`), grown over HTTP to each size and
 * scraped three times at each (as Prometheus would), then its own process_resident_memory_bytes
 * and nodejs_heap_size_used_bytes read from /metrics.
 */
async function binaryReadings(sizes: readonly number[], config: string): Promise<{ idle: BinaryReading; readings: BinarySize[] }> {
  const sidecar = await startSidecarBinary([`--config.file=${config}`]);
  const read = async (): Promise<BinaryReading> => {
    const text = await scrape(sidecar.web);
    return {
      series: sumSamples(text, 'hermes_sidecar_series'),
      rssBytes: sumSamples(text, 'process_resident_memory_bytes'),
      heapUsedBytes: sumSamples(text, 'nodejs_heap_size_used_bytes'),
    };
  };
  try {
    const idle = await read();
    const readings: BinarySize[] = [];
    let index = 0;
    let series = idle.series;
    for (const size of sizes) {
      while (series < size) {
        // 6.5 new series per index on average (3 per tool, 10 per model): one or two posts per size.
        const chunk = Math.max(1, Math.min(2000, Math.ceil((size - series) / 6.5)));
        const lines = [];
        for (let end = index + chunk; index < end; index += 1) lines.push(...seriesLines(index, 'binary'));
        const response = await fetch(`${sidecar.ingest}/v1/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-ndjson' },
          body: ndjson(lines),
        });
        await response.arrayBuffer();
        if (response.status !== 202) throw new Error(`ingest answered ${response.status}`);
        series = (await read()).series;
      }
      // Let the growth settle, then scrape like a (fast) Prometheus.
      await sleep(SETTLE_MS);
      const scrapes: BinaryReading[] = [];
      for (let time = 0; time < SCRAPES; time += 1) {
        scrapes.push(await read());
        await sleep(SCRAPE_GAP_MS);
      }
      readings.push({ series: series, scrapes, maxRssBytes: Math.max(...scrapes.map((reading) => reading.rssBytes)) });
    }
    return { idle, readings };
  } finally {
    await sidecar.stop();
  }
}

const IDLE_RUNS = 5;
const IDLE_TARGET_BYTES = 64 * 2 ** 20;
const AT_CAP_TARGET_BYTES = 150e6;

/** Resident memory of a process as the kernel counts it, read without sending it a request. */
interface Resident {
  /** VmRSS. */
  readonly bytes: number;
  /** RssFile: pages of files mapped in, mostly the node binary's own code, shared with every other Node.js process. */
  readonly fileBytes: number;
}

function resident(pid: number): Resident {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => {
    const value = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
    if (value === undefined) throw new Error(`no ${field} for process ${pid}`);
    return Number(value) * 1024;
  };
  return { bytes: kib('VmRSS'), fileBytes: kib('RssFile') };
}

interface IdleReading {
  /** Just started: no traffic, no scrape. */
  readonly started: Resident;
  /** Then scraped IDLE_SCRAPES times, as an idle sidecar that Prometheus scrapes is. */
  readonly scraped: Resident;
}

const IDLE_SCRAPES = 20;

/**
 * Idle RSS of the binary just started, no traffic and no scrape (a render would add its own
 * garbage): one fresh child per run, read after it settles; then read again after a few scrapes,
 * whose hot render code brings in the optimizing compiler the start left out.
 */
async function idleRss(): Promise<IdleReading[]> {
  const readings: IdleReading[] = [];
  for (let run = 0; run < IDLE_RUNS; run += 1) {
    const sidecar = await startSidecarBinary([]);
    try {
      await sleep(SETTLE_MS);
      const pid = sidecar.child.pid;
      if (pid === undefined) throw new Error('the sidecar child has no pid');
      const started = resident(pid);
      for (let index = 0; index < IDLE_SCRAPES; index += 1) await scrape(sidecar.web);
      await sleep(SETTLE_MS);
      readings.push({ started, scraped: resident(pid) });
    } finally {
      await sidecar.stop();
    }
  }
  return readings;
}

/** `idleRssBytes`: the real binary's idle RSS (section 2), for the absolute estimate. */
export async function memorySection(options: RunOptions, idleRssBytes: number | undefined): Promise<SectionResult> {
  const sizes = options.smoke ? [300] : [10_000, 20_000];
  const config = writeCapsConfig();
  const results: MemoryResult[] = [];
  for (const size of sizes) {
    results.push(await runChild<MemoryResult>('children/memory.ts', ['--series', String(size), '--config', config], { nodeFlags: ['--expose-gc'] }));
  }
  const perSeries = (result: MemoryResult, field: 'rssBytes' | 'heapUsedBytes', end: Usage = result.after) =>
    (end[field] - result.before[field]) / Math.max(1, end.series - result.before.series);
  const largest = results[results.length - 1];
  const heapPerSeries = largest === undefined ? 0 : perSeries(largest, 'heapUsedBytes');
  const idle = await idleRss();
  const idleReadings = idle.map((reading) => reading.started.bytes);
  const idleMedian = median(idleReadings);
  const mib = (bytes: number): string => fmt(bytes / 2 ** 20, 1);
  const medianOf = (pick: (reading: IdleReading) => number): string => mib(median(idle.map(pick)));
  const binary = await binaryReadings(sizes, config);
  const atCapReading = binary.readings[0];
  const capOption = OPTIONS.find((option) => option.flag === ('metrics.max-series' as string));
  const seriesCap = typeof capOption?.default === 'number' ? capOption.default : undefined;
  const atCap = atCapReading?.maxRssBytes ?? Number.POSITIVE_INFINITY;
  const markdown = [
    'Each size in a fresh `node --expose-gc --import tsx bench/children/memory.ts` child: an in-process sidecar (raised label and series caps, default ' +
      'metrics on) warmed with 5,000 ordinary events and one render, then grown to N live agent series with distinct tools and models; ' +
      '`gc()` three times before each reading. "After render" is after one `/metrics` render and another full GC (prom-client keeps nothing from it).',
    '',
    table(
      ['live series (before → after)', 'RSS before', 'RSS after', 'RSS after render', 'heap before', 'heap after', 'heap/series', 'RSS/series (after render)', 'render bytes', 'RSS peak during render'],
      results.map((result) => [
        `${fmtInt(result.before.series)} → ${fmtInt(result.after.series)}`,
        fmtMiB(result.before.rssBytes),
        fmtMiB(result.after.rssBytes),
        fmtMiB(result.afterRender.rssBytes),
        fmtMiB(result.before.heapUsedBytes),
        fmtMiB(result.after.heapUsedBytes),
        `${fmtInt(perSeries(result, 'heapUsedBytes'))} B`,
        `${fmtInt(perSeries(result, 'rssBytes', result.afterRender))} B`,
        fmtInt(result.renderBytes),
        fmtMiB(result.peakAfterRender.rssBytes),
      ]),
    ),
    '',
    `The real binary (\`node dist/main.js --config.file <caps>\`), grown over HTTP with the same distinct tools and models, left alone for ${SETTLE_MS} ms, then ` +
      `scraped ${SCRAPES} times ${SCRAPE_GAP_MS} ms apart at each size, each scrape reporting the binary's own \`process_resident_memory_bytes\` and ` +
      '`nodejs_heap_size_used_bytes`. No forced GC: each render leaves its garbage until V8 collects, and V8 hands memory back to the OS lazily, so RSS ' +
      'moves from scrape to scrape; the target is judged on the largest reading.',
    '',
    table(
      ['live series', 'RSS per scrape (MiB)', 'heap used per scrape (MiB)', 'median RSS', 'max RSS'],
      [
        [fmtInt(binary.idle.series), fmt(binary.idle.rssBytes / 2 ** 20, 1), fmt(binary.idle.heapUsedBytes / 2 ** 20, 1), fmtMiB(binary.idle.rssBytes), fmtMiB(binary.idle.rssBytes)],
        ...binary.readings.map((size) => [
          fmtInt(size.series),
          size.scrapes.map((reading) => fmt(reading.rssBytes / 2 ** 20, 0)).join(' / '),
          size.scrapes.map((reading) => fmt(reading.heapUsedBytes / 2 ** 20, 0)).join(' / '),
          fmtMiB(median(size.scrapes.map((reading) => reading.rssBytes))),
          fmtMiB(size.maxRssBytes),
        ]),
      ],
    ),
    '',
    `Idle, just started (\`node dist/main.js\`, default settings, no traffic, no scrape; VmRSS after ${SETTLE_MS} ms), ${IDLE_RUNS} fresh children: ` +
      `${idleReadings.map(mib).join(' / ')} MiB, median ${mib(idleMedian)} MiB, of which ${medianOf((reading) => reading.started.fileBytes)} MiB is files mapped in ` +
      '(RssFile: the node binary\'s own code, shared with every other Node.js process). The rest is the V8 heap of the loaded libraries and the catalogue. ' +
      'What idle does not pay for (src/startupFootprint.ts, src/metrics/runtime.ts): the young generation grown by the startup burst, TurboFan\'s machine code ' +
      'for the module loader\'s functions that only the start makes hot, node:https and TLS (prom-client\'s Pushgateway client, a TLS listener), ' +
      '@opentelemetry/api (prom-client\'s CPU counters\' exemplars), the YAML parser without a config file, the install-plugin subcommand.',
    '',
    `The same children after ${IDLE_SCRAPES} scrapes and another ${SETTLE_MS} ms, as an idle sidecar that Prometheus scrapes: ` +
      `${idle.map((reading) => mib(reading.scraped.bytes)).join(' / ')} MiB, median ${medianOf((reading) => reading.scraped.bytes)} MiB, ` +
      `of which ${medianOf((reading) => reading.scraped.fileBytes)} MiB is files mapped in: the render's hot code brings TurboFan in.`,
    '',
    `Per series: about ${fmtInt(heapPerSeries)} B of live heap (everything the sidecar keeps per label set: label-guard entry, series bookkeeping, ` +
      `the value or bucket counts and the label object; a histogram label set with its 16 buckets counts once), so ${fmtInt(sizes[0] ?? 0)} series hold only ~${fmtMiB(heapPerSeries * (sizes[0] ?? 0))} live. The binary's RSS beyond idle ` +
      'plus that is render garbage and heap headroom: the rendered text alone is ' +
      `${fmtMiB(largest?.renderBytes ?? 0)} at the largest size, built from many intermediate strings. ` +
      (idleRssBytes === undefined ? '' : `Section 2 measured the binary idle at ${fmtMiB(idleRssBytes)} before any traffic. `) +
      (seriesCap === undefined
        ? 'The build under test has no global series cap; the 10,000-series row is what one at 10,000 would cost'
        : `The build under test caps live agent series at \`--metrics.max-series\` (default ${fmtInt(seriesCap)}; raised here to measure past it), so ` +
          `the "at the cap" figure is the ${fmtInt(sizes[0] ?? 0)}-series row`) +
      `${options.smoke ? ' (smoke: tiny size instead)' : ''}.`,
  ].join('\n');
  return {
    key: 'memory',
    title: '4. Memory',
    summary:
      `heap ${fmtInt(heapPerSeries)} B/series; binary RSS ` +
      binary.readings.map((size) => `≤ ${fmtMiB(size.maxRssBytes)} at ${fmtInt(size.series)} series`).join(', '),
    markdown,
    targets: [
      {
        name: 'idle RSS of the binary, just started',
        target: '≤ 64 MiB',
        measured: `${fmt(idleMedian / 2 ** 20, 1)} MiB (median of ${IDLE_RUNS} fresh children)`,
        met: idleMedian <= IDLE_TARGET_BYTES,
      },
      {
        name: `RSS of the binary at the ${fmtInt(atCapReading?.series ?? 0)}-series cap`,
        target: '≤ 150 MB',
        measured: `${fmt(atCap / 1e6, 0)} MB (largest of ${SCRAPES} scrapes)`,
        met: atCap <= AT_CAP_TARGET_BYTES,
      },
    ],
  };
}
