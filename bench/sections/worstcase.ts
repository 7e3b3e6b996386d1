/**
 * Section 10, memory at every cap with valid traffic: the worst case the defaults admit, on the
 * real binary, read from the kernel (/proc/<pid>/status: VmRSS now, VmHWM the peak).
 *
 * The traffic fills the global series cap with the widest series valid events can make: label
 * values at the label guard's 128-character cut (providers 100 characters, models and tools
 * 128), 160 observations per histogram spread one native bucket apart (the widest native
 * histogram, --metrics.native-histogram-max-buckets), a distinct 100-character request id per
 * call (an exemplar per bucket). Then one scrape in every format, plain and gzip, several rounds
 * (as Prometheus with more than one scraper would), and the kernel's figures after each stage.
 *
 * The same binary runs with the memory guard of deploy/kubernetes/deployment.yaml: after the
 * traffic stops, honest posts must be accepted (the memory held by series is not something
 * refusing ingest can free). A fresh binary then takes gzip bombs on /v1/events: its peak RSS
 * must stay within the in-flight budget of the idle figure.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { parseByteSize } from '../../src/configValues.js';
import { fmt, fmtInt, fmtMiB, ndjson, ROOT, sleep, startSidecarBinary, sumSamples, table, type RunOptions, type SectionResult, type SidecarProcess } from '../lib.js';
import type { Line } from '../../tools/traffic.js';

const MiB = 2 ** 20;
/**
 * The documented worst case (docs/scale-out.md#sizing): RSS once the scrapes are over (what stays
 * while Prometheus keeps scraping). Its peak, which V8's garbage timing moves by ~70 MiB from run
 * to run, is held against the manifest's RSS guard instead: valid traffic must never reach it.
 */
export const DOCUMENTED_STEADY_BYTES = 352 * MiB;
const SETTLE_MS = 1500;

const FORMATS = [
  ['text', 'text/plain;version=0.0.4'],
  ['OpenMetrics', 'application/openmetrics-text;version=1.0.0'],
  ['protobuf', 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited'],
] as const;

interface Kernel {
  readonly rssBytes: number;
  readonly peakBytes: number;
}

function kernel(sidecar: SidecarProcess): Kernel {
  const pid = sidecar.child.pid;
  if (pid === undefined) throw new Error('the sidecar child has no pid');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rssBytes: kib('VmRSS'), peakBytes: kib('VmHWM') };
}

/** A value of exactly `length` characters, unique by `index`. */
const wide = (prefix: string, index: number, length: number): string => `${prefix}${index}-`.padEnd(length, 'x');

/** The k-th of 160 values one native bucket (schema 3: a factor 2^(1/8)) apart, from `least`. */
const spread = (least: number, k: number): number => least * 2 ** (k / 8);

interface Plan {
  readonly tools: number;
  readonly providers: number;
  readonly modelsPerProvider: number;
  readonly observations: number;
}

function toolLines(plan: Plan): Line[] {
  const lines: Line[] = [];
  for (let tool = 0; tool < plan.tools; tool += 1) {
    const name = wide('tool-', tool, 128);
    for (let k = 0; k < plan.observations; k += 1) {
      const fields = { tool_name: name, tool_call_id: wide(`call-${tool}-`, k, 100), session_id: wide('session-', tool, 100) };
      lines.push({ event: 'pre_tool_call', data: fields }, { event: 'post_tool_call', data: { ...fields, duration_ms: spread(0.01, k), status: 'ok' } });
    }
  }
  return lines;
}

function apiLines(plan: Plan, provider: number): Line[] {
  const lines: Line[] = [];
  const startedAt = 1_800_000_000;
  for (let model = 0; model < plan.modelsPerProvider; model += 1) {
    for (let k = 0; k < plan.observations; k += 1) {
      const tokens = Math.round(spread(1, k));
      lines.push({
        event: 'post_api_request',
        data: {
          session_id: wide('session-', provider, 100),
          api_request_id: wide(`req-${provider}-${model}-`, k, 100),
          provider: wide('provider-', provider, 100),
          model: wide('model-', model, 128),
          api_duration: spread(0.001, k),
          started_at: startedAt,
          first_chunk_at: startedAt + spread(0.0005, k),
          finish_reason: 'stop',
          usage: { input_tokens: tokens, cache_read_tokens: tokens, cache_write_tokens: tokens, output_tokens: tokens, reasoning_tokens: tokens, prompt_tokens: tokens },
        },
      });
    }
  }
  return lines;
}

