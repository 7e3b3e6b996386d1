/**
 * Generates docs/metrics.md from the catalogue, so the documented contract cannot drift from
 * the code (a test checks the committed file is current). Run: npm run docs:metrics
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CATALOGUE, FED_BY, type MetricKey } from '../src/catalogue.js';
import { closedValues, DEFAULT_BUCKETS, INFO, OPEN, type LabelValues, type MetricSpec } from '../src/metrics/declare.js';
import type { Feed } from '../src/metrics/fedBy.js';
import { declaringModules } from './declarers.js';
import { historySection } from './history-doc.js';
import { DEFAULT_LABEL_CAPS } from '../src/metrics/labels.js';
import { seriesExpiry as expiryOfSpec } from '../src/metrics/registry.js';
import { BOUNDS, DEFAULT_STRING_LIMITS } from '../src/contract/bounds.js';
import { MAX_EPOCHS, MAX_FORGOTTEN_RANGES, MAX_INTERVALS, MAX_OPEN_GAPS, MAX_PAST_BOOTS } from '../src/correlate/instances.js';

/** How plugin sequence numbers become applied, lost, late, duplicate, discarded and reset counts (src/correlate/sequence). */
/** docs/metrics.md, "Series expiry": the rule, the default and why, and the families that never expire. */
function seriesExpiry(): string[] {
  const specs = Object.values(CATALOGUE as Record<string, MetricSpec>);
  const computed = specs.filter((spec) => expiryOfSpec(spec) === 'idle at zero').map((spec) => code(spec.name));
  return [
    '## Series expiry',
    '',
    'An agent series that nothing has written for `--metrics.series-ttl` seconds (default 604800, 7 days;',
    '`0` keeps every series until restart) is removed by the sweep that runs every',
    '`--correlator.sweep-interval`, in slices that hand the event loop back, and counted in',
    '`hermes_sidecar_series_expired_total{metric}`. It gives its slot and its bytes back to the global',
    'series budget (`--metrics.max-series`, `--metrics.max-series-bytes`), and each open label value it carried goes back to its label cap once no',
    'live series of any family carries it (the guard counts references), so a cap filled by models',
    'nobody uses any more admits new ones again and never holds more than its limit at once. A write',
    'after expiry creates the series afresh at 0: Prometheus sees a counter reset, which `rate()` and',
    '`increase()` handle, and nothing is undercounted because nothing was written in the gap. The',
    'sweep notes when a series\' version last moved, so a write costs no clock reading; a series expires',
    'between one TTL and one TTL plus a sweep interval after its last write. A value goes back to its',
    'cap only after every series carrying it expired, that is after a TTL without any write of it.',
    'The storage is the one owner of this: the label guard is built inside the registry, every series',
    'holds a reference to each open value it carries, and a value no series carries leaves the cap at',
    'the end of the sweep that removed its last series; nothing else keeps its own list of live values.',
    'Values a recorder passes uncapped (the known exit reasons) hold no place in the cap either way.',
    '',
    `Gauges of what is open (${computed.join(', ')}) are written as spans and sessions open and close,`,
    'and a series of theirs expires like any other once it has been at 0 for the TTL: nothing is open',
    'under its labels, so removing it loses nothing, and its open label values (`provider`, `tool`,',
    '`platform`, `role`) go back to their caps. A series above 0 stays, and so does its value in the cap,',
    'for as long as something is open under it.',
    '',
    'Why a week: longer than a weekend or a holiday of idleness (a Monday does not start every counter',
    'from 0 again), and far longer than every range the shipped rules and dashboards query (1 h at',
    'most) and any `for:` of an alert, so expiry never removes a series a rule is still reading. A',
    'back end that bills active series (Grafana Cloud: 20 minutes after the last sample) stops billing',
    'a removed series 20 minutes after the sweep.',
    '',
    'Never expired: delivery and self metrics, bounded by construction and pre-initialised at 0 so',
    '`rate()` sees their first increment.',
    '',
    'Overflow series (open labels as `other`) expire like any other: they hold no slot of the cap, and',
    'an idle one would be exported, and billed, for nothing.',
  ];
}

