/**
 * The stages of src/ import only downward: a module may import from its own folder or from a
 * lower layer, never from a stage above it (statsd_exporter's listener → line → event → mapper →
 * registry → exporter, here foundation → metrics → contract → correlate → exposition → ingest →
 * web → composition root).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../src');

/** Layer of each stage; root files not listed here are the composition root (top). */
const LAYERS: Readonly<Record<string, number>> = {
  'clock.ts': 0,
  'errors.ts': 0,
  'log.ts': 0,
  'version.ts': 0,
  metrics: 1,
  // The listeners' connection bounds: they need only the metrics.
  net: 1.5,
  contract: 2,
  correlate: 3,
  exposition: 4,
  ingest: 5,
  web: 6,
};
const ROOT = 10;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** The stage of a file: its first path segment under src/ (a folder or a root file). */
function stageOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0] ?? '';
}

const layerOf = (stage: string): number => LAYERS[stage] ?? ROOT;

function relativeImports(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    if (match[1] !== undefined) specifiers.push(match[1]);
  }
  return specifiers;
}

describe('architecture', () => {
  const files = sourceFiles(SRC);

  it('finds the stages it checks', () => {
    const stages = new Set(files.map(stageOf));
    for (const stage of ['metrics', 'contract', 'correlate', 'ingest', 'web']) expect(stages).toContain(stage);
  });

  it('no module imports from a stage above its own', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = stageOf(file);
      for (const specifier of relativeImports(readFileSync(file, 'utf8'))) {
        const target = path.resolve(path.dirname(file), specifier);
        if (!target.startsWith(SRC)) {
          upward.push(`${path.relative(SRC, file)} imports ${specifier} from outside src/`);
          continue;
        }
        const to = stageOf(target.replace(/\.js$/, '.ts'));
        if (to !== from && layerOf(to) > layerOf(from)) upward.push(`${path.relative(SRC, file)} → ${specifier}`);
      }
    }
    expect(upward).toEqual([]);
  });
});
