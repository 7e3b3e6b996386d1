/**
 * Section 9, the series budget per host: the reference traffic (tools/traffic.ts, fixed seed, the
 * demo's six agents with faults) sent into the real binary for a fixed number of simulated minutes
 * (minutes of the demo's pace, sent as fast as the sidecar applies them), then one scrape
 * as a classic Prometheus takes it (text) and one as a native-histogram Prometheus takes it
 * (protobuf), each plain and gzipped.
 *
 * Samples per scrape: classic, the sample lines of the text (each is a series Prometheus stores);
 * native, what Prometheus ingests from the protobuf answer, counted by decoding it: one sample per
 * native histogram series, one per counter or gauge series, and a classic-only histogram (the
 * runtime's GC histogram) as its buckets plus `_sum` and `_count`. The target is on the `hermes_*`
 * families (the sidecar's own catalogue); the process and runtime metrics, the same in both, are
 * reported beside it. Also: render time of the first protobuf scrape after the traffic (every
 * series encoded) against the next ones (served from the per-series cache), and the child's RSS.
 */
import { get as httpGet } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { TrafficModel, type Line } from '../../tools/traffic.js';
import { decodeExposition, nativeSampleCount, type DecodedFamily } from '../../test/support/protobuf.js';
import { fmt, fmtInt, fmtMiB, fmtRatio, median, runChild, startSidecarBinary, sumSamples, table, timedGet, type RunOptions, type SectionResult } from '../lib.js';

interface NativeMemory {
  readonly seriesCount: number;
  readonly observations: number;
  readonly classic: { readonly bytesPerSeries: number; readonly nsPerObservation: number };
  readonly withNative: { readonly bytesPerSeries: number; readonly bucketsPerSeries: number; readonly nsPerObservation: number };
}

const SEED = 42;
const AGENTS = 6;
/** The demo's pace (tools/demo.ts), which defines a simulated minute of traffic. */
const DEMO_LINES_PER_SECOND = 200;
const DEMO_BATCH_LINES = 50;
const DEMO_HEARTBEAT_SECONDS = 2;
const BATCHES_PER_REQUEST = 10;
const NATIVE_ACCEPT = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';
const TEXT_ACCEPT = 'text/plain;version=0.0.4';
/** The target: native samples at most this share of classic ones. */
const TARGET_RATIO = 0.35;
const WARM_SCRAPES = 5;

interface Answer {
  readonly body: Buffer;
  /** The same scrape gzipped, as sent. */
  readonly gzipped: Buffer;
}

/** GET with node:http, the body as sent (no decompression). */
function getRaw(url: string, headers: Record<string, string>): Promise<{ body: Buffer; encoding: string }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => resolve({ body: Buffer.concat(chunks), encoding: String(response.headers['content-encoding'] ?? 'identity') }));
      response.once('error', reject);
    });
    request.once('error', reject);
  });
}

/** One scrape plain and one gzipped, back to back with nothing written between them. */
async function fetchBody(web: string, accept: string): Promise<Answer> {
  const plain = await getRaw(`${web}/metrics`, { accept, 'accept-encoding': 'identity' });
  const zipped = await getRaw(`${web}/metrics`, { accept, 'accept-encoding': 'gzip' });
  if (zipped.encoding !== 'gzip') throw new Error('the gzipped scrape was not gzipped');
  return { body: plain.body, gzipped: zipped.body };
}

/** Sample lines of a text exposition, all and `hermes_*` only. */
function textSamples(text: string): { all: number; hermes: number } {
  let all = 0;
  let hermes = 0;
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    all += 1;
    if (line.startsWith('hermes_')) hermes += 1;
  }
  return { all, hermes };
}

/**
 * Sends `minutes` of the demo's traffic (tools/demo.ts: 200 lines per second in batches of 50,
 * heartbeats every 2 s, an envelope-variant run every fifth batch), as fast as the sidecar applies
 * it: ten demo batches per request, the lines in the same order the demo would send them. The
 * demo's deliberate resends are left out (they are deduplicated and add no series).
 */
