import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderMetricsDoc } from '../scripts/metrics-doc.js';
import { declaringModules } from '../scripts/declarers.js';
import { CATALOGUE } from '../src/catalogue.js';
import { OPTIONS } from '../src/config.js';

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
