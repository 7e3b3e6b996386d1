/**
 * The correlation tables under hostile ids and queues: live heap per entry, long session ids
 * against the byte budget, approvals with a long pending queue, and the event-loop stall of a TTL
 * sweep. An in-process sidecar (src/app.ts) on a fake clock; events decoded from NDJSON lines and
 * applied through the dispatcher, as the ingest queue applies them.
 *
 * Run: npx tsx bench/tables.ts [--only binary,full,heap,sessions,approvals,sweep] (binary: run `npm run build` first)
 * It uses only createSidecar, dispatcher.applyBatch and sweep (awaited, whether it returns a
 * promise or not), so the same file measures older checkouts too: comparisons run it on both.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import request from 'supertest';
import { createSidecar, type Sidecar } from '../src/app.js';
import { defaultConfig } from '../src/config.js';
import { OPTIONS } from '../src/configOptions.js';
import { DEFAULT_STRING_LIMITS } from '../src/contract/bounds.js';
import { decodeBody } from '../src/contract/decode.js';
import type { ObserverEvent } from '../src/contract/events.js';
import { runtimeGc } from '../src/ingest/memory.js';
import { ensureTmp, scrape as benchScrape, seriesLines, startSidecarBinary, sumSamples } from './lib.js';
import { writeFileSync } from 'node:fs';

const gc = runtimeGc();
if (gc === undefined) throw new Error('this benchmark needs a full GC (the runtime refused --expose-gc)');
const collect = gc;

const { values } = parseArgs({ options: { only: { type: 'string' } } });
const only = values.only === undefined ? undefined : new Set(values.only.split(','));

class Clock {
  now = 1_800_000_000;
  readonly read = (): number => this.now;
}

/** The longest slice the sweep ran for (ms), recorded by the slicer it is handed. */
interface Slices {
  longest: number;
  pauses: number;
  /** Starts recording: the stretch running now began at `at`. */
  start(at: number): void;
}

function sidecar(options: Record<string, string> = {}): { sidecar: Sidecar; clock: Clock; slices: Slices } {
  const clock = new Clock();
  let sliceStart = performance.now();
  const slices: Slices = {
    longest: 0,
    pauses: 0,
    start: (at) => {
      sliceStart = at;
      slices.longest = 0;
      slices.pauses = 0;
    },
  };
  const slicer = {
    sliceMs: 5,
    now: () => performance.now(),
    pause: async () => {
      slices.longest = Math.max(slices.longest, performance.now() - sliceStart);
      slices.pauses += 1;
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    },
  };
  // Flags the code under test does not have (an earlier checkout) are left out.
  const known = new Set<string>(OPTIONS.map((option) => option.flag));
  const settings = Object.fromEntries(Object.entries(options).filter(([flag]) => known.has(flag)));
  const config = defaultConfig({ 'web.listen-address': '127.0.0.1:0', 'ingest.listen-address': '127.0.0.1:0', 'ingest.max-id-bytes': UNLIMITED_ID_BYTES, ...settings });
  const built = createSidecar(config, { logger: pino({ level: 'silent' }), clock: clock.read, defaultMetrics: false, slicer });
  return { sidecar: built, clock, slices };
}

/**
 * The decoder refuses long ids by default (--ingest.max-id-bytes); this benchmark lifts that limit
 * to measure what the tables cost on their own, whatever reaches them.
 */
const UNLIMITED_ID_BYTES = String(16 * 1024 * 1024);
const UNLIMITED_STRINGS = { maxIdBytes: 16 * 1024 * 1024, maxLabelValueBytes: DEFAULT_STRING_LIMITS.maxLabelValueBytes };

function decode(lines: readonly object[]): ObserverEvent[] {
  const decoded = decodeBody(Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n')), {
    format: 'ndjson',
    maxEvents: lines.length,
    arrivedAt: 1_800_000_000,
    strings: UNLIMITED_STRINGS,
  });
  if (decoded.errors.length > 0) throw new Error(`lines rejected: ${JSON.stringify(decoded.errors.slice(0, 3))}`);
  return decoded.events;
}

