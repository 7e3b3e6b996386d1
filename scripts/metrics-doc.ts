/**
 * Generates docs/metrics.md from the catalogue, so the documented contract cannot drift from
 * the code (a test checks the committed file is current). Run: npm run docs:metrics
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CATALOGUE, closedValues, DEFAULT_BUCKETS, INFO, OPEN, type LabelValues, type MetricKey, type MetricSpec } from '../src/metrics/catalogue.js';
import { FED_BY, type Feed } from '../src/metrics/fedBy.js';
import { DEFAULT_LABEL_CAPS } from '../src/metrics/labels.js';
import { BOUNDS, DEFAULT_STRING_LIMITS } from '../src/contract/bounds.js';

/** How plugin sequence numbers become lost, late, duplicate and reset counts (src/correlate/instances.ts). */
const SEQUENCE_SEMANTICS = [
  '## Sequence accounting',
  '',
  'Each bridge-plugin instance numbers its events (`seq`, one more per event it queued) and sends them oldest first.',
  'Per instance the sidecar keeps the highest number applied and the gaps below it that are still open:',
  '',
  '- a number above the highest, within `--sequence.window`: applied; the numbers skipped open a gap;',
  '- a number inside an open gap: applied once, counted in `hermes_sidecar_events_late_total` (it is not lost);',
  '- any other number at or below the highest: a retried duplicate, not applied, counted in `hermes_sidecar_events_duplicate_total`;',
  '- a number more than the window away from the highest, up or down: a new epoch starts there, counted in',
  '  `hermes_sidecar_sequence_resets_total`; nothing is counted lost or duplicate for the jump, so one bad line cannot',
  '  add 9e15 lost events nor make later real events duplicates.',
  '',
  'An open gap is counted in `hermes_sidecar_events_lost_total` once it settles: at the instance\'s next heartbeat (the plugin',
  'sends in order, so what it sent before the heartbeat has arrived), after `--sequence.reorder-seconds`, when it falls a',
  'whole window behind, when more than 64 gaps are open (the oldest first), or when the instance is forgotten. A heartbeat\'s',
  '`acked_seq` sets the baseline of an instance seen for the first time and moves a known one forward within the window;',
  'further is a new epoch.',
  '',
];

function boundsTable(): string[] {
  const rows: [string, string][] = [
    ['tokens (each type, per call)', `${BOUNDS.tokens}`],
    ['durations (API, tool, turn, subagent, run; also between two sender timestamps)', `${BOUNDS.durationSeconds} s (7 days)`],
    ['time to first chunk', `${BOUNDS.durationSeconds} s`],
    ['memory write size_bytes', `${BOUNDS.sizeBytes} bytes (1 GiB)`],
    ['heartbeat drop totals', `${BOUNDS.droppedTotal}`],
    ['retry_count, max_retries', `${BOUNDS.retryCount}`],
    ['status_code', `${BOUNDS.statusCode.min}–${BOUNDS.statusCode.max}`],
    ['heartbeat interval_seconds', `${BOUNDS.intervalSeconds} s`],
    ['heartbeat acked_seq', `${BOUNDS.ackedSeq}`],
    ['observed_at', `before ${BOUNDS.observedAtEpochSeconds} (2100-01-01); else the arrival time is used`],
    ['cost_usd (Hermes\' price of one call)', `${BOUNDS.costUsd} USD`],
    ['ids (session, turn, request, tool call, subagent session, approval session key, webhook delivery; counted by wire name)', `${DEFAULT_STRING_LIMITS.maxIdBytes} UTF-8 bytes (\`--ingest.max-id-bytes\`); a longer plugin \`instance\` rejects its line`],
    ['names that become label values (provider, model, tool_name, reason, …; counted by wire name)', `${DEFAULT_STRING_LIMITS.maxLabelValueBytes} UTF-8 bytes (\`--ingest.max-label-value-bytes\`)`],
  ];
  return [
    '## Value bounds',
    '',
    'A value outside its bound is treated as absent, like a value of the wrong type (the event itself still counts), and',
    'counted in `hermes_sidecar_values_rejected_total{field}`. No sample is ever `NaN` or `±Inf` except the `+Inf` bucket bound.',
    '',
    '| value | bound |',
    '|---|---|',
    ...rows.map(([value, bound]) => `| ${value} | ${bound} |`),
    '',
  ];
}

const SECTIONS: [string, string][] = [
  ['agent', 'Agent metrics'],
  ['delivery', 'Delivery health'],
  ['self', 'Sidecar self-metrics'],
];

