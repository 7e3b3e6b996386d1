/**
 * The "History from the session database" section of docs/metrics.md, from the backfill's own
 * family table (src/cli/backfill/history.ts), so the documented history cannot drift from it.
 */
import { HISTORY_FAMILIES, SESSION_DURATION_BUCKETS, SOURCE_LABEL, SOURCE_VALUE } from '../src/cli/backfill/history.js';
import { METRIC_NAMES } from '../src/catalogue.js';

const code = (text: string): string => `\`${text}\``;

/** Live metrics the database cannot feed, and why (it keeps totals, not calls). */
const NO_HISTORY = [
  ['`hermes_api_request_duration_seconds`, `hermes_api_time_to_first_chunk_seconds`, `hermes_tool_call_duration_seconds`, `hermes_turn_duration_seconds`, `hermes_approval_wait_seconds`, `hermes_subagent_duration_seconds`', 'latencies: the database keeps no call or tool durations'],
  ['`hermes_api_errors_total`, `hermes_api_retries_total`, `hermes_api_retries_exhausted_total`, `hermes_tool_errors_total`, `hermes_cost_unpriced_requests_total`', 'errors and retries: failed attempts leave no row (`api_call_count` counts calls, not their outcomes)'],
  ['`hermes_approval_requests_total`, `hermes_approval_decisions_total`, `hermes_approvals_pending`', 'approvals: not stored'],
  ['`hermes_api_requests_total`, `hermes_api_finish_reasons_total`, `hermes_tool_calls_total`', 'per-call outcome, status or provider: the history has `hermes_history_api_calls_total`, `hermes_history_finish_reasons_total` and `hermes_history_tool_calls_total` instead (no outcome, no status; finish reasons without provider or model)'],
  ['`hermes_turns_*`, `hermes_turn_*`, `hermes_subagents_*`, `hermes_agent_interrupts_total`, per-call histograms, every in-flight gauge, delivery and self metrics', 'turns, subagents and the sidecar\'s own state: not in the database'],
] as const;

export function historySection(): string[] {
  const lines = [
    '',
    '## History from the session database (backfill)',
    '',
    '`hermes-prometheus-sidecar backfill` (README, "History from the session database") rebuilds these counters from',
    'Hermes\' `state.db` files, with timestamps, as TSDB blocks. Every series carries',
    `${code(`${SOURCE_LABEL}="${SOURCE_VALUE}"`)}, ${code('profile')} (the Hermes profile), ${code('job')} and ${code('instance="backfill"')} (or what \`--label\` sets),`,
    'so it never shares a series with the live scrape. Label values pass the live label guard (same sanitizing, caps and',
    '`other` folding). A family under a live name means what the live one means, counted when the database dates it:',
    '',
    '| metric | type | labels (then `profile`, `source`, `job`, `instance`) | live name | meaning |',
    '|---|---|---|---|---|',
  ];
  for (const family of Object.values(HISTORY_FAMILIES)) {
    const live = METRIC_NAMES.includes(family.name) ? 'yes' : 'history only';
    lines.push(`| ${code(family.name)} | ${family.type} | ${family.labels.map(code).join(', ')} | ${live} | ${family.help} |`);
  }
  lines.push(
    '',
    `Session durations use the buckets ${SESSION_DURATION_BUCKETS.join(', ')} (seconds). Counts land at the end of the`,
    '`--step` (15 s) they fall into; each series starts with a 0 one step before its first increment and ends with its total',
    'at `--until`, so `increase(x[range] @ until)` over the whole history equals the database\'s totals exactly.',
    '',
    'Live metrics with no history, because the session database does not keep what feeds them:',
    '',
    '| metrics | why |',
    '|---|---|',
    ...NO_HISTORY.map(([names, why]) => `| ${names} | ${why} |`),
    '',
  );
  return lines;
}
