/**
 * Section 4, memory per live series: one fresh `node --expose-gc` child per size.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { CONTENT_TYPES, PROTOBUF_CONTENT_TYPE } from '../../src/exposition/negotiate.js';
import { DEFAULT_MIN_RENDER_INTERVAL_MS } from '../../src/web/renders.js';
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

/** One way Prometheus scrapes: the headers it sends and what the sidecar must answer. */
interface ScrapeFormat {
  readonly name: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly gzipped: boolean;
}

/** Prometheus 2.x's own Accept header (scrape_protocols' default), sent with `Accept-Encoding: gzip`. */
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

const SCRAPE_FORMATS: readonly ScrapeFormat[] = [
  { name: 'text 0.0.4', headers: { accept: 'text/plain;version=0.0.4', 'accept-encoding': 'identity' }, contentType: CONTENT_TYPES.text, gzipped: false },
  { name: 'OpenMetrics', headers: { accept: 'application/openmetrics-text;version=1.0.0', 'accept-encoding': 'identity' }, contentType: CONTENT_TYPES.openmetrics, gzipped: false },
  { name: 'protobuf', headers: { accept: PROTOBUF_CONTENT_TYPE, 'accept-encoding': 'identity' }, contentType: CONTENT_TYPES.protobuf, gzipped: false },
  { name: 'gzip (Prometheus\' own request: OpenMetrics)', headers: { accept: PROMETHEUS_ACCEPT, 'accept-encoding': 'gzip' }, contentType: CONTENT_TYPES.openmetrics, gzipped: true },
];

/** One scrape in `format`, checked to be answered in it; resolves with the bytes on the wire. */
function scrapeAs(web: string, format: ScrapeFormat): Promise<number> {
  // node:http rather than fetch: fetch sends an Accept-Encoding of its own and inflates the answer.
  return new Promise((resolve, reject) => {
    const request = http.get(`${web}/metrics`, { headers: format.headers }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('error', reject);
      response.on('end', () => {
        const answered = [response.statusCode, response.headers['content-type'], response.headers['content-encoding'] === 'gzip'];
        const wanted = [200, format.contentType, format.gzipped];
        if (JSON.stringify(answered) === JSON.stringify(wanted)) resolve(bytes);
        else reject(new Error(`/metrics answered ${JSON.stringify(answered)} to a ${format.name} scrape`));
      });
    });
    request.on('error', reject);
  });
}

interface IdleReading {
  readonly format: ScrapeFormat;
  /** Just started: no traffic, no scrape. */
  readonly started: Resident;
  /** Then scraped IDLE_SCRAPES times in `format`, as an idle sidecar that Prometheus scrapes is. */
  readonly scraped: Resident;
  /** Bytes of the last answer on the wire. */
  readonly answerBytes: number;
}

const IDLE_SCRAPES = 20;

/**
 * Idle RSS of the binary just started, no traffic and no scrape: one fresh child per run and
 * format, read after it settles; then read again after IDLE_SCRAPES scrapes in that format, back
 * to back (the render pacing spaces them), and another settle.
 */
