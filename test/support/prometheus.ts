/** Debian's real `prometheus` on a free loopback port, with a throwaway config and data directory. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const RULES_DIR = fileURLToPath(new URL('../../rules/', import.meta.url));

export function ruleFiles(): string[] {
  return readdirSync(RULES_DIR)
    .filter((name) => name.endsWith('.yml'))
    .map((name) => join(RULES_DIR, name));
}

/** A port nobody listens on: `preferred` when it is free, else one the kernel picks. */
export function freePort(preferred = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (preferred !== 0 && error.code === 'EADDRINUSE') resolve(freePort());
      else reject(error);
    });
    server.listen(preferred, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface RunningPrometheus {
  readonly url: string;
  readonly child: ChildProcess;
  query(expr: string): Promise<{ status: string; data?: { resultType: string; result: unknown[] }; error?: string }>;
  stop(): Promise<void>;
}

export async function startPrometheus(
  binary: string,
  target: string,
  scrapeSeconds = 1,
  preferredPort = 0,
  extraArgs: readonly string[] = [],
): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'sidecar-prometheus-'));
  const port = await freePort(preferredPort);
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
  const child = spawn(
    binary,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn', ...extraArgs],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let attempt = 0; ; attempt += 1) {
    try {
      if ((await fetch(`${url}/-/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (attempt > 100 || child.exitCode !== null) throw new Error(`prometheus did not become ready: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    child,
    query: async (expr) => (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as never,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
