/**
 * The stages of src/ import only downward: a module may import from its own folder or from a
 * lower layer, never from a stage above it (statsd_exporter's listener → line → event → mapper →
 * registry → exporter, here foundation → metrics → contract → correlate → exposition → ingest →
 * web → composition root). No import circle anywhere, in src/ or in monitoring/.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAYERS } from './support/layers.js';
import { importCircles, importGraph, relativeImports, sourceFiles } from './support/imports.js';

const REPO = path.resolve(import.meta.dirname, '..');
const SRC = path.join(REPO, 'src');
const MONITORING = path.join(REPO, 'monitoring');
const PLUGIN = path.join(REPO, 'plugin/hermes_prometheus_bridge');

const ROOT = 10;

/** The stage of a file: its first path segment under src/ (a folder or a root file). */
function stageOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0] ?? '';
}

const layerOf = (stage: string): number => LAYERS[stage] ?? ROOT;

/** Each import of a src/ module as [importer, imported], both relative to src/ (`.ts`). */
function importsOf(files: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (const file of files) {
    for (const specifier of relativeImports(readFileSync(file, 'utf8'))) {
      const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts');
      pairs.push([path.relative(SRC, file), path.relative(SRC, target)]);
    }
  }
  return pairs;
}

describe('architecture', () => {
  const files = sourceFiles(SRC);
  const imports = importsOf(files);

  it('finds the stages it checks, and their imports', () => {
    const stages = new Set(files.map(stageOf));
    for (const stage of ['metrics', 'contract', 'correlate', 'ingest', 'web']) expect(stages).toContain(stage);
    // Every stage above the foundation imports something; a pattern that matched nothing would
    // make every rule below pass vacuously.
    const importing = new Set(imports.map(([from]) => stageOf(path.join(SRC, from))));
    for (const stage of ['metrics', 'net', 'contract', 'correlate', 'exposition', 'ingest', 'web', 'app.ts', 'main.ts']) expect(importing).toContain(stage);
    expect(imports.length).toBeGreaterThan(300);
    // Each form the pattern must read: a one-line import, a multi-line one (events → fields),
    // `import type` (connections → registry, index → context) and a dynamic import() (main.ts).
    expect(imports).toContainEqual(['contract/bounds.ts', 'wireText.ts']);
    expect(imports).toContainEqual(['contract/events.ts', 'contract/fields.ts']);
    expect(imports).toContainEqual(['net/connections.ts', 'metrics/registry.ts']);
    expect(imports).toContainEqual(['correlate/recorders/index.ts', 'correlate/recorders/context.ts']);
    expect(imports).toContainEqual(['main.ts', 'lifecycle.ts']);
  });

  it('no module imports from a stage above its own', () => {
    const upward: string[] = [];
    for (const [from, to] of imports) {
      if (to.startsWith('..')) {
        upward.push(`${from} imports ${to} from outside src/`);
        continue;
      }
      const fromStage = stageOf(path.join(SRC, from));
      const toStage = stageOf(path.join(SRC, to));
      if (toStage !== fromStage && layerOf(toStage) > layerOf(fromStage)) upward.push(`${from} → ${to}`);
    }
    expect(upward).toEqual([]);
  });

  it('the event contract imports nothing of the storage: its wire vocabulary sits below both', () => {
    const intoMetrics = imports.filter(([from, to]) => from.startsWith('contract/') && to.startsWith('metrics/'));
    expect(intoMetrics).toEqual([]);
    expect(imports.filter(([from]) => from.startsWith('contract/')).length).toBeGreaterThan(10);
  });

  it('has no import circle in src/', () => {
    const graph = importGraph(files);
    expect([...graph.values()].flat().length).toBe(imports.length - countDuplicates(imports));
    expect(importCircles(graph).map((circle) => circle.map((file) => path.relative(SRC, file)))).toEqual([]);
  });
});

