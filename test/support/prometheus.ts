/** Debian's real `prometheus` on a loopback port it binds itself, with a throwaway config and data directory. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAddressInUse, loggedListenAddress } from './ports.js';

export const RULES_DIR = fileURLToPath(new URL('../../rules/', import.meta.url));

export function ruleFiles(): string[] {
  return readdirSync(RULES_DIR)
    .filter((name) => name.endsWith('.yml'))
    .map((name) => join(RULES_DIR, name));
}

export interface RunningPrometheus {
  readonly url: string;
  readonly child: ChildProcess;
  query(expr: string): Promise<{ status: string; data?: { resultType: string; result: unknown[] }; error?: string }>;
  stop(): Promise<void>;
}

/**
 * Starts Prometheus on `preferredPort` (falling back to a port of the kernel's choice when that one
 * is taken) or, by default, directly on one the kernel picks: `--web.listen-address=127.0.0.1:0`,
 * and the bound port read from its log. The scratch directory is removed on stop or failed start.
 */
export async function startPrometheus(
  binary: string,
  target: string,
  scrapeSeconds = 1,
  preferredPort = 0,
  extraArgs: readonly string[] = [],
  /** A data directory of the caller's (e.g. holding backfilled blocks); default: one in the scratch directory. */
  dataDir?: string,
): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'sidecar-prometheus-'));
  try {
    const config = [
      'global:',
      `  scrape_interval: ${scrapeSeconds}s`,
      `  evaluation_interval: ${scrapeSeconds}s`,
      'rule_files:',
      ...ruleFiles().map((file) => `  - ${JSON.stringify(file)}`),
      'scrape_configs:',
      '  - job_name: hermes-sidecar',
      '    static_configs:',
      `      - targets: [${JSON.stringify(target)}]`,
      '',
    ].join('\n');
    writeFileSync(join(dir, 'prometheus.yml'), config);
    const launch = (port: number) => launchPrometheus(binary, dir, port, extraArgs, dataDir);
    const running = await launch(preferredPort).catch((error: unknown) => {
      if (preferredPort !== 0 && isAddressInUse(error)) return launch(0);
      throw error;
    });
    return {
      ...running,
      stop: async () => {
        await running.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function launchPrometheus(binary: string, dir: string, port: number, extraArgs: readonly string[], dataDir: string | undefined): Promise<RunningPrometheus> {
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${dataDir ?? join(dir, `data-${port}`)}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // info, for the "Listening on" line that names the bound port
      '--log.level=info',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return readyPrometheus(child, 'prometheus', () => undefined);
}

/**
 * A spawned Prometheus (bound to port 0, logging at info) as a handle once /-/ready answers 200;
 * stopped (and `cleanup` run) on stop, or at once when it does not become ready in 30 s.
 */
export async function readyPrometheus(child: ChildProcess, name: string, cleanup: () => void): Promise<RunningPrometheus> {
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    cleanup();
  };
  const listening = loggedListenAddress(child, name);
  try {
    const url = `http://${await listening.address}`;
    for (const deadline = Date.now() + 30_000; ; ) {
      const ready = await fetch(`${url}/-/ready`).then((answer) => answer.status === 200, () => false);
      if (ready) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${name} did not become ready: ${listening.log()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return {
      url,
      child,
      query: async (expr) => (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as never,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A dashboard query as Grafana sends it with every variable's every value selected. */
export function substituteVariables(expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__range', '5m')
    .replaceAll('$__interval', '5s')
    .replaceAll('$job', 'hermes-sidecar')
    .replaceAll('$instance', '.+')
    .replaceAll('$provider', '.+')
    .replaceAll('$model', '.+');
}
