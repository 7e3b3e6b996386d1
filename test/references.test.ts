/**
 * The repository carries its own contract: no file points at design documents outside it (the
 * wire format is docs/contract.md, the metrics docs/metrics.md, the structure docs/architecture.md).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'coverage']);
// Spelled in parts so this file does not match itself.
const OUTSIDE = ['ARCHITECTURE', 'CONTRACT', 'METRICS'].map((name) => `${name}.md`).concat(['../' + 'shared']);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED_DIRS.has(name)) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

describe('references', () => {
  it('no file refers to design documents outside the repository', () => {
    const found = files(ROOT)
      .filter((path) => statSync(path).size < 4_000_000)
      .flatMap((path) => {
        const text = readFileSync(path, 'utf8');
        return OUTSIDE.filter((name) => text.includes(name)).map((name) => `${relative(ROOT, path)}: ${name}`);
      });
    expect(found).toEqual([]);
  });
});
