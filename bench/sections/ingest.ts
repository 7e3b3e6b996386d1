/**
 * Section 2, HTTP ingest end to end: the real binary (`node dist/main.js`) loaded by autocannon
 * from this (separate) process with prepared NDJSON bodies of about 100 and 500 events.
 */
import autocannon, { type AutocannonResult } from 'autocannon';
import {
  fmt,
  fmtInt,
  fmtMiB,
  nowMs,
  scrape,
  sleep,
  startSidecarBinary,
  sumSamples,
  table,
  trafficBodies,
  type Body,
  type RunOptions,
  type SectionResult,
  type SidecarProcess,
} from '../lib.js';

const CONNECTIONS = 4;

interface Snapshot {
  readonly cpuSeconds: number;
  readonly received: number;
  readonly rssBytes: number;
  readonly lost: number;
  readonly duplicates: number;
}

async function snapshot(web: string): Promise<Snapshot> {
  const text = await scrape(web);
  return {
    cpuSeconds: sumSamples(text, 'process_cpu_seconds_total'),
    received: sumSamples(text, 'hermes_sidecar_events_received_total'),
    rssBytes: sumSamples(text, 'process_resident_memory_bytes'),
    lost: sumSamples(text, 'hermes_sidecar_events_lost_total'),
    duplicates: sumSamples(text, 'hermes_sidecar_events_duplicate_total'),
  };
}

/** Waits until every accepted batch is applied (the queue-depth gauge is refreshed per scrape). */
export async function drained(web: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    if (sumSamples(await scrape(web), 'hermes_sidecar_queue_depth') === 0) return;
    await sleep(10);
  }
  throw new Error('the ingest queue did not drain');
}

export function load(
  sidecar: SidecarProcess,
  bodies: readonly Body[],
  options: { connections: number; duration?: number; amount?: number; overallRate?: number },
): ReturnType<typeof autocannon> {
  return autocannon({
    url: sidecar.ingest,
    connections: options.connections,
    ...(options.amount === undefined ? { duration: options.duration ?? 1 } : { amount: options.amount }),
    ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
    timeout: 10,
    // A run ends on a sample tick: 100 ms ticks keep short runs short.
    sampleInt: 100,
    requests: bodies.map((body) => ({
      method: 'POST',
      path: '/v1/events',
      headers: { 'content-type': 'application/x-ndjson' },
      body: body.body,
    })),
  });
}

export const accepted = (result: AutocannonResult): number => result.statusCodeStats['202']?.count ?? 0;

export function rejects(result: AutocannonResult): number {
  const responses = Object.values(result.statusCodeStats).reduce((total, stat) => total + stat.count, 0);
  return responses - accepted(result) + result.errors + result.timeouts;
}

/** The non-202 answers by status code, then connection errors and timeouts: "503 × 12, errors 3"; "—" when there were none. */
export function rejectsByKind(result: AutocannonResult): string {
  const parts = Object.entries(result.statusCodeStats)
    .filter(([status]) => status !== '202')
    .map(([status, stat]) => `${status} × ${fmtInt(stat.count)}`);
  if (result.errors > 0) parts.push(`errors ${fmtInt(result.errors)}`);
  if (result.timeouts > 0) parts.push(`timeouts ${fmtInt(result.timeouts)}`);
  return parts.length === 0 ? '—' : parts.join(', ');
}

interface Run {
  readonly batch: number;
  readonly meanEvents: number;
  readonly requests: number;
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly rejects: number;
  readonly cpuPerMillion: number;
  readonly cpuShare: number;
  readonly rssAfter: number;
}

async function measure(sidecar: SidecarProcess, batch: number, bodies: readonly Body[], options: RunOptions): Promise<Run> {
  const before = await snapshot(sidecar.web);
  const started = nowMs();
  const result = await load(sidecar, bodies, options.smoke ? { connections: 2, amount: 10 } : { connections: CONNECTIONS, duration: 6 });
  await drained(sidecar.web);
  const seconds = (nowMs() - started) / 1000;
  const after = await snapshot(sidecar.web);
  const events = after.received - before.received;
  if (after.lost !== before.lost || after.duplicates !== before.duplicates) throw new Error('events were lost or deduplicated');
  return {
    batch,
    meanEvents: bodies.reduce((total, body) => total + body.events, 0) / bodies.length,
    requests: accepted(result),
    events,
    seconds,
    eventsPerSecond: events / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    rejects: rejects(result),
    cpuPerMillion: ((after.cpuSeconds - before.cpuSeconds) / Math.max(1, events)) * 1e6,
    cpuShare: (after.cpuSeconds - before.cpuSeconds) / seconds,
    rssAfter: after.rssBytes,
  };
}

