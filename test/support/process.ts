/** The real sidecar binary (dist/main.js) as a child process on free ports. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface SidecarProcess {
  readonly child: ChildProcess;
  readonly web: string;
  readonly ingest: string;
  /** Parsed JSON log lines so far. */
  readonly logs: Record<string, unknown>[];
  readonly stderr: () => string;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startSidecarProcess(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<SidecarProcess> {
  const child = spawn(process.execPath, [MAIN, '--web.listen-address=127.0.0.1:0', '--ingest.listen-address=127.0.0.1:0', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  let buffered = '';
  // 'close' comes after stdout and stderr ended, so the last log lines are in by then.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        const line = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
        buffered = buffered.slice(newline + 1);
        logs.push(line);
        if (line.msg === 'listening') {
          resolve({
            child,
            web: `http://${String(line.web)}`,
            ingest: `http://${String(line.ingest)}`,
            logs,
            stderr: () => stderr,
            exited,
            stop: (signal = 'SIGTERM') => {
              child.kill(signal);
              return exited;
            },
          });
        }
        newline = buffered.indexOf('\n');
      }
    });
    void exited.then((code) => reject(new Error(`sidecar exited with ${code} before listening: ${stderr}`)));
  });
}