async function post(sidecar: SidecarProcess, lines: readonly Line[], gzip = false): Promise<number> {
  const body = ndjson(lines);
  const response = await fetch(`${sidecar.ingest}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
    body: gzip ? gzipSync(body) : body,
  });
  await response.arrayBuffer();
  return response.status;
}

async function postAll(sidecar: SidecarProcess, lines: readonly Line[]): Promise<void> {
  for (let start = 0; start < lines.length; start += 4000) {
    const status = await post(sidecar, lines.slice(start, start + 4000));
    if (status !== 202) throw new Error(`ingest answered ${status} while filling the caps`);
  }
}

async function scrapeOnce(sidecar: SidecarProcess, accept: string, gzip: boolean): Promise<{ bytes: number; text: string }> {
  const response = await fetch(`${sidecar.web}/metrics`, { headers: { accept, 'accept-encoding': gzip ? 'gzip' : 'identity' } });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return { bytes: body.length, text: accept.startsWith('text/') ? body.toString('utf8') : '' };
}

/** The memory settings of the Kubernetes manifest: its limit, request and the guard's RSS threshold. */
export function manifestMemory(): { limitBytes: number; requestBytes: number; guardRssBytes: number } {
  const text = readFileSync(`${ROOT}deploy/kubernetes/deployment.yaml`, 'utf8');
  const sidecar = text.slice(text.indexOf('- name: metrics-sidecar'), text.indexOf('containers:', text.indexOf('- name: metrics-sidecar')));
  const quantity = (pattern: RegExp): number => parseByteSize(pattern.exec(sidecar)?.[1]) ?? Number.NaN;
  return {
    limitBytes: quantity(/limits:\s+memory: (\S+)/),
    requestBytes: quantity(/requests:\s+cpu: \S+\s+memory: (\S+)/),
    guardRssBytes: quantity(/name: HERMES_SIDECAR_MEMORY_RSS_LIMIT_BYTES\s+value: "?([^"\s]+)/),
  };
}

interface Stage {
  readonly stage: string;
  readonly kernel: Kernel;
  readonly note: string;
}

interface Filled {
  readonly stages: Stage[];
  readonly series: number;
  readonly overflow: number;
  readonly seriesBytes: number;
  readonly seriesBytesRefused: number;
  /** V8's heap in use and its size, at the last scrape (prom-client's default metrics). */
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly refusedAfter: number;
  readonly posts: number;
  readonly ready: string;
}

/** Fills every cap, scrapes every format, then posts as an honest sender would after the traffic stopped. */
async function fillAndScrape(plan: Plan, rounds: number, guardArgs: readonly string[]): Promise<Filled> {
  const sidecar = await startSidecarBinary([...guardArgs]);
  const stages: Stage[] = [];
  const note = (stage: string, text = '') => stages.push({ stage, kernel: kernel(sidecar), note: text });
  try {
    await sleep(SETTLE_MS);
    note('idle');
    await postAll(sidecar, toolLines(plan));
    for (let provider = 0; provider < plan.providers; provider += 1) await postAll(sidecar, apiLines(plan, provider));
    await sleep(SETTLE_MS);
    note('caps filled, before any scrape');
    let text = '';
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, accept] of FORMATS) {
        for (const gzip of [false, true]) {
          const scraped = await scrapeOnce(sidecar, accept, gzip);
          if (scraped.text !== '') text = scraped.text;
          if (round === 0) note(`after a ${name}${gzip ? ' gzip' : ''} scrape`, `${fmtInt(scraped.bytes)} bytes rendered`);
        }
      }
    }
    await sleep(SETTLE_MS);
    note(`after ${rounds} rounds of every format, settled`);
    const posts = 8;
    let refusedAfter = 0;
    for (let index = 0; index < posts; index += 1) {
      if ((await post(sidecar, [{ event: 'post_tool_call', data: { tool_name: 'honest', status: 'ok', duration_ms: 5 } }])) !== 202) refusedAfter += 1;
    }
    const ready = (await (await fetch(`${sidecar.web}/-/ready`)).text()).trim();
    return { stages, series: sumSamples(text, 'hermes_sidecar_series'), overflow: sumSamples(text, 'hermes_sidecar_series_overflow_total'),
      seriesBytes: sumSamples(text, 'hermes_sidecar_series_bytes'),
      seriesBytesRefused: sumSamples(text, 'hermes_sidecar_series_bytes_refused_total'),
      heapUsed: sumSamples(text, 'nodejs_heap_size_used_bytes'),
      heapTotal: sumSamples(text, 'nodejs_heap_size_total_bytes'),
      external: sumSamples(text, 'nodejs_external_memory_bytes'),
      refusedAfter, posts, ready };
  } finally {
    await sidecar.stop();
  }
}

/** Peak RSS of a fresh binary over its idle RSS while `count` 1 GiB gzip bombs are posted at once, and their answers. */
async function gzipBombs(count: number, inflatedBytes: number): Promise<{ deltaBytes: number; statuses: number[] }> {
  const sidecar = await startSidecarBinary([]);
  try {
    await sleep(SETTLE_MS);
    const idle = kernel(sidecar).rssBytes;
    const bomb = gzipSync(Buffer.alloc(inflatedBytes), { level: 9 });
    const statuses = await Promise.all(
      Array.from({ length: count }, async () => {
        const response = await fetch(`${sidecar.ingest}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' }, body: bomb });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    return { deltaBytes: kernel(sidecar).peakBytes - idle, statuses };
  } finally {
    await sidecar.stop();
  }
}

