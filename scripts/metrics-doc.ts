/**
 * Generates docs/metrics.md from the catalogue, so the documented contract cannot drift from
 * the code (a test checks the committed file is current). Run: npm run docs:metrics
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CATALOGUE, closedValues, DEFAULT_BUCKETS, INFO, OPEN, type LabelValues, type MetricKey, type MetricSpec } from '../src/metrics/catalogue.js';
import { FED_BY, type Feed } from '../src/metrics/fedBy.js';
import { DEFAULT_LABEL_CAPS } from '../src/metrics/labels.js';
import { BOUNDS } from '../src/contract/bounds.js';

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

/**
 * The hooks Hermes 0.21 added (hermes_cli/plugins.py VALID_HOOKS at 00067189) and whether a
 * metric reads them: a hook is used only when its call site passes bounded, content-free facts
 * an operator acts on, and only with kwargs read at that call site.
 */
const HERMES_021_HOOKS = [
  '## Hermes 0.21 hooks: used or not, and why',
  '',
  '| hook | used | why |',
  '|---|---|---|',
  '| `agent_loop_stopped` | yes: `hermes_agent_interrupts_total{platform,reason}` | A running turn interrupted by `/stop` or by `/new` while it runs (gateway/run_agent_cache.py `_interrupt_and_clear_session`; the TUI\'s `_interrupt_session_turn` passes `reason="user_stop"`). `platform` and `reason` are identifiers (reason capped at 32 values). `invalidation_reason` is not read: it names the run-generation bookkeeping, not what the user did; `session_key` is not needed (no correlation: the turn still ends through its own `on_session_end`). |',
  '| `on_skill_lifecycle` | no | Its facts carry the local skill name, which a user writes (free text by our rule); no bounded fact an operator acts on. |',
  '| `pre_command` | no | Kwargs `surface`, `command`, `alias_used`, `args_raw`, `session_key`, `platform`: `args_raw` is content, and a count of canonical slash commands is product analytics, not service health; `/stop` (not fired here by design) is counted through `agent_loop_stopped`. |',
  '| `gateway_platform_event` | no | Platform-boundary envelopes (Telegram reactions and edits, Discord edits, deletes and threads): the `payload` carries message data, and `event_type` counts say nothing about the agent\'s health. |',
  '| `on_kanban_worker_exited` and the other kanban hooks | not yet | `exit_kind` (`clean_exit`, `rate_limited`, `nonzero_exit`, `signaled`, `unknown`) would be a bounded, content-free worker-crash signal, but only the VALID_HOOKS comment was read, not the call site in hermes_cli.kanban_db; `on_kanban_worker_spawned` carries `workspace_path`, `on_kanban_dispatch_tick` a result with task ids and paths, and `kanban_task_completed`/`blocked` a summary or reason text. |',
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
    'The "fed by" column names the Hermes hooks and fields (docs/contract.md has their call sites and a',
    'compatibility table per Hermes release) and what a user of Hermes 0.19 (NousResearch/hermes-agent',
    '306e2d2, July 2026) sees; where Hermes 0.21 (00067189, September 2026) feeds more, the row says so:',
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
  lines.push('', ...HERMES_021_HOOKS, ...SEQUENCE_SEMANTICS, ...boundsTable());
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL('../docs/metrics.md', import.meta.url), renderMetricsDoc());
}
