/**
 * Soak: the sidecar binary under generator traffic with id and label churn (new sessions, turns,
 * tool calls, plugin instances and tool names all the time) for a configurable time, sampling RSS,
 * heap, live series, scrape time and event-loop lag every few seconds. They must plateau: the
 * report compares the maxima of the first and last thirds of the run.
 *
 *   npx tsx bench/soak.ts [--minutes 10] [--rate 2000] [--out bench/soak-results.md]
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { sendTraffic, TrafficModel } from '../tools/traffic.js';
import { startSidecarProcess } from '../test/support/process.js';
import { parseSamples } from '../test/support/exposition.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rate: { type: 'string', default: '2000' },
    interval: { type: 'string', default: '5' },
    out: { type: 'string', default: 'bench/soak-results.md' },
  },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const intervalMs = Number(values.interval) * 1000;

interface Sample {
  readonly atSeconds: number;
  readonly rssMiB: number;
  readonly heapMiB: number;
  readonly series: number;
  readonly scrapeMs: number;
  readonly scrapeKiB: number;
  readonly lagP99Ms: number;
  readonly lagMaxMs: number;
  readonly applied: number;
}

async function main(): Promise<void> {
  // Short TTLs so churned spans, sessions and plugin instances expire during the run.
  const sidecar = await startSidecarProcess(['--correlator.span-ttl=60', '--correlator.session-ttl=120', '--sequence.instance-ttl=120']);
  const traffic = new AbortController();
  const started = Date.now();
  let generation = 0;
  let sent = 0;
  let resent = 0;
  let refused = 0;
  const models: TrafficModel[] = [];
  const senders: Promise<void>[] = [];
  // Every 30 s a new generator with a new seed: new plugin instances, sessions and ids.
  const churn = setInterval(() => {
    generation += 1;
  }, 30_000);
  const runSender = async () => {
    while (!traffic.signal.aborted) {
      const current = generation;
      const model = new TrafficModel({ seed: 1000 + current, agents: 8, errorRate: 0.05, faults: true });
      models.push(model);
      const slice = new AbortController();
      const stopSlice = setInterval(() => {
        if (generation !== current || traffic.signal.aborted) slice.abort();
      }, 200);
      await sendTraffic({
        url: `${sidecar.ingest}/v1/events`,
        model,
        rate,
        batchSize: 200,
        signal: slice.signal,
        onResponse: (status, lines, duplicate) => {
          // Heartbeats are state, not events: the sidecar's applied count leaves them out.
          const events = lines.filter((line) => line.event !== 'plugin_heartbeat').length;
          if (status !== 202) refused += events;
          else if (duplicate) resent += events;
          else sent += events;
        },
      });
      clearInterval(stopSlice);
    }
  };
  senders.push(runSender());

  const samples: Sample[] = [];
  while (Date.now() - started < minutes * 60_000) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    const scrapeStart = performance.now();
    const text = await (await fetch(`${sidecar.web}/metrics`)).text();
    const scrapeMs = performance.now() - scrapeStart;
    const metrics = parseSamples(text);
    const sample: Sample = {
      atSeconds: Math.round((Date.now() - started) / 1000),
      rssMiB: (metrics.get('process_resident_memory_bytes') ?? 0) / 2 ** 20,
      heapMiB: (metrics.get('nodejs_heap_size_used_bytes') ?? 0) / 2 ** 20,
      series: metrics.get('hermes_sidecar_series') ?? 0,
      scrapeMs,
      scrapeKiB: text.length / 1024,
      lagP99Ms: (metrics.get('nodejs_eventloop_lag_p99_seconds') ?? 0) * 1000,
      lagMaxMs: (metrics.get('nodejs_eventloop_lag_max_seconds') ?? 0) * 1000,
      applied: sent,
    };
    samples.push(sample);
    console.log(JSON.stringify(sample));
  }
  clearInterval(churn);
  traffic.abort();
  await Promise.all(senders);
  const final = parseSamples(await (await fetch(`${sidecar.web}/metrics`)).text());
  const code = await sidecar.stop();
  const applied = Number(sidecar.logs.find((line) => line.msg === 'stopped')?.applied_events ?? Number.NaN);
  const totals = {
    sent,
    resent,
    refused,
    applied,
    code,
    skipped: models.reduce((total, model) => total + model.skipped, 0),
    lost: final.get('hermes_sidecar_events_lost_total') ?? Number.NaN,
    duplicates: final.get('hermes_sidecar_events_duplicate_total') ?? Number.NaN,
  };
  writeFileSync(values.out ?? 'bench/soak-results.md', report(samples, totals));
  console.log(`wrote ${values.out}`);
}

function max(samples: readonly Sample[], key: keyof Sample): number {
  return samples.reduce((best, sample) => Math.max(best, sample[key]), 0);
}

interface Totals {
  readonly sent: number;
  readonly resent: number;
  readonly refused: number;
  readonly applied: number;
  readonly code: number | null;
  readonly skipped: number;
  readonly lost: number;
  readonly duplicates: number;
}

function report(samples: readonly Sample[], totals: Totals): string {
  const third = Math.max(1, Math.floor(samples.length / 3));
  const first = samples.slice(0, third);
  const last = samples.slice(-third);
  const keys: [keyof Sample, string][] = [
    ['rssMiB', 'RSS (MiB)'],
    ['heapMiB', 'heap used (MiB)'],
    ['series', 'live agent series'],
    ['scrapeMs', 'scrape time (ms)'],
    ['scrapeKiB', '/metrics size (KiB)'],
    ['lagP99Ms', 'event-loop lag p99 (ms)'],
    ['lagMaxMs', 'event-loop lag max (ms)'],
  ];
  const rows = keys.map(([key, label]) => `| ${label} | ${max(first, key).toFixed(1)} | ${max(last, key).toFixed(1)} | ${max(samples, key).toFixed(1)} |`);
  return [
    '# Soak results',
    '',
    `Command: \`npx tsx bench/soak.ts --minutes ${minutes} --rate ${rate}\` on ${new Date().toISOString()}`,
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}.`,
    '',
    'The generator churns ids and labels: a new seed (new plugin instances, sessions, turn and tool-call ids) every 30 s,',
    'tool names past the label cap, sequence gaps, duplicates and heartbeat drops; span, session and instance TTLs are',
    'short (60/120/120 s) so state expires during the run.',
    '',
    '| accounting | events |',
    '|---|---|',
    `| distinct events sent and answered 202 | ${totals.sent} |`,
    `| applied (the sidecar's shutdown log) | ${totals.applied} |`,
    `| deliberately resent (a lost-response retry) | ${totals.resent} |`,
    `| counted as duplicates (\`hermes_sidecar_events_duplicate_total\`) | ${totals.duplicates} |`,
    `| sequence numbers the generator skipped (simulated losses) | ${totals.skipped} |`,
    `| counted as lost (\`hermes_sidecar_events_lost_total\`) | ${totals.lost} |`,
    `| refused with 429/503 (retryable) | ${totals.refused} |`,
    '',
    'A skipped sequence number is counted as lost when the next event of its plugin instance arrives, so a skip',
    'in the very last events of a generator (replaced every 30 s) can stay uncounted: lost ≤ skipped, by at most',
    'the number of generators.',
    '',
    'Heartbeats are left out of every count (they are state, not events). Resent batches never hold envelope',
    'events (which carry no `seq`), so every resent event is a duplicate: applied = distinct, duplicates = resent.',
    '',
    `Exit code after SIGTERM: ${totals.code}.`,
    '',
    '| measure | max, first third | max, last third | max, whole run |',
    '|---|---|---|---|',
    ...rows,
    '',
    `${samples.length} samples, every ${values.interval} s.`,
    '',
  ].join('\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
