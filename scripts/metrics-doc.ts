/**
 * Generates docs/metrics.md from the catalogue, so the documented contract cannot drift from
 * the code (a test checks the committed file is current). Run: npm run docs:metrics
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CATALOGUE, DEFAULT_BUCKETS } from '../src/metrics/catalogue.js';
import { DEFAULT_LABEL_CAPS } from '../src/metrics/labels.js';

const SECTIONS: [string, string][] = [
  ['agent', 'Agent metrics'],
  ['delivery', 'Delivery health'],
  ['self', 'Sidecar self-metrics'],
];

export function renderMetricsDoc(): string {
  const lines = [
    '# Metrics',
    '',
    '<!-- Generated from src/metrics/catalogue.ts by `npm run docs:metrics`; do not edit by hand. -->',
    '',
    'Every metric the sidecar exports, besides prom-client\'s `process_*` and `nodejs_*` defaults.',
    'Labels are always set: a missing value is `unknown`, a value outside a closed set is `other`.',
    '',
  ];
  for (const [scope, title] of SECTIONS) {
    lines.push(`## ${title}`, '', '| metric | type | labels | buckets | meaning |', '|---|---|---|---|---|');
    for (const spec of Object.values(CATALOGUE)) {
      if (spec.scope !== scope) continue;
      const labels = spec.labelNames.length === 0 ? '—' : spec.labelNames.map((label) => `\`${label}\``).join(', ');
      const buckets = 'buckets' in spec ? `\`${spec.buckets}\`` : '';
      lines.push(`| \`${spec.name}\` | ${spec.type} | ${labels} | ${buckets} | ${spec.help} |`);
    }
    lines.push('');
  }
  lines.push('## Bucket sets', '', '| name | upper bounds |', '|---|---|');
  for (const [name, bounds] of Object.entries(DEFAULT_BUCKETS)) lines.push(`| \`${name}\` | ${bounds.join(', ')} |`);
  lines.push('', '## Label caps (cardinality guard)', '', '| label | default cap |', '|---|---|');
  for (const [label, cap] of Object.entries(DEFAULT_LABEL_CAPS)) lines.push(`| \`${label}\` | ${cap} |`);
  lines.push('');
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL('../docs/metrics.md', import.meta.url), renderMetricsDoc());
}
