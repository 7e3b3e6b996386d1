import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderMetricsDoc } from '../scripts/metrics-doc.js';
import { declaringModules } from '../scripts/declarers.js';
import { CATALOGUE } from '../src/catalogue.js';
import { loadConfig } from '../src/config.js';
import { envName, OPTIONS } from '../src/configOptions.js';

describe('documentation', () => {
  it('docs/metrics.md is generated from the current catalogue (npm run docs:metrics)', async () => {
    expect(readFileSync(new URL('../docs/metrics.md', import.meta.url), 'utf8')).toBe(renderMetricsDoc(await declaringModules()));
  });

  it('the README names every option with its default and every metric family', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const option of OPTIONS) expect(readme).toContain(`\`--${option.flag}\``);
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm install && npm test');
    expect(readme).toContain('docs/metrics.md');
    for (const spec of Object.values(CATALOGUE)) {
      if (spec.scope !== 'agent') expect(readme).toContain(spec.name);
    }
  });

  it('every byte size the docs, README and deploy files write for a setting is one the config loader accepts', () => {
    const files = ['README.md', 'docs/scale-out.md', 'docs/reliability.md', 'docs/runbook.md', 'deploy/systemd/hermes-prometheus-sidecar.service', 'deploy/kubernetes/deployment.yaml'];
    const byName = new Map(OPTIONS.map((option) => [envName(option.flag), option.flag]));
    const written: [string, string][] = [];
    for (const file of files) {
      const text = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
      for (const [, name, value] of text.matchAll(/(HERMES_SIDECAR_[A-Z0-9_]*BYTES)=([^\s`'"|),]+)/g)) written.push([name as string, value as string]);
      for (const [, name, value] of text.matchAll(/name: (HERMES_SIDECAR_[A-Z0-9_]*BYTES)\s+value: "?([^"\s]+)/g)) written.push([name as string, value as string]);
      for (const [, flag, value] of text.matchAll(/--([a-z.-]*bytes)=([^\s`'"|),]+)/g)) written.push([envName(flag as string), value as string]);
    }
    expect(written.map(([name]) => name)).toContain('HERMES_SIDECAR_MEMORY_RSS_LIMIT_BYTES');
    for (const [name, value] of written) {
      expect(byName.has(name), name).toBe(true);
      expect(() => loadConfig({ argv: [], env: { [name]: value } }), `${name}=${value}`).not.toThrow();
    }
  });
});

const ROOT = new URL('..', import.meta.url).pathname;

/** Files under a directory, as paths relative to the repository root. */
function filesUnder(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((name) => `${dir}/${name}`);
}

/** Whether a cited path exists; `*` (one segment) and `**` (any depth) are allowed. */
function citedPathExists(cited: string): boolean {
  if (!cited.includes('*')) return existsSync(join(ROOT, cited));
  const pattern = new RegExp(`^${cited.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\0').replace(/\*/g, '[^/]*').replace(/\0/g, '.*')}$`);
  return filesUnder('test').some((file) => pattern.test(file));
}

describe('test paths cited in the docs', () => {
  it('every test/... path in README.md and docs/*.md exists (globs allowed)', () => {
    const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    const stale: string[] = [];
    let cited = 0;
    for (const doc of docs) {
      for (const match of readFileSync(join(ROOT, doc), 'utf8').matchAll(/(?<![\w/.-])test\/[\w./*-]*[\w*]/g)) {
        cited += 1;
        if (!citedPathExists(match[0])) stale.push(`${doc}: ${match[0]}`);
      }
    }
    expect(cited).toBeGreaterThan(40);
    expect(stale).toEqual([]);
  });

  it('the check itself sees a stale path and matches a glob', () => {
    expect(citedPathExists('test/http/ingest.test.ts')).toBe(false);
    expect(citedPathExists('test/http/*.test.ts')).toBe(false);
    expect(citedPathExists('test/ingest/*.test.ts')).toBe(true);
    expect(citedPathExists('test/**/hooks.test.ts')).toBe(true);
  });
});
