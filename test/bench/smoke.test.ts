/**
 * The benchmark suite's smoke run (`tsx bench/run.ts --smoke`): every section runs end to end
 * with tiny sizes and prints its line. Nothing about speed is asserted, and RESULTS.md is not
 * written.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS = `${ROOT}bench/RESULTS.md`;
const SECTIONS = ['aggregation', 'profile', 'ingest', 'scrape', 'scrapeload', 'memory', 'plugin', 'hostcpu', 'freshness', 'series', 'worstcase', 'backfill'];

const mtime = (path: string): number | undefined => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};

function runSmoke(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('npx', ['tsx', 'bench/run.ts', '--smoke'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bench/run.ts --smoke', () => {
  it('runs every section with tiny sizes, prints a line for each and writes no RESULTS.md', async () => {
    const before = mtime(RESULTS);
    const { code, stdout, stderr } = await runSmoke();
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    for (const section of SECTIONS) {
      expect(stdout, `no summary line for section ${section}`).toMatch(new RegExp(`^\\[${section}\\] (?!FAILED|load average|target:)\\S`, 'm'));
      expect(stdout, `no load average for section ${section}`).toMatch(new RegExp(`^\\[${section}\\] load average at end \\d`, 'm'));
    }
    expect(stdout).not.toMatch(/^\[\w+\] FAILED/m);
    expect(stdout).not.toContain('wrote ');
    expect(mtime(RESULTS)).toBe(before);
  }, 180_000);
});