export interface IngestOutcome {
  readonly section: SectionResult;
  /** RSS of the idle binary (default metrics on), for the memory estimate. */
  readonly idleRssBytes: number;
}

export async function ingestSection(options: RunOptions): Promise<IngestOutcome> {
  const distinct = options.smoke ? 4 : 40;
  const sets = [100, 500].map((batch) => ({ batch, bodies: trafficBodies(distinct, batch, 100 + batch) }));
  const sidecar = await startSidecarBinary();
  try {
    await sleep(options.smoke ? 50 : 300);
    const idle = await snapshot(sidecar.web);
    // Warm-up (not counted): JIT, sockets, the label guard's first values.
    await load(sidecar, sets[1]?.bodies ?? [], options.smoke ? { connections: 1, amount: 4 } : { connections: CONNECTIONS, duration: 1 });
    await drained(sidecar.web);
    const runs: Run[] = [];
    for (const { batch, bodies } of sets) runs.push(await measure(sidecar, batch, bodies, options));
    const at500 = runs.find((run) => run.batch === 500);
    const markdown = [
      `\`node dist/main.js --web.listen-address=127.0.0.1:0 --ingest.listen-address=127.0.0.1:0\` (defaults otherwise, prom-client default metrics on), ` +
        `loaded by autocannon ${options.smoke ? '(smoke: a few requests)' : `with ${CONNECTIONS} connections for 6 s per row after a 1 s warm-up`} from the runner process, ` +
        `which shares the 2 cores with the sidecar. Bodies: ${distinct} distinct prepared NDJSON bodies per row (whole generated turns, 8 agents), cycled; ` +
        `lines keep their plugin \`instance\` but carry no \`seq\`, so no repeat is deduplicated (checked: lost and duplicate counters unchanged). ` +
        'Events/s = `hermes_sidecar_events_received_total` delta over the run including the time to drain the queue; latency is per request as autocannon sees it ' +
        '(1 ms resolution); CPU is `process_cpu_seconds_total` delta of the sidecar.',
      '',
      table(
        ['batch', 'events/request', '202 requests', 'events', 'events/s', 'p50 ms', 'p99 ms', 'max ms', 'non-202', 'CPU s per 1M events', 'sidecar CPU (cores)', 'RSS after'],
        runs.map((run) => [
          `~${run.batch}`,
          fmt(run.meanEvents, 0),
          fmtInt(run.requests),
          fmtInt(run.events),
          fmtInt(run.eventsPerSecond),
          fmt(run.p50, 0),
          fmt(run.p99, 0),
          fmt(run.max, 0),
          fmtInt(run.rejects),
          fmt(run.cpuPerMillion, 2),
          fmt(run.cpuShare, 2),
          fmtMiB(run.rssAfter),
        ]),
      ),
      '',
      `Idle RSS of the binary before any traffic: ${fmtMiB(idle.rssBytes)}.`,
    ].join('\n');
    const eventsPerSecond = at500?.eventsPerSecond ?? 0;
    const p99 = at500?.p99 ?? Number.POSITIVE_INFINITY;
    const rejected = runs.reduce((total, run) => total + run.rejects, 0);
    return {
      idleRssBytes: idle.rssBytes,
      section: {
        key: 'ingest',
        title: '2. HTTP ingest end to end',
        summary: runs
          .map((run) => `~${run.batch}/batch: ${fmtInt(run.eventsPerSecond)} ev/s, p50 ${fmt(run.p50, 0)} ms, p99 ${fmt(run.p99, 0)} ms, non-202 ${run.rejects}, ${fmt(run.cpuPerMillion, 2)} CPU-s/1M events`)
          .join('; '),
        markdown,
        targets: [
          { name: 'HTTP ingest throughput at 500/batch', target: '≥ 100,000 events/s', measured: `${fmtInt(eventsPerSecond)} events/s`, met: eventsPerSecond >= 100_000 },
          { name: 'HTTP ingest p99 latency at 500/batch', target: '≤ 50 ms', measured: `${fmt(p99, 0)} ms`, met: p99 <= 50 },
          { name: 'HTTP ingest rejects (non-202)', target: '0', measured: fmtInt(rejected), met: rejected === 0 },
        ],
      },
    };
  } finally {
    await sidecar.stop();
  }
}