async function idleRss(runs: number): Promise<IdleReading[]> {
  const readings: IdleReading[] = [];
  for (let run = 0; run < runs; run += 1) {
    for (const format of SCRAPE_FORMATS) {
      const sidecar = await startSidecarBinary([]);
      try {
        await sleep(SETTLE_MS);
        const pid = sidecar.child.pid;
        if (pid === undefined) throw new Error('the sidecar child has no pid');
        const started = resident(pid);
        let answerBytes = 0;
        for (let index = 0; index < IDLE_SCRAPES; index += 1) answerBytes = await scrapeAs(sidecar.web, format);
        await sleep(SETTLE_MS);
        readings.push({ format, started, scraped: resident(pid), answerBytes });
      } finally {
        await sidecar.stop();
      }
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
  const idleRuns = options.smoke ? 1 : IDLE_RUNS;
  const idle = await idleRss(idleRuns);
  const idleMedian = median(idle.map((reading) => reading.started.bytes));
  const mib = (bytes: number): string => fmt(bytes / 2 ** 20, 1);
  const medianOf = (pick: (reading: IdleReading) => number, readings: readonly IdleReading[] = idle): string => mib(median(readings.map(pick)));
  const byFormat = SCRAPE_FORMATS.map((format) => ({ format, readings: idle.filter((reading) => reading.format === format) }));
  const scrapedMedians = byFormat.map(({ readings }) => median(readings.map((reading) => reading.scraped.bytes)));
  const worstScraped = Math.max(...scrapedMedians);
  const worstFormat = byFormat[scrapedMedians.indexOf(worstScraped)]?.format.name ?? '';
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
    `Idle (\`node dist/main.js\`, default settings, no traffic): one fresh child per format and run, ${idleRuns} run(s), VmRSS ${SETTLE_MS} ms after it ` +
      `started (no scrape yet) and again after ${IDLE_SCRAPES} scrapes in that format back to back (the render pacing spaces them ` +
      `${DEFAULT_MIN_RENDER_INTERVAL_MS} ms apart) and another ${SETTLE_MS} ms: the footprint of an idle sidecar that Prometheus scrapes, which is every ` +
      'real one. RssFile is the part that is files mapped in, mostly the node binary\'s own code, shared with every other Node.js process.',
    '',
    table(
      ['scraped as', 'answer bytes', 'just started (median)', `after ${IDLE_SCRAPES} scrapes (median)`, 'of which RssFile', `after ${IDLE_SCRAPES} scrapes, each child (MiB)`],
      byFormat.map(({ format, readings }) => [
        format.name,
        fmtInt(readings[readings.length - 1]?.answerBytes ?? 0),
        `${medianOf((reading) => reading.started.bytes, readings)} MiB`,
        `${medianOf((reading) => reading.scraped.bytes, readings)} MiB`,
        `${medianOf((reading) => reading.scraped.fileBytes, readings)} MiB`,
        readings.map((reading) => mib(reading.scraped.bytes)).join(' / '),
      ]),
    ),
    '',
    `Just started, all ${idle.length} children: median ${mib(idleMedian)} MiB, of which ${medianOf((reading) => reading.started.fileBytes)} MiB RssFile; ` +
      'the rest is the V8 heap of the loaded libraries and the catalogue. What an idle sidecar does not pay for, scraped or not (src/startupFootprint.ts, ' +
      'src/whenBusy.ts, src/metrics/runtime.ts, src/exposition/exposition.ts, src/web/gzip.ts): the young generation grown by the startup burst or by the ' +
      'garbage of the first scrapes, TurboFan\'s machine code (kept off until the process first uses a quarter of a core for a second: an idle render is ' +
      'too small for optimized code to pay), node:https and TLS (prom-client\'s Pushgateway client, a TLS listener), @opentelemetry/api (prom-client\'s ' +
      'CPU counters\' exemplars), protobufjs until the first protobuf scrape, libuv\'s thread pool for an exposition of up to 256 KiB (gzipped on the ' +
      'event loop), a whole 1 MiB Buffer per plain answer, the YAML parser without a config file, the install-plugin subcommand.',
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
      `idle RSS ${mib(idleMedian)} MiB just started, ≤ ${mib(worstScraped)} MiB after ${IDLE_SCRAPES} scrapes in any format; heap ${fmtInt(heapPerSeries)} B/series; binary RSS ` +
      binary.readings.map((size) => `≤ ${fmtMiB(size.maxRssBytes)} at ${fmtInt(size.series)} series`).join(', '),
    markdown,
    targets: [
      {
        name: 'idle RSS of the binary, just started',
        target: '≤ 64 MiB',
        measured: `${mib(idleMedian)} MiB (median of ${idle.length} fresh children)`,
        met: idleMedian <= IDLE_TARGET_BYTES,
      },
      {
        name: `idle RSS after ${IDLE_SCRAPES} scrapes per format`,
        target: '≤ 64 MiB',
        measured:
          `${mib(worstScraped)} MiB at most (${worstFormat}; medians of ${idleRuns} fresh children per format: ` +
          `${byFormat.map(({ format }, index) => `${format.name} ${mib(scrapedMedians[index] ?? 0)}`).join(', ')})`,
        met: worstScraped <= IDLE_TARGET_BYTES,
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
