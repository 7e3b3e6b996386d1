/**
 * The monitoring library as the README says to use it: its example, run with tsx from a clone,
 * writes a bundle for the example's selector and runbook. The npm package ships the generated
 * files, not the library, and nothing documents an import of it from the package.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../support/scratch.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(REPO, 'README.md'), 'utf8');

/** The README's example that imports ./monitoring/index.js. */
function readmeExample(): string {
  const block = [...README.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? '').find((code) => code.includes("from './monitoring/index.js'"));
  if (block === undefined) throw new Error('README has no example importing ./monitoring/index.js');
  return block;
}

describe('the monitoring library', () => {
  it('runs the README example from a clone and writes the bundle for its selector and runbook', () => {
    const dir = scratchDir('sidecar-monitoring-example-');
    // The example sits at the root of a clone; here it sits in a scratch directory, so its one
    // relative import is pointed at this clone.
    const script = join(dir, 'my-bundle.ts');
    writeFileSync(script, readmeExample().replace("'./monitoring/index.js'", `'${pathToFileURL(join(REPO, 'monitoring/index.ts')).href}'`));
    const tsx = import.meta.resolve('tsx');
    const result = spawnSync(process.execPath, ['--import', tsx, script], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, TSX_DISABLE_CACHE: '1' } });
    // The child's stack frames are left out of the message: vitest would try to map them.
    const problem = result.stderr.split('\n').filter((line) => !/^\s+at /.test(line)).join('\n');
    expect(result.status, problem).toBe(0);
    const alerts = readFileSync(join(dir, 'my-bundle/rules/hermes-alerts.yml'), 'utf8');
    expect(alerts).toContain('cluster="eu1", job="agents"');
    expect(alerts).toContain('runbook_url: https://wiki.example.com/hermes-runbook#');
    expect(readFileSync(join(dir, 'my-bundle/dashboards/hermes-agent-overview.json'), 'utf8')).toContain('cluster=\\"eu1\\", job=\\"agents\\"');
  });

  it('is not offered as an import from the package, which ships no such entry point', () => {
    const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { exports?: unknown; files: string[] };
    expect(manifest.exports).toBeUndefined();
    expect(manifest.files).not.toContain('monitoring');
    for (const file of ['README.md', 'monitoring/index.ts', 'docs/architecture.md']) {
      expect(readFileSync(join(REPO, file), 'utf8'), file).not.toContain("'hermes-prometheus-sidecar/monitoring'");
    }
  });
});
