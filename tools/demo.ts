/**
 * `npm run demo`: the sidecar, a synthetic Hermes traffic generator (several simulated agents)
 * and, when Debian's `prometheus` is installed, a Prometheus with the shipped rules in a
 * temporary directory. Prints the URLs; SIGINT (Ctrl-C) or SIGTERM stops everything: the
 * traffic, Prometheus (its temporary directory removed) and the sidecar, then the demo exits.
 * The npm script `exec`s this process, so a signal sent to npm reaches it.
 */
import { spawnSync } from 'node:child_process';
import { sendTraffic, TrafficModel } from './traffic.js';
import { prometheusPages } from './prometheusPages.js';
import { isAddressInUse } from '../test/support/ports.js';
import { startSidecarProcess, type SidecarProcess } from '../test/support/process.js';
import { startPrometheus, type RunningPrometheus } from '../test/support/prometheus.js';

function which(command: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** The default ports when free, else ports of the kernel's choice. */
function startSidecar(): Promise<SidecarProcess> {
  return startSidecarProcess(['--web.listen-address=127.0.0.1:9478', '--ingest.listen-address=127.0.0.1:9479']).catch((error: unknown) => {
    if (isAddressInUse(error)) return startSidecarProcess();
    throw error;
  });
}

interface Running {
  sidecar?: SidecarProcess;
  prometheus?: RunningPrometheus;
  traffic?: { readonly abort: AbortController; readonly sending: Promise<void> };
}

async function stopAll(running: Running): Promise<void> {
  running.traffic?.abort.abort();
  await running.traffic?.sending.catch(() => undefined);
  await running.prometheus?.stop();
  await running.sidecar?.stop();
}

const running: Running = {};
let stopRequested = false;

/** Starts everything, stopping early when a signal came in meanwhile; prints the URLs. */
async function start(): Promise<void> {
  running.sidecar = await startSidecar();
  if (stopRequested) return;
  const sidecar = running.sidecar;
  const model = new TrafficModel({ seed: Date.now() % 100_000, agents: 6, errorRate: 0.05, faults: true });
  const abort = new AbortController();
  running.traffic = {
    abort,
    sending: sendTraffic({ url: `${sidecar.ingest}/v1/events`, model, rate: 200, batchSize: 50, signal: abort.signal }),
  };

  const binary = which('prometheus');
  if (binary !== undefined) running.prometheus = await startPrometheus(binary, new URL(sidecar.web).host, 5, 9090);
  if (stopRequested) return;

  console.log(`\nHermes Prometheus sidecar demo\n`);
  console.log(`  sidecar         ${sidecar.web}/   (metrics: ${sidecar.web}/metrics)`);
  console.log(`  ingest          ${sidecar.ingest}/v1/events   (6 simulated agents sending)`);
  if (running.prometheus === undefined) {
    console.log(`  prometheus      not installed (apt-get install prometheus) — skipped`);
  } else {
    const pages = await prometheusPages(running.prometheus.url);
    console.log(`  prometheus      ${running.prometheus.url}/   (version ${pages.version ?? 'unknown'})`);
    console.log(`  overview graphs ${pages.graph}`);
    console.log(`  alerts          ${pages.alerts}`);
  }
  console.log(`\nCtrl-C to stop.\n`);
}

// The handlers are in place before anything starts; a signal during start-up waits for the step
// under way, so nothing it starts is left behind.
const started = start();
let stopping: Promise<void> | undefined;
const stop = (code: number): void => {
  stopRequested = true;
  stopping ??= started
    .catch(() => undefined)
    .then(() => stopAll(running))
    .then(
      () => {
        console.log('stopped');
        process.exit(code);
      },
      (error: unknown) => {
        console.error(`demo: stopping failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
};
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
started.catch((error: unknown) => {
  console.error(`demo failed: ${(error as Error).message}`);
  stop(1);
});