const SEQUENCE_SEMANTICS = [
  '## Sequence accounting',
  '',
  'Each bridge-plugin instance numbers its events (`seq`, from 1, one more per event it queued), sends them oldest first,',
  'one request at a time, re-sends a batch whose response it lost, and leads its first post and every post after a failure',
  'with a heartbeat carrying `acked_seq` (the highest number a 2xx answered) and `boot` (a random token chosen when its',
  'numbering starts). The model, per instance: every event answered 202 is applied exactly once, or counted in a counter',
  'that says why it was not (`hermes_sidecar_events_duplicate_total`: applied before; `hermes_sidecar_events_discarded_total`',
  '`after_lost`: already counted lost; `beyond_memory`: older than what the sidecar remembers, so it may have been applied),',
  'and every number the sidecar never saw is either still open, applied late, or counted lost once: for any interleaving',
  'of retries, reorders, restarts under the same id, far jumps and evictions within the bounds below. A number never seen',
  'is never a duplicate. The rules are checked against a plain reference model by `test/accounting.properties.test.ts`.',
  '',
  'Per instance the sidecar keeps up to ' + `${MAX_EPOCHS}` + ' *epochs* (numbering runs). An epoch has a floor (below it: beyond memory), the',
  'first number it saw, its highest, and interval sets of numbers applied, settled lost and acknowledged elsewhere. Numbers',
  'between the floor and the first seen are *unclaimed*; numbers above the first seen, below the highest, in none of the',
  'sets are *open* (a gap). An event is matched to the epoch that holds its number, else to the nearest within',
  '`--sequence.window` (the current epoch on a tie); then:',
  '',
  '- applied before: a duplicate, not applied;',
  '- unclaimed: applied (never seen; not counted lost, since a sidecar restarted mid-stream cannot tell whether its predecessor',
  '  took it); open: applied and counted late (`hermes_sidecar_events_late_total`);',
  '- above the highest: applied; the numbers skipped open a gap;',
  '- settled lost: discarded, `after_lost` (applying it would make lost + applied count one event twice);',
  '- below the floor, acknowledged elsewhere, or in a forgotten range: discarded, `beyond_memory`;',
  '- no epoch within the window: a new epoch (`hermes_sidecar_sequence_resets_total{reason="jump"}`; nothing counted lost or',
  '  duplicate for the jump, so a poisoned `seq` of 2^53−1 costs one reset); the old epochs are kept, so a retried batch that',
  '  straddles the jump is recognised. The first event of an instance starts an epoch whose floor is a window below it.',
  '',
  'A heartbeat of the current boot settles: unclaimed numbers up to `acked_seq` are acknowledged elsewhere, unclaimed numbers',
  'above it are lost, numbers between the highest and `acked_seq` are acknowledged elsewhere, and then every open gap of the',
  'instance is lost (`hermes_sidecar_events_lost_total`; the plugin sends in order, so what it sent before the heartbeat has',
  'arrived). A first heartbeat starts an epoch just above its `acked_seq`, so a restarted sidecar counts the events the plugin',
  'lost meanwhile. Gaps also settle after `--sequence.reorder-seconds`, when a window behind the highest, when more than',
  `${MAX_OPEN_GAPS} are open in an epoch (the oldest first), when their epoch is superseded, and when the instance is forgotten.`,
  '',
  'A heartbeat with a new `boot` is a restart (`hermes_sidecar_sequence_resets_total{reason="restart"}`): every epoch settles',
  'and the instance starts again from its `acked_seq`, its host totals too. A heartbeat without `boot` whose `acked_seq` is 0',
  'while the instance has applied events is a restart as well (for senders of their own). A heartbeat of an earlier boot, one',
  'whose `acked_seq` is lower than one already seen, or one with a drop or refused-value total lower than stored is stale',
  '(`hermes_sidecar_heartbeats_stale_total{reason}`) and changes nothing: no gap settles, and no total, host description',
  '(`hermes_plugin_info`), interval or liveness moves.',
  '',
  'Host totals (`hermes_plugin_callbacks_dropped_total`, `hermes_plugin_values_refused_total`) follow one rule per instance and',
  'boot: each rise of a cumulative total is its increment, so totals that arrive out of order never count twice, and a new boot',
  'starts them from 0, so its whole first report counts. `hermes_plugin_instances` and `hermes_plugin_info` come from one',
  'liveness pass over the one instance table: live while the last heartbeat that counted (or, before any, the last event) is',
  'within three of its intervals (`interval_seconds`; 0 or absent keeps the last one, 5 s at first).',
  '',
  'An instance evicted from the table (or idle past `--sequence.instance-ttl`) settles its gaps and leaves a tombstone: its boot,',
  'highest `acked_seq`, host totals and each epoch\'s [floor, highest]. Coming back, its numbers up to those highests are',
  'beyond memory (counted, never applied twice) and its new numbers count as usual.',
  '',
  'Bounds (each counted when hit, in `hermes_sidecar_state_evictions_total{table}`):',
  '',
  '| state | bound | past it |',
  '|---|---|---|',
  `| epochs per instance | ${MAX_EPOCHS} | the least recently current becomes a forgotten range (its numbers beyond memory) |`,
  `| forgotten ranges per instance | ${MAX_FORGOTTEN_RANGES} | the oldest is dropped (\`plugin_epochs\`): its numbers could apply again |`,
  `| intervals per set per epoch | ${MAX_INTERVALS} | the floor moves past the lowest interval (\`plugin_intervals\`): below it is beyond memory |`,
  `| open gaps per epoch | ${MAX_OPEN_GAPS} | the oldest settles as lost |`,
  `| earlier boots per instance | ${MAX_PAST_BOOTS} | an older boot's heartbeat reads as a restart |`,
  '| instances | `--sequence.max-instances`, `--sequence.max-bytes` (ids and state) | least recently seen evicted (`plugin_instances`), leaving a tombstone |',
  '| tombstones | 4 × `--sequence.max-instances`, a quarter of `--sequence.max-bytes` | the oldest dropped (`plugin_tombstones`): that instance starts afresh |',
  '',
  'What the model assumes of a sender (the bridge plugin meets all of it): numbers of one boot grow by one per event and',
  'are re-sent unchanged; no line of an old numbering arrives after a new numbering\'s first heartbeat, and a heartbeat of an',
  'earlier boot only while the sidecar still remembers that boot; a sender without `boot` never sends `acked_seq` 0 after any of',
  'its events were applied, except when it starts numbering again.',
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
    ['heartbeat boot', '1–64 characters of A–Z, a–z, 0–9, `_`, `-`'],
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

export function renderMetricsDoc(declarers: ReadonlyMap<MetricKey, readonly string[]>): string {
  const specs: MetricSpec[] = Object.values(CATALOGUE);
  const lines = [
    '# Metrics',
    '',
    '<!-- Generated from src/catalogue.ts by `npm run docs:metrics`; do not edit by hand. -->',
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
  for (const [key, spec] of Object.entries(CATALOGUE) as [MetricKey, MetricSpec][]) {
    const owner = declarers.get(key)?.join(', ') ?? 'undeclared';
    owners.set(owner, [...(owners.get(owner) ?? []), spec.name]);
  }
  for (const [owner, names] of owners) lines.push(`| ${code(`src/${owner}.ts`)} | ${names.map(code).join(', ')} |`);
  lines.push('', '## Bucket sets', '', '| name | upper bounds |', '|---|---|');
  for (const [name, bounds] of Object.entries(DEFAULT_BUCKETS)) lines.push(`| ${code(name)} | ${bounds.join(', ')} |`);
  lines.push('', '## Label caps (cardinality guard)', '', '| label | default cap |', '|---|---|');
  for (const [label, cap] of Object.entries(DEFAULT_LABEL_CAPS)) lines.push(`| ${code(label)} | ${cap} |`);
  lines.push('', ...seriesExpiry(), '', ...HERMES_021_HOOKS, ...SEQUENCE_SEMANTICS, ...boundsTable(), ...historySection());
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL('../docs/metrics.md', import.meta.url), renderMetricsDoc(await declaringModules()));
}
