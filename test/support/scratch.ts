/**
 * Scratch directories in the system temp directory. Each one is removed once its test file has
 * run (test/support/scratch-cleanup.ts is a vitest setup file), so a run leaves nothing behind,
 * whether its tests pass, fail or time out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();

/** A new empty directory named `prefix` + random characters, removed after the test file. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Removes every scratch directory made so far; returns how many. */
export function removeScratchDirs(): number {
  const count = made.size;
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
  return count;
}