async function sendSimulatedMinutes(ingest: string, minutes: number): Promise<number> {
  const model = new TrafficModel({ seed: SEED, agents: AGENTS, errorRate: 0.05, faults: true });
  const batches = Math.ceil((minutes * 60 * DEMO_LINES_PER_SECOND) / DEMO_BATCH_LINES);
  const batchesPerHeartbeat = (DEMO_HEARTBEAT_SECONDS * DEMO_LINES_PER_SECOND) / DEMO_BATCH_LINES;
  let sent = 0;
  for (let batch = 0; batch < batches; ) {
    const lines: Line[] = [];
    for (const end = Math.min(batches, batch + BATCHES_PER_REQUEST); batch < end; batch += 1) {
      lines.push(...model.batch(DEMO_BATCH_LINES));
      if (batch % batchesPerHeartbeat === 0) lines.push(...model.heartbeats());
      if (batch % 5 === 0) lines.push(...model.envelopeRun());
    }
    const answer = await fetch(`${ingest}/v1/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson' },
      body: lines.map((line) => JSON.stringify(line)).join('\n'),
    });
    await answer.arrayBuffer();
    if (answer.status !== 202) throw new Error(`ingest answered ${answer.status}`);
    sent += lines.length;
  }
  return sent;
}

async function renderMs(web: string, accept: string): Promise<number> {
  return (await timedGet(`${web}/metrics`, { accept, 'accept-encoding': 'identity' })).ms;
}

export async function seriesSection(options: RunOptions): Promise<SectionResult> {
  const minutes = options.smoke ? 0.5 : 10;
  const memory = await runChild<NativeMemory>(
    'children/nativeMemory.ts',
    ['--series', options.smoke ? '200' : '5000', '--observations', options.smoke ? '50' : '200'],
    { nodeFlags: ['--expose-gc'] },
  );
  const nativeExtra = memory.withNative.bytesPerSeries - memory.classic.bytesPerSeries;
  // Renders unpaced, so back-to-back scrapes time the render rather than the pacing slot.
  const sidecar = await startSidecarBinary(['--web.min-render-interval=0.001', '--web.max-connection-request-rate=0']);
  try {
    const idleText = (await fetchBody(sidecar.web, TEXT_ACCEPT)).body.toString('utf8');
    const idleRss = sumSamples(idleText, 'process_resident_memory_bytes');
    const lines = await sendSimulatedMinutes(sidecar.ingest, minutes);
    // The first protobuf render after the traffic encodes every series; the next ones reuse them.
    const coldProtobufMs = await renderMs(sidecar.web, NATIVE_ACCEPT);
    const warmProtobufMs = median(await sequential(WARM_SCRAPES, () => renderMs(sidecar.web, NATIVE_ACCEPT)));
    const coldTextMs = await renderMs(sidecar.web, TEXT_ACCEPT);
    const warmTextMs = median(await sequential(WARM_SCRAPES, () => renderMs(sidecar.web, TEXT_ACCEPT)));
    const classic = await fetchBody(sidecar.web, TEXT_ACCEPT);
    const native = await fetchBody(sidecar.web, NATIVE_ACCEPT);
    const text = classic.body.toString('utf8');
    const families = decodeExposition(native.body);
    // The gzipped answer is the same exposition: it decodes to the same catalogue families (a
    // runtime family, such as the GC histogram, may get its first series between the two scrapes).
    const catalogueNames = (decoded: readonly DecodedFamily[]) => decoded.filter((family) => family.name.startsWith('hermes_')).map((family) => family.name).join();
    if (catalogueNames(decodeExposition(gunzipSync(native.gzipped))) !== catalogueNames(families)) throw new Error('the gzipped protobuf answer differs');
    const classicCounts = textSamples(text);
    const nativeAll = nativeSampleCount(families);
    const nativeHermes = nativeSampleCount(families.filter((family) => family.name.startsWith('hermes_')));
    const histogramSeries = families
      .filter((family) => family.name.startsWith('hermes_') && family.type === 'HISTOGRAM')
      .reduce((total, family) => total + family.metric.length, 0);
    const rss = sumSamples(text, 'process_resident_memory_bytes');
    const ratio = nativeHermes / classicCounts.hermes;
    const rows = [
      ['classic (text 0.0.4)', fmtInt(classicCounts.hermes), fmtInt(classicCounts.all), fmtInt(classic.body.length), fmtInt(classic.gzipped.length)],
      ['native (protobuf)', fmtInt(nativeHermes), fmtInt(nativeAll), fmtInt(native.body.length), fmtInt(native.gzipped.length)],
      ['native / classic', fmtRatio(ratio), fmtRatio(nativeAll / classicCounts.all), fmtRatio(native.body.length / classic.body.length), fmtRatio(native.gzipped.length / classic.gzipped.length)],
    ];
    const markdown = [
      `The real binary (defaults but \`--web.min-render-interval=0.001\`, runtime metrics on) fed the reference traffic (seed ${SEED}, ${AGENTS} agents, faults on, as \`npm run demo\`) ` +
        `for ${fmt(minutes, 1)} simulated minutes at the demo's pace of ${DEMO_LINES_PER_SECOND} lines/s (${fmtInt(lines)} lines, sent ${BATCHES_PER_REQUEST * DEMO_BATCH_LINES} per request as fast as they are applied), then scraped once as text ` +
        'and once as protobuf, plain and gzipped. A sample is a series Prometheus stores from one scrape: text sample lines for classic; ' +
        'for native, decoded from the protobuf answer, one per native histogram series, counter or gauge series (classic-only histograms as their buckets + 2).',
      '',
      table(['exposition', 'hermes_* samples (= series)', 'all samples', 'bytes plain', 'bytes gzip'], rows),
      '',
      `${fmtInt(histogramSeries)} \`hermes_*\` histogram series. RSS of the binary: ${fmtMiB(idleRss)} idle, ${fmtMiB(rss)} after the traffic and the scrapes.`,
      '',
      `Storage per histogram series (\`bench/children/nativeMemory.ts\`, ${fmtInt(memory.seriesCount)} series of the tool-duration buckets, ` +
        `${fmtInt(memory.observations)} log-normal observations each, V8 heap + external after a full GC): classic buckets only ${fmtInt(memory.classic.bytesPerSeries)} B, ` +
        `with native buckets ${fmtInt(memory.withNative.bytesPerSeries)} B (${fmt(memory.withNative.bucketsPerSeries, 1)} populated native buckets, ` +
        `${fmt(nativeExtra / memory.withNative.bucketsPerSeries, 1)} B each). Time per observation (series creation included): ` +
        `${fmt(memory.classic.nsPerObservation, 0)} ns classic only, ${fmt(memory.withNative.nsPerObservation, 0)} ns with native buckets.`,
      '',
      `Render (request to last byte, uncompressed): protobuf first after the traffic ${fmt(coldProtobufMs, 1)} ms (every series encoded), then ` +
        `${fmt(warmProtobufMs, 1)} ms (median of ${WARM_SCRAPES}, from the per-series cache); text ${fmt(coldTextMs, 1)} ms, then ${fmt(warmTextMs, 1)} ms.`,
    ].join('\n');
    return {
      key: 'series',
      title: '9. Series budget per host: classic against native histograms',
      summary:
        `${fmtInt(classicCounts.hermes)} classic hermes_* samples vs ${fmtInt(nativeHermes)} native (${fmtRatio(ratio)}); ` +
        `bytes ${fmtInt(classic.body.length)} / ${fmtInt(classic.gzipped.length)} gzip vs ${fmtInt(native.body.length)} / ${fmtInt(native.gzipped.length)} gzip; RSS ${fmtMiB(rss)}`,
      markdown,
      targets: [
        {
          name: 'native samples per scrape against classic (hermes_* families, same traffic)',
          target: `≤ ${fmtRatio(TARGET_RATIO)}`,
          measured: fmtRatio(ratio),
          met: ratio <= TARGET_RATIO,
        },
      ],
    };
  } finally {
    await sidecar.stop();
  }
}

async function sequential<T>(count: number, run: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let index = 0; index < count; index += 1) results.push(await run());
  return results;
}
