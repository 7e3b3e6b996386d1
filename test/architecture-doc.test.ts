/**
 * docs/architecture.md against the code: its layer table is the one the import check enforces,
 * every file it names exists, the flags and counters it cites are real, and the plugin module
 * it says registers the hooks is the only one that does.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OPTIONS } from '../src/configOptions.js';
import { CATALOGUE } from '../src/catalogue.js';
import { LAYERS } from './support/layers.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(REPO, 'src');
const PLUGIN = join(REPO, 'plugin/hermes_prometheus_bridge');
// The plugin paragraph compares its split with p-queue's own files, which are not ours.
const DOC = readFileSync(join(REPO, 'docs/architecture.md'), 'utf8').replace(/p-queue's\s+`queue\.ts`\/`priority-queue\.ts`/, "p-queue's files");

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The code names in each row of the Stages table: layer ('top' for the root) → names. */
function stageTable(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const [, layer = '', names = ''] of DOC.matchAll(/^\| (\d+|top) \| ([^|]+) \|/gm)) {
    rows.set(layer, [...names.matchAll(/`([^`]+)`/g)].map(([, name = '']) => name.replace(/\/$/, '')));
  }
  return rows;
}

/** Where a file the document names lives: src/ paths, repository paths, plugin files, bare src/ module names. */
function exists(name: string): boolean {
  if (/^(test|plugin|docs|tools|scripts)\//.test(name)) return existsSync(join(REPO, name.replace('*.ts', '')));
  if (name.includes('/')) return existsSync(join(SRC, name.replace('*.ts', '')));
  if (/\.(py|json)$/.test(name)) return existsSync(join(PLUGIN, name));
  return filesUnder(SRC).some((file) => file.endsWith(`/${name}`));
}

describe('docs/architecture.md', () => {
  it('has the layer table the import check enforces, and names every root module', () => {
    const table = stageTable();
    const documented = new Map<string, number>();
    for (const [layer, names] of table) if (layer !== 'top') for (const name of names) documented.set(name, Number(layer));
    expect(Object.fromEntries(documented)).toEqual(LAYERS);
    const roots = readdirSync(SRC).filter((name) => !(name in LAYERS));
    expect([...(table.get('top') ?? [])].sort()).toEqual(roots.sort());
  });

  it('names only files that exist', () => {
    const named = [
      ...[...DOC.matchAll(/`([^`\s]+\.(?:ts|py|json))`/g)].map(([, name = '']) => name),
      ...[...DOC.matchAll(/^ {2}([a-z/_*]+\.(?:ts|py))\b/gm)].map(([, name = '']) => name),
      ...[...DOC.matchAll(/(?:→|\() ?([a-z_]+\.(?:ts|py))\b/g)].map(([, name = '']) => name),
    ];
    expect(named.length).toBeGreaterThan(40);
    expect([...new Set(named)].filter((name) => !exists(name))).toEqual([]);
  });

  it('cites flags and counters that exist', () => {
    const flags = [...DOC.matchAll(/`--([a-z.-]+)`/g)].map(([, flag = '']) => flag);
    expect(flags.length).toBeGreaterThan(0);
    const known = new Set<string>(OPTIONS.map((option) => option.flag));
    expect(flags.filter((flag) => !known.has(flag))).toEqual([]);
    const counters = [...DOC.matchAll(/`([a-z_]+_total)\b/g)].map(([, name = '']) => name);
    expect(counters.length).toBeGreaterThan(5);
    const names = Object.values(CATALOGUE).map((spec) => spec.name);
    expect(counters.filter((counter) => !names.some((name) => name.endsWith(`_${counter}`)))).toEqual([]);
  });

  it('says which plugin module registers the hooks, and no other module does', () => {
    expect(DOC).toMatch(/`__init__\.py` is Hermes' entry point[^.]*`attach` registers its\s+callbacks/);
    expect(DOC).toContain('it is the only\nmodule that registers hooks');
    const registering = readdirSync(PLUGIN)
      .filter((name) => name.endsWith('.py'))
      .filter((name) => /\bregister_hook\b|\bregister_observer_hook\b/.test(readFileSync(join(PLUGIN, name), 'utf8').replace(/"""[\s\S]*?"""|#.*$/gm, '')));
    expect(registering).toEqual(['__init__.py']);
  });
});