describe('monitoring/ imports', () => {
  const files = sourceFiles(MONITORING);
  const graph = importGraph(files);

  it('are found', () => {
    expect([...graph.values()].flat().length).toBeGreaterThan(40);
  });

  it('have no import circle', () => {
    const circles = importCircles(graph).map((circle) => circle.map((file) => path.relative(MONITORING, file)));
    expect(circles).toEqual([]);
  });
});


/** Modules over this many lines have a test file named after them. */
const TESTED_ABOVE_LINES = 60;

/**
 * Modules over TESTED_ABOVE_LINES lines without a test file named after them: type declarations
 * only (no value, no function, nothing that runs), which the type-check of their users tests.
 * An entry fails the test once its test file exists, so the list only shrinks.
 */
const WITHOUT_OWN_TEST = [
  // What a series is, as storage keeps it and a renderer reads it.
  'src/metrics/series.ts',
  // The typed event union the readers build and the recorders take.
  'src/contract/eventData.ts',
];

/** Whether a TypeScript module declares types only: every top-level statement an import type, a type or an interface. */
function declaresTypesOnly(source: string): boolean {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const topLevel = code.split('\n').filter((line) => /^\S/.test(line) && !/^[}\])]/.test(line));
  return topLevel.length > 0 && topLevel.every((line) => /^(?:export )?(?:import type|type|interface) /.test(line));
}

/** The test file named after a module: test/<stage>/<module>.test.ts, plugin/tests/test_<module>.py. */
function ownTestOf(module: string): string {
  // The package's __init__.py (register(ctx) and its attachment to Hermes) is tested by test_init.py.
  if (module.startsWith('plugin/')) return path.join(REPO, 'plugin/tests', `test_${path.basename(module, '.py').replace(/^__init__$/, 'init')}.py`);
  return path.join(REPO, 'test', `${path.relative(SRC, path.join(REPO, module)).replace(/\.ts$/, '')}.test.ts`);
}

describe('tests beside the code', () => {
  const lines = (file: string): number => readFileSync(file, 'utf8').split('\n').length - 1;
  const modules = [
    ...sourceFiles(SRC),
    ...readdirSync(PLUGIN).filter((name) => name.endsWith('.py')).map((name) => path.join(PLUGIN, name)),
  ]
    .filter((file) => lines(file) > TESTED_ABOVE_LINES)
    .map((file) => path.relative(REPO, file));

  it('finds the modules it checks', () => {
    expect(modules).toContain('src/contract/events.ts');
    expect(modules).toContain('plugin/hermes_prometheus_bridge/sender.py');
    expect(modules.length).toBeGreaterThan(60);
  });

  it('gives each module over 60 lines a test file named after it, but for the listed ones', () => {
    const untested = modules.filter((module) => !existsSync(ownTestOf(module)));
    expect(untested.sort()).toEqual([...WITHOUT_OWN_TEST].sort());
  });

  it('lists only modules that declare types and nothing that runs', () => {
    for (const module of WITHOUT_OWN_TEST) expect(declaresTypesOnly(readFileSync(path.join(REPO, module), 'utf8')), module).toBe(true);
    // The check tells a module that runs code from one that does not.
    expect(declaresTypesOnly(readFileSync(path.join(SRC, 'metrics/seriesIndex.ts'), 'utf8'))).toBe(false);
    expect(declaresTypesOnly(readFileSync(path.join(SRC, 'metrics/fedBy.ts'), 'utf8'))).toBe(false);
  });
});

function countDuplicates(pairs: readonly [string, string][]): number {
  return pairs.length - new Set(pairs.map(([from, to]) => `${from}\u0000${to}`)).size;
}

/** A module past this many lines holds more than one job: split it. */
const MAX_MODULE_LINES = 400;

describe('module size', () => {
  it(`keeps every module of src/ within ${MAX_MODULE_LINES} lines`, () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    const long = files.filter((file) => readFileSync(file, 'utf8').split('\n').length - 1 > MAX_MODULE_LINES).map((file) => path.relative(SRC, file));
    expect(long).toEqual([]);
  });
});
