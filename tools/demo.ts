/**
 * `npm run demo`: the sidecar, a synthetic Hermes traffic generator (several simulated agents)
 * and, when Debian's `prometheus` is installed, a Prometheus with the shipped rules in a
 * temporary directory. Prints the URLs; Ctrl-C stops everything.
 */
import { spawnSync } from 'node:child_process';
import { sendTraffic, TrafficModel } from './traffic.js';
import { startSidecarProcess } from '../test/support/process.js';
import { startPrometheus, type RunningPrometheus } from '../test/support/prometheus.js';

const OVERVIEW_QUERIES = [
  'sum by (provider, model) (rate(hermes_api_requests_total[1m]))',
  'provider:hermes_api_requests:error_ratio_rate5m',
  'histogram_quantile(0.95, sum by (le, provider) (rate(hermes_api_request_duration_seconds_bucket[1m])))',
  'sum by (type) (rate(hermes_tokens_total[1m]))',
  'sum by (tool, status) (rate(hermes_tool_calls_total[1m]))',
];

function which(command: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

async function main(): Promise<void> {
  // The default ports when free, else any free ones.
  const sidecar = await startSidecarProcess(['--web.listen-address=127.0.0.1:9478', '--ingest.listen-address=127.0.0.1:9479']).catch(() =>
    startSidecarProcess(),
  );
  const model = new TrafficModel({ seed: Date.now() % 100_000, agents: 6, errorRate: 0.05, faults: true });
  const traffic = new AbortController();
  const sending = sendTraffic({ url: `${sidecar.ingest}/v1/events`, model, rate: 200, batchSize: 50, signal: traffic.signal });

  const binary = which('prometheus');
  let prometheus: RunningPrometheus | undefined;
  if (binary !== undefined) prometheus = await startPrometheus(binary, new URL(sidecar.web).host, 5, 9090);

  console.log(`\nHermes Prometheus sidecar demo\n`);
  console.log(`  sidecar         ${sidecar.web}/   (metrics: ${sidecar.web}/metrics)`);
  console.log(`  ingest          ${sidecar.ingest}/v1/events   (6 simulated agents sending)`);
  if (prometheus === undefined) {
    console.log(`  prometheus      not installed (apt-get install prometheus) — skipped`);
  } else {
    const graph = OVERVIEW_QUERIES.map((query, index) => `g${index}.expr=${encodeURIComponent(query)}&g${index}.tab=0&g${index}.range_input=15m`).join('&');
    console.log(`  prometheus      ${prometheus.url}/`);
    console.log(`  overview graphs ${prometheus.url}/graph?${graph}`);
    console.log(`  alerts          ${prometheus.url}/alerts`);
  }
  console.log(`\nCtrl-C to stop.\n`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    traffic.abort();
    await sending;
    await prometheus?.stop();
    await sidecar.stop();
    console.log('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  console.error(`demo failed: ${(error as Error).message}`);
  process.exit(1);
});
