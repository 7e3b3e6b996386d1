import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REVISION } from '../../src/version.js';
import { scratchDir } from '../support/scratch.js';

const SCRIPT = new URL('../../scripts/revision.mjs', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;

function runScript(env: NodeJS.ProcessEnv): string {
  const out = path.join(scratchDir('revision-'), 'REVISION');
  const result = spawnSync(process.execPath, [SCRIPT, out], { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
  expect(result.status).toBe(0);
  return readFileSync(out, 'utf8');
}

describe('build revision', () => {
  it('takes HERMES_SIDECAR_REVISION when given (a container build has no .git)', () => {
    expect(runScript({ HERMES_SIDECAR_REVISION: ' 0123abcd \n' })).toBe('0123abcd\n');
  });

  it('otherwise records git rev-parse HEAD, or unknown outside a checkout', () => {
    const git = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
    const expected = git.status === 0 ? git.stdout.trim() : 'unknown';
    expect(runScript({})).toBe(`${expected}\n`);
  });

  it('src/version.ts exposes the recorded revision: a commit id, or unknown', () => {
    expect(REVISION).toMatch(/^([0-9a-f]{7,64}|unknown)$/);
  });
});
