/**
 * Each metric has one owner: the catalogue names the module that writes it, and only that module
 * writes it (client_golang's promhttp and statsd_exporter's listener declare their counters where
 * they are used). The scan finds writes by the handle's name: `<metricKey>.inc(` and the like.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, type MetricKey } from '../../src/metrics/catalogue.js';

const SRC = path.resolve(import.meta.dirname, '../../src');
const KEYS = Object.keys(CATALOGUE) as MetricKey[];
const WRITE = new RegExp(`\\b(${KEYS.join('|')})\\.(inc|dec|set|observe|handle)\\(`, 'g');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

const moduleOf = (file: string): string => path.relative(SRC, file).replace(/\.ts$/, '').split(path.sep).join('/');

/** metric key → modules that write it */
function writeSites(): Map<MetricKey, Set<string>> {
  const sites = new Map<MetricKey, Set<string>>(KEYS.map((key) => [key, new Set()]));
  for (const file of sourceFiles(SRC)) {
    for (const match of readFileSync(file, 'utf8').matchAll(WRITE)) sites.get(match[1] as MetricKey)?.add(moduleOf(file));
  }
  return sites;
}

describe('metric ownership', () => {
  const sites = writeSites();

  it('names an existing module as the owner of every metric', () => {
    const missing = KEYS.filter((key) => !existsSync(path.join(SRC, `${CATALOGUE[key].owner}.ts`)));
    expect(missing).toEqual([]);
  });

  it('finds a write of every metric (the scan is not blind)', () => {
    expect(KEYS.filter((key) => sites.get(key)?.size === 0)).toEqual([]);
  });

  it('writes every metric only in the module that owns it', () => {
    const foreign = KEYS.flatMap((key) =>
      [...(sites.get(key) ?? [])].filter((module) => module !== CATALOGUE[key].owner).map((module) => `${key} written in ${module}, owned by ${CATALOGUE[key].owner}`),
    );
    expect(foreign).toEqual([]);
  });

  it('has one writer for the counters that had three: dropped, rejected, evictions', () => {
    expect([...(sites.get('eventsDropped') ?? [])]).toEqual(['ingest/ingestor']);
    expect([...(sites.get('eventsRejected') ?? [])]).toEqual(['ingest/errors']);
    expect([...(sites.get('stateEvictions') ?? [])]).toEqual(['correlate/assemble']);
  });

  it('hands the whole Metrics object only to the assemblers that give each part its own', () => {
    const holders = sourceFiles(SRC)
      .filter((file) => /\bmetrics: Metrics\b|\(metrics: Metrics\b/.test(readFileSync(file, 'utf8')))
      .map(moduleOf)
      .sort();
    expect(holders).toEqual(['app', 'correlate/assemble', 'correlate/recorders/index', 'ingest/app', 'metrics/registry']);
  });
});
