/**
 * Writes the git revision being built to REVISION at the package root (read by src/version.ts),
 * or to the path given as the first argument.
 * HERMES_SIDECAR_REVISION wins (a container build has no .git); else `git rev-parse HEAD`; else
 * `unknown`, so a build from a tarball still works.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

function revision() {
  const given = process.env.HERMES_SIDECAR_REVISION?.trim();
  if (given) return given;
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

writeFileSync(process.argv[2] ?? new URL('../REVISION', import.meta.url), `${revision()}\n`);
