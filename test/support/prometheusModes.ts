/**
 * Debian's real `prometheus` started from a config written by the test, as a server or in agent
 * mode (which refuses rule files and the TSDB flags, so test/support/prometheus.ts's server
 * launcher does not fit it), on a loopback port it binds itself; the scratch directory is removed
 * on stop or failed start.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readyPrometheus, type RunningPrometheus } from './prometheus.js';

export interface ConfiguredPrometheus {
  readonly binary: string;
  /** The whole prometheus.yml. */
  readonly config: string;
  readonly mode: 'server' | 'agent';
  readonly extraArgs?: readonly string[];
}

export async function startConfiguredPrometheus(options: ConfiguredPrometheus): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), `sidecar-prometheus-${options.mode}-`));
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, options.config);
  const storage = options.mode === 'agent' ? `--storage.agent.path=${join(dir, 'wal')}` : `--storage.tsdb.path=${join(dir, 'data')}`;
  const child = spawn(
    options.binary,
    [`--config.file=${configFile}`, storage, '--web.listen-address=127.0.0.1:0', '--log.level=info', ...(options.extraArgs ?? [])],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return readyPrometheus(child, `prometheus (${options.mode})`, () => rmSync(dir, { recursive: true, force: true }));
}
