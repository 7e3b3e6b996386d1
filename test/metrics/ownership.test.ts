/**
 * Each family is declared by the component that writes it (client_golang's promhttp and
 * statsd_exporter's listener declare their counters where they are used), and a component is
 * handed the families of its own declaration object, so a write to any other does not type-check
 * (test/metrics/declarations.test.ts shows it). What the types cannot say is checked here: one
 * declaring module per family, a write of each family in the module that declares it, and the
 * whole set of families held only by the composition root.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { declaringModules } from '../../scripts/declarers.js';
import { CATALOGUE, type MetricKey } from '../../src/catalogue.js';

const SRC = path.resolve(import.meta.dirname, '../../src');
const KEYS = Object.keys(CATALOGUE) as MetricKey[];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

const moduleOf = (file: string): string => path.relative(SRC, file).replace(/\.ts$/, '').split(path.sep).join('/');
const sourceOf = (module: string): string => readFileSync(path.join(SRC, `${module}.ts`), 'utf8');

describe('metric ownership', () => {
  let declarers: ReadonlyMap<MetricKey, readonly string[]>;
  beforeAll(async () => {
    declarers = await declaringModules();
  });

  it('has one declaring module for every family', () => {
    const wrong = KEYS.filter((key) => declarers.get(key)?.length !== 1).map((key) => `${key}: ${(declarers.get(key) ?? []).join(', ') || 'none'}`);
    expect(wrong).toEqual([]);
  });

  it('writes every family in the module that declares it (no declaration away from its writer)', () => {
    const unwritten = KEYS.filter((key) => {
      const module = declarers.get(key)?.[0];
      if (module === undefined) return false;
      // A gauge of open spans is written through its tally: `tally.report(this.metrics.<key>)`.
      return !new RegExp(`\\b${key}\\.(inc|dec|set|observe|handle)\\(|\\.report\\([\\w.]*\\b${key}\\)`).test(sourceOf(module));
    });
    expect(unwritten).toEqual([]);
  });

  it('has one writer for the counters that had three: dropped, rejected, evictions', () => {
    expect(declarers.get('eventsDropped')).toEqual(['ingest/ingestor']);
    expect(declarers.get('eventsRejected')).toEqual(['ingest/errors']);
    expect(declarers.get('stateEvictions')).toEqual(['correlate/assemble']);
  });

  it('holds every family only at the composition root, which hands each component its own', () => {
    const holders = sourceFiles(SRC)
      .filter((file) => /\bmetrics: Metrics\b|\(metrics: Metrics\b|\btype Metrics\b/.test(readFileSync(file, 'utf8')))
      .map(moduleOf)
      .sort();
    expect(holders).toEqual(['app', 'catalogue']);
  });

  it('names no file path in the catalogue', () => {
    const catalogue = sourceOf('catalogue');
    expect(catalogue).not.toMatch(/ownedBy|owner/);
    expect(catalogue).not.toMatch(/'(correlate|ingest|web|net|metrics|contract)\/[\w/]+'/);
    for (const spec of Object.values(CATALOGUE)) expect(Object.keys(spec)).not.toContain('owner');
  });
});
