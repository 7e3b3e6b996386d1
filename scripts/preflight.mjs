// What `npm test` checks before running anything: the tools its suites need, so every skip is
// announced first. pyflakes is a Python module, not a command: each interpreter is asked for it.
import { spawnSync } from 'node:child_process';

const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

/** The interpreters tried for pyflakes: Debian's first (python3-pyflakes), then the PATH's. */
export const PYFLAKES_PYTHONS = ['/usr/bin/python3', 'python3'];

/**
 * The missing tools and the interpreter that has pyflakes (undefined when none has), with the
 * one line that announces the skips (undefined when nothing is missing).
 */
export function preflight(pythons = PYFLAKES_PYTHONS) {
  const missing = ['promtool', 'prometheus', 'python3'].filter((tool) => !has(tool));
  const pyflakesPython = pythons.find((candidate) => spawnSync(candidate, ['-m', 'pyflakes', '--version'], { stdio: 'ignore' }).status === 0);
  if (pyflakesPython === undefined) missing.push('pyflakes');
  const announcement =
    missing.length === 0
      ? undefined
      : `missing tools: ${missing.join(', ')} — the suites that need them will be SKIPPED ` +
        "(install Debian's prometheus, python3 and python3-pyflakes packages to run everything)";
  return { missing, pyflakesPython, announcement };
}