const code = (text: string): string => `\`${text}\``;

function describeValues(label: string, values: LabelValues): string {
  if (values === OPEN) return `open: from Hermes, at most ${String(DEFAULT_LABEL_CAPS[label as keyof typeof DEFAULT_LABEL_CAPS])} values (then \`other\`)`;
  if (values === INFO) return 'build information';
  if ('derived' in values) return values.description;
  if ('sameAs' in values) return `the values of \`${values.sameAs}\` (guarded as that label is)`;
  return (closedValues(values) ?? []).map(code).join(', ');
}

function labelRows(spec: MetricSpec): string[] {
  return spec.labelNames.map((label) => {
    const values = spec.labels[label];
    return `| ${code(spec.name)} | ${code(label)} | ${values === undefined ? '' : describeValues(label, values)} |`;
  });
}

const FEEDS: Record<Feed, string> = {
  hermes: 'fed by hooks that release calls, through the bridge plugin',
  partial: 'fed, but some labels or series need a later Hermes or a particular path (the row says which)',
  envelope: 'fed only by the envelope variant (`register_observer_hook`), which no Hermes release has; kept for senders that use it, but not on the dashboards or in the rules, and no series exists until such an event arrives',
  plugin: 'delivery health, from the bridge plugin\'s heartbeats and sequence numbers',
  sidecar: 'the sidecar\'s own state',
};

export function renderMetricsDoc(): string {
  const specs: MetricSpec[] = Object.values(CATALOGUE);
  const lines = [
    '# Metrics',
    '',
    '<!-- Generated from src/metrics/catalogue.ts by `npm run docs:metrics`; do not edit by hand. -->',
    '',
    'Every metric the sidecar exports, besides prom-client\'s `process_*` and `nodejs_*` defaults.',
    'Labels are always set: a missing value is `unknown`, a value outside a closed set is `other`.',
    'The pipeline\'s own counters whose labels are all closed start at 0 for every combination of values.',
    '',
    'The "fed by" column names the Hermes hooks and fields (docs/contract.md has their call sites) and what a',
    'user of the tested Hermes release (NousResearch/hermes-agent 306e2d2, July 2026) sees:',
    '',
    ...Object.entries(FEEDS).map(([feed, meaning]) => `- **${feed}**: ${meaning}`),
    '',
  ];
  for (const [scope, title] of SECTIONS) {
    lines.push(`## ${title}`, '', '| metric | type | labels | buckets | meaning | fed by |', '|---|---|---|---|---|---|');
    for (const [key, spec] of Object.entries(CATALOGUE) as [MetricKey, MetricSpec][]) {
      if (spec.scope !== scope) continue;
      const labels = spec.labelNames.length === 0 ? '—' : spec.labelNames.map(code).join(', ');
      const buckets = spec.buckets === undefined ? '' : code(spec.buckets);
      const fed = FED_BY[key];
      lines.push(`| ${code(spec.name)} | ${spec.type} | ${labels} | ${buckets} | ${spec.help} | **${fed.feed}**: ${fed.by} |`);
    }
    lines.push('');
  }
  lines.push('## Label values', '', 'Closed sets are declared once, in the catalogue; open labels pass the cardinality guard.', '');
  lines.push('| metric | label | values |', '|---|---|---|');
  for (const spec of specs) lines.push(...labelRows(spec));
  lines.push('', '## Owners', '', 'Each metric is written by one module under `src/`, which is handed only the metrics it owns', '(test/metrics/ownership.test.ts checks every write site).', '');
  lines.push('| module | metrics |', '|---|---|');
  const owners = new Map<string, string[]>();
  for (const spec of specs) owners.set(spec.owner, [...(owners.get(spec.owner) ?? []), spec.name]);
  for (const [owner, names] of owners) lines.push(`| ${code(`src/${owner}.ts`)} | ${names.map(code).join(', ')} |`);
  lines.push('', '## Bucket sets', '', '| name | upper bounds |', '|---|---|');
  for (const [name, bounds] of Object.entries(DEFAULT_BUCKETS)) lines.push(`| ${code(name)} | ${bounds.join(', ')} |`);
  lines.push('', '## Label caps (cardinality guard)', '', '| label | default cap |', '|---|---|');
  for (const [label, cap] of Object.entries(DEFAULT_LABEL_CAPS)) lines.push(`| ${code(label)} | ${cap} |`);
  lines.push('', ...SEQUENCE_SEMANTICS, ...boundsTable());
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL('../docs/metrics.md', import.meta.url), renderMetricsDoc());
}