/** Applies lines made by `line(index)` in batches of `batch`, decoding each batch just before it is applied. */
function applyLines(target: Sidecar, count: number, line: (index: number) => object, batch = 500): void {
  for (let from = 0; from < count; from += batch) {
    const lines = Array.from({ length: Math.min(batch, count - from) }, (_, offset) => line(from + offset));
    target.dispatcher.applyBatch(decode(lines));
  }
}

function liveHeap(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

const MiB = 1024 * 1024;
const fmt = (value: number, digits = 1): string => value.toFixed(digits);

/** /metrics as Prometheus gets it: the collectors run first. */
async function scrape(target: Sidecar): Promise<string> {
  return (await request(target.webApp).get('/metrics')).text;
}

function sample(text: string, name: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

/** Ids of `length` characters, distinct from their first characters (so comparing two of them stops early). */
const longId = (index: number, length: number): string => {
  const head = `${index}-`;
  return head + 'x'.repeat(length - head.length);
};

// ------------------------------------------------------------------------------------ heap

/** Live heap per open entry of each table, ids of about 20 characters. */
async function heapPerEntry(): Promise<void> {
  const count = 50_000;
  const kinds: [string, (index: number) => object][] = [
    ['sessions', (index) => ({ event: 'on_session_start', session_id: `session-${index}-abcdefgh`, platform: 'cli' })],
    ['api attempts', (index) => ({ event: 'pre_api_request', api_request_id: `request-${index}-abcdefg`, provider: 'p', model: 'm' })],
    ['tool calls', (index) => ({ event: 'pre_tool_call', tool_call_id: `call-${index}-abcdefghij`, tool_name: 'terminal' })],
    ['turns (with session)', (index) => ({ event: 'pre_llm_call', turn_id: `turn-${index}-abcdefghij`, session_id: `session-${index}-abcdefgh`, platform: 'cli', model: 'm' })],
    ['approvals (queued)', (index) => ({ event: 'pre_approval_request', surface: 'cli', pattern_key: 'sudo', session_key: `session-${index}-abcdefgh` })],
    ['subagents', (index) => ({ event: 'subagent_start', child_session_id: `child-${index}-abcdefghi`, child_role: 'leaf' })],
  ];
  console.log(`[heap] live heap per open entry, ${count} entries, ids of ~20 characters (included), after full GCs`);
  for (const [name, line] of kinds) {
    const built = sidecar({ 'correlator.max-spans': String(count * 2), 'correlator.max-table-bytes': String(4096 * MiB) });
    const before = liveHeap();
    applyLines(built.sidecar, count, line);
    const after = liveHeap();
    console.log(`[heap] ${name}: ${fmt((after - before) / count, 0)} B per entry`);
    await scrape(built.sidecar);
  }
  // Ids past LONG_ID_CHARS are kept by digest: what a session with a 20,000-character id costs.
  const long = 10_000;
  const built = sidecar({ 'correlator.max-table-bytes': String(4096 * MiB) });
  const before = liveHeap();
  applyLines(built.sidecar, long, (index) => ({ event: 'on_session_start', session_id: longId(index, 20_000), platform: 'cli' }), 100);
  console.log(`[heap] sessions with 20,000-character ids: ${fmt((liveHeap() - before) / long, 0)} B per entry`);
}

// -------------------------------------------------------------------------------- sessions

/** 8,512 on_session_start with 65,300-character session ids: live heap before and after. */
async function longSessionIds(): Promise<void> {
  const count = 8_512;
  const length = 65_300;
  const built = sidecar();
  const before = liveHeap();
  const started = performance.now();
  applyLines(built.sidecar, count, (index) => ({ event: 'on_session_start', session_id: longId(index, length), platform: 'cli' }), 50);
  const applyMs = performance.now() - started;
  const after = liveHeap();
  const text = await scrape(built.sidecar);
  console.log(
    `[sessions] ${count} session starts with ${length}-character ids: live heap ${fmt(before / MiB)} → ${fmt(after / MiB)} MiB (+${fmt((after - before) / MiB)} MiB); ` +
      `applied in ${fmt(applyMs / 1000, 2)} s; sessions active ${sample(text, 'hermes_sessions_active{platform="cli"}')}, ` +
      `evicted ${sample(text, 'hermes_sidecar_state_evictions_total{table="sessions"}')}`,
  );
  // Every session expires: the TTL sweep over the full table.
  built.clock.now += 86_400;
  const sweepStarted = performance.now();
  built.slices.start(sweepStarted);
  const sweeping = built.sidecar.sweep();
  const synchronousMs = performance.now() - sweepStarted;
  await sweeping;
  const totalMs = performance.now() - sweepStarted;
  const longest = Math.max(synchronousMs, built.slices.longest);
  console.log(
    `[sweep] sweep of the ${count}-session table: longest stretch without yielding ${fmt(longest, 1)} ms, ${built.slices.pauses} pauses, ${fmt(totalMs, 1)} ms in all`,
  );
}

// ------------------------------------------------------------------------------- approvals

/** 60,000 pending smart approvals of one session, then 2,000 cli requests and their answers. */
async function approvals(): Promise<void> {
  const pending = 60_000;
  const requests = 2_000;
  // The table budget is raised so that all 60,000 stay pending: the subject is the work per event.
  const built = sidecar({ 'correlator.max-table-bytes': String(4096 * MiB) });
  const smart = (index: number) => ({ event: 'pre_approval_request', surface: 'smart', pattern_key: 'rm', session_key: 'session', observed_at: 1_700_000_000 + index / 1000 });
  const cli = () => ({ event: 'pre_approval_request', surface: 'cli', pattern_key: 'sudo', session_key: 'session', observed_at: 1_700_000_100 });
  const answer = () => ({ ...cli(), event: 'post_approval_response', choice: 'once', observed_at: 1_700_000_110 });
  const timed = (lines: object[]): number => {
    const events = decode(lines);
    const started = performance.now();
    built.sidecar.dispatcher.applyBatch(events);
    return performance.now() - started;
  };
  // A first run of each event kind on a short queue, so what follows is measured warm.
  const warm = sidecar();
  warm.sidecar.dispatcher.applyBatch(decode([smart(0), cli(), answer()]));
  let smartMs = 0;
  for (let from = 0; from < pending; from += 1000) smartMs += timed(Array.from({ length: 1000 }, (_, offset) => smart(from + offset)));
  const requestMs = timed(Array.from({ length: requests }, cli));
  const answerMs = timed(Array.from({ length: requests }, answer));
  const text = await scrape(built.sidecar);
  console.log(
    `[approvals] ${pending} pending smart approvals: ${fmt((smartMs * 1000) / pending, 2)} µs per request; then ${requests} cli requests ${fmt((requestMs * 1000) / requests, 2)} µs each ` +
      `(${fmt(requestMs, 1)} ms), ${requests} answers ${fmt((answerMs * 1000) / requests, 2)} µs each (${fmt(answerMs, 1)} ms); ` +
      `pending smart ${sample(text, 'hermes_approvals_pending{surface="smart"}')}, cli ${sample(text, 'hermes_approvals_pending{surface="cli"}')}`,
  );
}

// ----------------------------------------------------------------------------------- sweep

/** A full tool-call table (100,000 spans, ids of ~20 characters): a scrape, then all of it expiring at once. */
async function sweepStall(): Promise<void> {
  const count = 100_000;
  // Raised so the 100,000 spans fit the byte budget too: the entry bound is the subject here.
  const built = sidecar({ 'correlator.max-table-bytes': String(4096 * MiB) });
  applyLines(built.sidecar, count, (index) => ({ event: 'pre_tool_call', tool_call_id: `call-${index}-abcdefghij`, tool_name: 'terminal' }));
  await scrape(built.sidecar);
  const scrapes: number[] = [];
  for (let round = 0; round < 5; round += 1) {
    const scrapeStarted = performance.now();
    await scrape(built.sidecar);
    scrapes.push(performance.now() - scrapeStarted);
  }
  scrapes.sort((a, b) => a - b);
  console.log(`[sweep] /metrics with ${count} open tool calls: median ${fmt(scrapes[2] ?? 0, 1)} ms over 5 scrapes`);
  built.clock.now += 3600;
  const started = performance.now();
  built.slices.start(started);
  const sweeping = built.sidecar.sweep();
  const synchronousMs = performance.now() - started;
  await sweeping;
  const totalMs = performance.now() - started;
  const text = await scrape(built.sidecar);
  console.log(
    `[sweep] sweep of ${count} expired tool calls: longest stretch without yielding ${fmt(Math.max(synchronousMs, built.slices.longest), 1)} ms, ` +
      `${built.slices.pauses} pauses, ${fmt(totalMs, 1)} ms in all; orphaned ${sample(text, 'hermes_sidecar_orphaned_spans_total{kind="tool"}')}`,
  );
  // A full table evicting: each new span evicts the oldest.
  const full = sidecar({ 'correlator.max-table-bytes': String(4096 * MiB) });
  applyLines(full.sidecar, count, (index) => ({ event: 'pre_tool_call', tool_call_id: `call-${index}-abcdefghij`, tool_name: 'terminal' }));
  const more = 50_000;
  const events = Array.from({ length: more / 500 }, (_, batch) =>
    decode(Array.from({ length: 500 }, (_, offset) => ({ event: 'pre_tool_call', tool_call_id: `next-${batch * 500 + offset}-abcdefghi`, tool_name: 'terminal' }))),
  );
  const evictStarted = performance.now();
  for (const batch of events) full.sidecar.dispatcher.applyBatch(batch);
  const evictMs = performance.now() - evictStarted;
  console.log(`[sweep] ${more} tool calls opened on a full ${count}-span table (each evicts the oldest): ${fmt((evictMs * 1000) / more, 2)} µs each`);
}

// ------------------------------------------------------------------------------------ full

/** Every table filled past its default byte budget with 1,000-character ids: live heap and RSS. */
async function fullTables(): Promise<void> {
  const built = sidecar();
  const id = (prefix: string, index: number) => longId(index, 1000).replace('x', prefix);
  const rssBefore = process.memoryUsage().rss;
  const before = liveHeap();
  const count = 20_000;
  const lines: [string, (index: number) => object][] = [
    ['sessions', (index) => ({ event: 'on_session_start', session_id: id('s', index), platform: 'cli' })],
    ['api', (index) => ({ event: 'pre_api_request', api_request_id: id('r', index), provider: 'p', model: 'm' })],
    ['tools', (index) => ({ event: 'pre_tool_call', tool_call_id: id('c', index), tool_name: 'terminal' })],
    ['turns', (index) => ({ event: 'pre_llm_call', turn_id: id('t', index), session_id: id('s', index), platform: 'cli', model: 'm' })],
    ['approvals', (index) => ({ event: 'pre_approval_request', surface: 'cli', pattern_key: 'sudo', session_key: id('k', index) })],
    ['subagents', (index) => ({ event: 'subagent_start', child_session_id: id('a', index), child_role: 'leaf' })],
  ];
  for (const [, line] of lines) applyLines(built.sidecar, count, line);
  const after = liveHeap();
  const text = await scrape(built.sidecar);
  const evicted = ['sessions', 'api_attempts', 'tool_calls', 'turns', 'approvals', 'subagents'].map(
    (table) => `${table} ${sample(text, `hermes_sidecar_state_evictions_total{table="${table}"}`)}`,
  );
  console.log(
    `[full] ${count} entries with 1,000-character ids into each of the six tables, default budget: live heap +${fmt((after - before) / MiB)} MiB ` +
      `(${fmt(before / MiB)} → ${fmt(after / MiB)}), RSS ${fmt(rssBefore / MiB)} → ${fmt(process.memoryUsage().rss / MiB)} MiB; evicted: ${evicted.join(', ')}`,
  );
}

// ---------------------------------------------------------------------------------- binary

/**
 * The real binary (dist/main.js, defaults but label caps raised) grown to the series cap, then
 * every table filled past its byte budget over HTTP: RSS and heap from its own /metrics, five
 * scrapes 200 ms apart before and after filling.
 */
async function binaryAtCap(): Promise<void> {
  const config = `${ensureTmp()}bench-tables-caps.yaml`;
  writeFileSync(config, 'labels:\n  tool: {cap: 100000}\n  model: {cap: 100000}\n');
  const binary = await startSidecarBinary([`--config.file=${config}`, `--ingest.max-id-bytes=${UNLIMITED_ID_BYTES}`]);
  const post = async (lines: readonly object[]) => {
    const response = await fetch(`${binary.ingest}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: lines.map((line) => JSON.stringify(line)).join('\n') });
    await response.arrayBuffer();
    if (response.status !== 202) throw new Error(`ingest answered ${response.status}`);
  };
  const readings = async () => {
    const rss: number[] = [];
    const heap: number[] = [];
    for (let time = 0; time < 5; time += 1) {
      const text = await benchScrape(binary.web);
      rss.push(sumSamples(text, 'process_resident_memory_bytes') / MiB);
      heap.push(sumSamples(text, 'nodejs_heap_size_used_bytes') / MiB);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return `RSS ${rss.map((value) => fmt(value, 0)).join(' / ')} MiB (max ${fmt(Math.max(...rss), 1)}), heap ${heap.map((value) => fmt(value, 0)).join(' / ')} MiB`;
  };
  try {
    for (let index = 0; index < 1_700; index += 100) {
      await post(Array.from({ length: 100 }, (_, offset) => seriesLines(index + offset, 'tables')).flat());
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const series = sumSamples(await benchScrape(binary.web), 'hermes_sidecar_series');
    console.log(`[binary] at the series cap (${series} series), tables empty: ${await readings()}`);
    const id = (prefix: string, index: number) => longId(index, 1000).replace('x', prefix);
    const kinds: ((index: number) => object)[] = [
      (index) => ({ event: 'on_session_start', session_id: id('s', index), platform: 'cli' }),
      (index) => ({ event: 'pre_api_request', api_request_id: id('r', index), provider: 'p', model: 'm' }),
      (index) => ({ event: 'pre_tool_call', tool_call_id: id('c', index), tool_name: 'terminal' }),
      (index) => ({ event: 'pre_llm_call', turn_id: id('t', index), session_id: id('s', index), platform: 'cli', model: 'm' }),
      (index) => ({ event: 'pre_approval_request', surface: 'cli', pattern_key: 'sudo', session_key: id('k', index) }),
      (index) => ({ event: 'subagent_start', child_session_id: id('a', index), child_role: 'leaf' }),
    ];
    for (const line of kinds) {
      for (let from = 0; from < 20_000; from += 2_000) await post(Array.from({ length: 2_000 }, (_, offset) => line(from + offset)));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const text = await benchScrape(binary.web);
    const evicted = sumSamples(text, 'hermes_sidecar_state_evictions_total');
    console.log(`[binary] then 20,000 entries with 1,000-character ids into each table (${evicted} evicted in all): ${await readings()}`);
  } finally {
    await binary.stop();
  }
}

const SECTIONS: Record<string, () => Promise<void>> = { binary: binaryAtCap, full: fullTables, heap: heapPerEntry, sessions: longSessionIds, approvals, sweep: sweepStall };
console.log(`[tables] Node ${process.version}, ${new Date().toISOString()}`);
for (const [name, run] of Object.entries(SECTIONS)) {
  if (only === undefined || only.has(name)) await run();
}
