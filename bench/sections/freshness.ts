/**
 * Section 6, freshness: from a hook call in Python (the real bridge plugin, default settings)
 * to the value being visible on /metrics of the real binary.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fmt, quantile, ROOT, scrape, sleep, startSidecarBinary, table, track, type RunOptions, type SectionResult } from '../lib.js';
import { findPython, skipped } from './plugin.js';

const POLL_MS = 5;
const SAMPLE_TIMEOUT_MS = 5_000;

export async function freshnessSection(options: RunOptions): Promise<SectionResult> {
  const samples = options.smoke ? 3 : 40;
  const PYTHON = findPython();
  if (PYTHON === undefined) return skipped('freshness', '6. Freshness', 'no python3');
  const sidecar = await startSidecarBinary();
  const python = track(
    spawn(PYTHON, ['bench/freshness.py'], {
      cwd: ROOT,
      env: { ...process.env, HERMES_SIDECAR_URL: `${sidecar.ingest}/v1/events` },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  python.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const lines = createInterface({ input: python.stdout })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<Record<string, unknown>> => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`bench/freshness.py ended early: ${stderr}`);
    return JSON.parse(line.value) as Record<string, unknown>;
  };
  const latencies: number[] = [];
  const polls: number[] = [];
  let timeouts = 0;
  try {
    const ready = await nextLine();
    if (ready.ready !== true) throw new Error('bench/freshness.py did not start');
    for (let index = 0; index < samples; index += 1) {
      // A random phase against the plugin's 0.2 s flush timer.
      await sleep(Math.random() * 250);
      const tool = `fresh_${index}_${process.pid}`;
      python.stdin.write(`call ${tool}\n`);
      const called = Number((await nextLine()).t);
      const needle = `hermes_tool_calls_total{tool="${tool}"`;
      const deadline = Date.now() + SAMPLE_TIMEOUT_MS;
      let count = 0;
      let seenAt: number | undefined;
      while (Date.now() < deadline) {
        count += 1;
        const text = await scrape(sidecar.web);
        if (text.includes(needle)) {
          seenAt = Date.now() / 1000;
          break;
        }
        await sleep(POLL_MS);
      }
      polls.push(count);
      if (seenAt === undefined) timeouts += 1;
      else latencies.push((seenAt - called) * 1000);
    }
    python.stdin.write('quit\n');
  } finally {
    python.stdin.end();
    await new Promise((resolve) => python.once('close', resolve));
    await sidecar.stop();
  }
  const p50 = quantile(latencies, 0.5);
  const p99 = quantile(latencies, 0.99);
  const max = Math.max(...latencies);
  const min = Math.min(...latencies);
  const markdown = [
    `\`bench/freshness.py\` (${PYTHON}) loads \`plugin/hermes_prometheus_bridge\` through \`register(ctx)\` with a fake context and the default plugin ` +
      'settings (flush interval 0.2 s, batch 500, `HERMES_SIDECAR_URL` pointing at the binary\'s ingest listener), and calls the `post_tool_call` callback with ' +
      `a new \`tool_name\` per sample, printing \`time.time()\` just before the call. The runner then polls \`GET /metrics\` of the binary every ${POLL_MS} ms ` +
      `until \`hermes_tool_calls_total{tool="<name>"}\` appears (latency = runner's \`Date.now()\` at that response − the Python call time; same machine clock). ` +
      `${samples} samples, each after a random 0–250 ms pause so the calls land at random phases of the plugin's flush timer.`,
    '',
    table(
      ['samples', 'seen', 'min ms', 'p50 ms', 'p99 ms', 'max ms', 'polls per sample (median)'],
      [[String(samples), String(latencies.length), fmt(min, 0), fmt(p50, 0), fmt(p99, 0), fmt(max, 0), fmt(quantile(polls, 0.5), 0)]],
    ),
    '',
    'Expected shape: up to one flush interval (0.2 s) waiting in the plugin queue, then one POST and one apply; the poll adds up to ' +
      `${POLL_MS} ms plus one render.`,
  ].join('\n');
  return {
    key: 'freshness',
    title: '6. Freshness',
    summary: `hook → /metrics: p50 ${fmt(p50, 0)} ms, p99 ${fmt(p99, 0)} ms, max ${fmt(max, 0)} ms over ${latencies.length}/${samples} samples`,
    markdown,
    targets: [
      {
        name: 'Freshness hook → /metrics p99',
        target: '≤ 1 s',
        measured: `${fmt(p99, 0)} ms${timeouts > 0 ? ` (${timeouts} not seen within 5 s)` : ''}`,
        met: timeouts === 0 && p99 <= 1000,
      },
    ],
  };
}
