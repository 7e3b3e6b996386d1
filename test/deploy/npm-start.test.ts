/**
 * `npm start` under a supervisor: SIGTERM goes to the npm process, and the sidecar must stop with
 * it (drain, close both listeners, exit) instead of living on as an orphan with its ports open.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { alive, childrenOf, refused, waitFor } from '../support/tree.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

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
