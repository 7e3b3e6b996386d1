/**
 * Section 5, plugin side: bench/plugin_callback.py's markdown table, when the script exists.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ROOT, runProcess, type RunOptions, type SectionResult } from '../lib.js';

/** Debian's /usr/bin/python3 first (it sees python3-prometheus-client), else python3 on PATH. */
export function findPython(): string | undefined {
  return ['/usr/bin/python3', 'python3'].find((candidate) => spawnSync(candidate, ['--version']).status === 0);
}

export const skipped = (key: string, title: string, why: string): SectionResult => ({
  key,
  title,
  summary: `skipped: ${why}`,
  markdown: `Skipped: ${why}.`,
  targets: [],
});

export async function pluginSection(options: RunOptions): Promise<SectionResult> {
  const script = 'bench/plugin_callback.py';
  if (!existsSync(`${ROOT}${script}`)) return skipped('plugin', '5. Plugin side', `${script} is not present`);
  const PYTHON = findPython();
  if (PYTHON === undefined) return skipped('plugin', '5. Plugin side', 'no python3');
  const help = spawnSync(PYTHON, [script, '--help'], { cwd: ROOT, encoding: 'utf8' });
  // The script's full run takes over a minute and the suite keeps to ~3 minutes, so a full
  // bench run asks for fewer calls per row; the smoke run keeps to the "sidecar up" rows (the
  // refused and black-holed ones wait out HTTP timeouts), when the script supports the options.
  const supports = (option: string) => new RegExp(`${option}\\b`).test(help.stdout);
  const args = options.smoke
    ? ['--quick', ...(supports('--scenarios') ? ['--scenarios', 'up'] : [])]
    : supports('--calls')
      ? ['--calls', '10000']
      : [];
  const run = await runProcess(PYTHON, [script, ...args], 180_000);
  if (run.status !== 0) throw new Error(`${script} exited with ${run.status}: ${run.stderr}`);
  const output = run.stdout.trim();
  const rows = output.split('\n').filter((line) => line.startsWith('|')).length;
  return {
    key: 'plugin',
    title: '5. Plugin side',
    summary: `${script} ${args.join(' ')}: ${Math.max(0, rows - 2)} rows`,
    markdown: [`\`${PYTHON} ${script} ${args.join(' ')}\` (written separately; its output verbatim):`, '', output].join('\n'),
    targets: [],
  };
}