export async function worstCaseSection(options: RunOptions): Promise<SectionResult> {
  const plan: Plan = options.smoke
    ? { tools: 4, providers: 2, modelsPerProvider: 2, observations: 20 }
    : // 256 tools (their cap) × 3 series, then 64 providers (their cap) × 48 models (the same 48 for each, within the model cap): past the 10,000-series cap.
      { tools: 256, providers: 64, modelsPerProvider: 48, observations: 160 };
  const manifest = manifestMemory();
  const filled = await fillAndScrape(plan, options.smoke ? 1 : 3, [`--memory.rss-limit-bytes=${manifest.guardRssBytes}`]);
  const bombs = await gzipBombs(options.smoke ? 1 : 4, options.smoke ? 64 * MiB : 1024 * MiB);
  const peak = Math.max(...filled.stages.map((stage) => stage.kernel.peakBytes));
  const steady = filled.stages[filled.stages.length - 1]?.kernel.rssBytes ?? Number.NaN;
  const budget = 64 * MiB;
  const markdown = [
    `The real binary with the defaults (series cap 10,000, label caps, 160 native buckets) and the Kubernetes manifest's guard (\`--memory.rss-limit-bytes=${manifest.guardRssBytes}\`): ` +
      `${fmtInt(plan.tools)} tools of 128 characters, then ${fmtInt(plan.providers)} providers of 100 characters × the same ${fmtInt(plan.modelsPerProvider)} models of 128 characters, ` +
      `${fmtInt(plan.observations)} observations per histogram series one native bucket apart, each call with its own 100-character ids; then every format, plain and gzip. ` +
      `RSS and peak (VmHWM) from /proc/<pid>/status.`,
    '',
    table(
      ['stage', 'RSS', 'peak RSS so far', 'note'],
      filled.stages.map((stage) => [stage.stage, fmtMiB(stage.kernel.rssBytes), fmtMiB(stage.kernel.peakBytes), stage.note]),
    ),
    '',
    `Live agent series at the end: ${fmtInt(filled.series)} (writes folded into overflow series past the cap: ${fmtInt(filled.overflow)}); ` +
      `series bytes charged ${fmtMiB(filled.seriesBytes)}, writes refused by the byte budget ${fmtInt(filled.seriesBytesRefused)}; ` +
      `V8 heap at the last scrape ${fmtMiB(filled.heapUsed)} in use of ${fmtMiB(filled.heapTotal)}, outside it (Buffers) ${fmtMiB(filled.external)}. ` +
      `After the traffic stopped, ${filled.refusedAfter} of ${filled.posts} honest posts were refused; /-/ready said "${filled.ready}".`,
    '',
    `${bombs.statuses.length} gzip bomb(s) of ${fmtMiB(options.smoke ? 64 * MiB : 1024 * MiB)} each, at once, on a fresh binary: answers ${bombs.statuses.join(', ')}, peak RSS ${fmtMiB(bombs.deltaBytes)} over idle (in-flight budget ${fmtMiB(budget)}).`,
    '',
    `Manifest: request ${fmtMiB(manifest.requestBytes)}, limit ${fmtMiB(manifest.limitBytes)}, guard ${fmtMiB(manifest.guardRssBytes)}. Documented: steady ${fmtMiB(DOCUMENTED_STEADY_BYTES)}, peak below the guard.`,
  ].join('\n');
  const smoke = options.smoke;
  return {
    key: 'worstcase',
    title: '10. Memory at every cap (worst case of valid traffic)',
    summary: `peak RSS ${fmtMiB(peak)}, steady ${fmtMiB(steady)} at ${fmtInt(filled.series)} series; ${filled.refusedAfter}/${filled.posts} honest posts refused after; gzip bombs +${fmtMiB(bombs.deltaBytes)}`,
    markdown,
    targets: smoke
      ? []
      : [
          { name: 'peak RSS at every cap, every format scraped', target: `< manifest RSS guard ${fmtMiB(manifest.guardRssBytes)} < limit ${fmtMiB(manifest.limitBytes)}`, measured: fmtMiB(peak), met: peak < manifest.guardRssBytes && manifest.guardRssBytes < manifest.limitBytes },
          { name: 'steady RSS at every cap', target: `≤ ${fmtMiB(DOCUMENTED_STEADY_BYTES)} (documented)`, measured: fmtMiB(steady), met: steady <= DOCUMENTED_STEADY_BYTES },
          { name: 'honest posts refused after the traffic stopped (manifest guard)', target: '0', measured: `${filled.refusedAfter} of ${filled.posts}`, met: filled.refusedAfter === 0 },
          { name: 'gzip bombs: peak RSS over idle', target: `≤ in-flight budget ${fmtMiB(budget)} + ${fmt(16, 0)} MiB`, measured: fmtMiB(bombs.deltaBytes), met: bombs.deltaBytes <= budget + 16 * MiB },
        ],
  };
}
