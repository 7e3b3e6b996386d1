import { readFileSync } from 'node:fs';
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
