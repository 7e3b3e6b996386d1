/**
 * Which module under src/ declares each catalogue family: the one module that exports the
 * declaration object holding that spec (the same object the catalogue gathers). Read from the
 * modules themselves, so the catalogue needs no file paths; docs/metrics.md's "Owners" table and
 * test/metrics/ownership.test.ts use it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CATALOGUE, type MetricKey } from '../src/catalogue.js';

const SRC = path.resolve(import.meta.dirname, '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** Family key → every module (src/ path, no extension) exporting a declaration object that holds its spec. */
export async function declaringModules(): Promise<ReadonlyMap<MetricKey, readonly string[]>> {
  const keyOf = new Map<object, MetricKey>((Object.keys(CATALOGUE) as MetricKey[]).map((key) => [CATALOGUE[key], key]));
  const found = new Map<MetricKey, string[]>();
  // Only modules that declare families are loaded (main.ts would start the sidecar).
  const declaring = sourceFiles(SRC).filter((file) => readFileSync(file, 'utf8').includes('satisfies Declarations'));
  for (const file of declaring) {
    const module = path.relative(SRC, file).replace(/\.ts$/, '').split(path.sep).join('/');
    const exports = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(exports)) {
      // Merged declarations (a stage's, the catalogue's) gather what others declared.
      if (!name.endsWith('_FAMILIES') || typeof value !== 'object' || value === null) continue;
      for (const [key, spec] of Object.entries(value)) {
        const family = keyOf.get(spec as object);
        // Declared here, not merged from another module: the spec is written out in this file.
        if (family !== key || !readFileSync(file, 'utf8').includes(`  ${key}: `)) continue;
        const modules = found.get(family) ?? [];
        if (!modules.includes(module)) found.set(family, [...modules, module]);
      }
    }
  }
  return found;
}
