/**
 * A test run leaves nothing in the system temp directory: scratch directories made through
 * test/support/scratch.ts are removed after their file, and any other file that makes a temp
 * directory itself also removes it.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { removeScratchDirs, scratchDir } from './support/scratch.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fixtures' || name === 'golden' || name === '__pycache__' ? [] : sources(path);
    return /\.(ts|mjs|py)$/.test(name) ? [path] : [];
  });
}

describe('scratch directories', () => {
  it('are removed, with what they hold, by the per-file cleanup', () => {
    const dir = scratchDir('sidecar-scratch-test-');
    writeFileSync(join(dir, 'secret'), 'x');
    expect(existsSync(dir)).toBe(true);
    expect(removeScratchDirs()).toBeGreaterThanOrEqual(1);
    expect(existsSync(dir)).toBe(false);
  });

  it('are the only temp directories a test makes without removing them itself', () => {
    const offenders = ['test', 'plugin/tests', 'scripts', 'tools']
      .flatMap((dir) => sources(join(REPO, dir)))
      .filter((file) => !file.endsWith(join('support', 'scratch.ts')))
      .filter((file) => {
        const text = readFileSync(file, 'utf8');
        const makes = /\bmkdtemp(Sync)?\(|tempfile\.mkdtemp\(|NamedTemporaryFile\(/.test(text);
        const removes = /\brmSync\(|\brm\(|rmtree|os\.unlink|\.unlink\(/.test(text);
        return makes && !removes;
      })
      .map((file) => relative(REPO, file));
    expect(offenders).toEqual([]);
  });
});
