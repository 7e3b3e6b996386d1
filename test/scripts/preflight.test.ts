/** npm test's preflight: every tool a suite needs, pyflakes included, is announced before anything runs. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { preflight } from '../../scripts/preflight.mjs';

interface Preflight {
  readonly missing: string[];
  readonly pyflakesPython: string | undefined;
  readonly announcement: string | undefined;
}
const check = preflight as (pythons?: string[]) => Preflight;

describe('npm test preflight', () => {
  it('names a missing pyflakes among the missing tools, with the package that brings it', () => {
    const result = check(['/nonexistent/python3']);
    expect(result.pyflakesPython).toBeUndefined();
    expect(result.missing).toContain('pyflakes');
    expect(result.announcement).toContain('pyflakes');
    expect(result.announcement).toContain('python3-pyflakes');
  });

  it('runs before the first suite: scripts/test.mjs announces, then type-checks', () => {
    const script = readFileSync(new URL('../../scripts/test.mjs', import.meta.url), 'utf8');
    const announced = script.indexOf('preflight()');
    expect(announced).toBeGreaterThan(0);
    expect(announced).toBeLessThan(script.indexOf("run('npx'"));
  });
});
