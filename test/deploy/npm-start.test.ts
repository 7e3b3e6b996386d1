/**
 * `npm start` under a supervisor: SIGTERM goes to the npm process, and the sidecar must stop with
 * it (drain, close both listeners, exit) instead of living on as an orphan with its ports open.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Pids whose parent is `parent`, from /proc (field 4 of /proc/PID/stat, after the command name). */
function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
      } catch {
        return false;
      }
    })
    .map(Number);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const refused = (address: string): Promise<boolean> =>
  new Promise((resolve) => {
    const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

describe('npm start', () => {
  it('stops the sidecar, its listeners and every child when npm gets SIGTERM', async () => {
    const npm = spawn('npm', ['start', '--', '--web.listen-address=127.0.0.1:0', '--ingest.listen-address=127.0.0.1:0'], {
      cwd: REPO,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a failed run can clean up everything it started.
      detached: true,
    });
    const exited = new Promise<number | null>((resolve) => npm.once('close', (code) => resolve(code)));
    let output = '';
    const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
      npm.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        for (const line of output.split('\n')) {
          if (!line.startsWith('{')) continue; // npm's own "> hermes-prometheus-sidecar start" banner
          const record = JSON.parse(line) as Record<string, unknown>;
          if (record.msg === 'listening') resolve(record);
        }
      });
      void exited.then((code) => reject(new Error(`npm start exited with ${code} before listening: ${output}`)));
    });
    try {
      const [sidecar, ...others] = childrenOf(npm.pid!);
      expect(others).toEqual([]);
      expect(readFileSync(`/proc/${sidecar}/cmdline`, 'utf8').split('\0')).toContain('dist/main.js');
      expect(await refused(String(listening.web))).toBe(false);

      npm.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 10_000))]);

      expect(code).toBe(0);
      expect(await waitFor(() => !alive(sidecar!), 5000)).toBe(true);
      expect(await refused(String(listening.web))).toBe(true);
      expect(await refused(String(listening.ingest))).toBe(true);
      expect(output).toContain('"msg":"stopped"');
    } finally {
      // A failed run must not leave npm, a shell or an orphaned sidecar behind.
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // the group is already gone: the expected outcome
      }
    }
  });
});
