/**
 * "Hermes Agent overview": the dashboard an on-call SRE opens first.
 *
 * Top row answers "is it healthy right now"; the rows below follow the agent loop: provider
 * calls (RED), tokens, errors and retries, tools, approvals, turns and sessions, subagents,
 * runs and memory. Heavy provider queries read recording rules from rules/hermes-recording.yml
 * (5m windows); everything else uses $__rate_interval.
 */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { RECORDING as R } from '../rules/recording.js';
import {
  bargauge,
  buildDashboard,
  datasourceVariable,
  instanceVariable,
  jobVariable,
  modelVariable,
  providerVariable,
  quantileOf,
  rateOf,
  selected,
  stat,
  sumBy,
  timeseries,
  type RowSpec,
} from './common.js';

export const AGENT_OVERVIEW_UID = 'hermes-agent-overview';

const PROVIDER = 'provider=~"$provider"';
const MODEL = 'model=~"$model"';
/** Prompt tokens as METRICS.md defines them: uncached input plus cache reads and writes. */
const PROMPT_TOKEN_TYPES = 'token_type=~"input|cache_read|cache_write"';

/** A recorded provider series, filtered like a raw one. */
function recorded(name: string): string {
  return selected(name, PROVIDER, MODEL);
}

function recordedLatencyQuantile(quantile: number, labels: readonly string[]): string {
  return `histogram_quantile(${quantile}, ${sumBy(['le', ...labels], recorded(R.apiDurationBucketsRate))})`;
}

function recordedErrorRatio(labels: readonly string[]): string {
  return `${sumBy(labels, recorded(R.apiErrorsRate))} / (${sumBy(labels, recorded(R.apiRequestsRate))} > 0)`;
}

const atAGlance: RowSpec = {
  title: 'At a glance',
  panels: [
    stat({
      title: 'API request rate',
      description: 'Finished provider API attempts per second (recording rule, 5m window).',
      unit: 'reqps',
      width: 3,
      queries: [{ expr: sumBy([], recorded(R.apiRequestsRate)), legend: 'requests' }],
    }),
    stat({
      title: 'API error ratio',
      description: 'Share of provider API attempts that failed over the last 5 minutes; "No data" means no traffic.',
      unit: 'percentunit',
      width: 3,
      queries: [
        {
          expr: `(${sumBy([], recorded(R.apiErrorsRate))} or vector(0)) / (${sumBy([], recorded(R.apiRequestsRate))} > 0)`,
          legend: 'error ratio',
        },
      ],
    }),
    stat({
      title: 'API latency p95',
      description: 'p95 latency of successful provider calls, retries included (recording rule, 5m window).',
      unit: 's',
      width: 3,
      queries: [{ expr: recordedLatencyQuantile(0.95, []), legend: 'p95' }],
    }),
    stat({
      title: 'API calls in flight',
      description: 'Provider API attempts started and not finished yet.',
      unit: 'short',
      width: 3,
      queries: [{ expr: sumBy([], selected('hermes_api_requests_in_flight', PROVIDER)), legend: 'in flight' }],
    }),
    stat({
      title: 'Tool calls in flight',
      description: 'Tool calls started and not finished yet.',
      unit: 'short',
      width: 3,
      queries: [{ expr: sumBy([], selected('hermes_tool_calls_in_flight')), legend: 'in flight' }],
    }),
    stat({
      title: 'Approvals pending',
      description: 'Approval requests waiting for a decision.',
      unit: 'short',
      width: 3,
      queries: [{ expr: sumBy([], selected('hermes_approvals_pending')), legend: 'pending' }],
    }),
    stat({
      title: 'Active sessions',
      description: 'Sessions started and not finalized yet (idle sessions expire after the session TTL).',
      unit: 'short',
      width: 3,
      queries: [{ expr: sumBy([], selected('hermes_sessions_active')), legend: 'sessions' }],
    }),
    stat({
      title: 'Active subagents',
      description: 'Subagents started and not stopped yet.',
      unit: 'short',
      width: 3,
      queries: [{ expr: sumBy([], selected('hermes_subagents_active')), legend: 'subagents' }],
    }),
  ],
};

const providerCalls: RowSpec = {
  title: 'Provider API calls',
  panels: [
    timeseries({
      title: 'Request rate by provider and model',
      description: 'Finished provider API attempts per second, success and error together (recording rule, 5m window).',
      unit: 'reqps',
      min: 0,
      queries: [
        { expr: sumBy(['provider', 'model'], recorded(R.apiRequestsRate)), legend: '{{provider}} / {{model}}' },
      ],
    }),
    timeseries({
      title: 'Error ratio by provider and model',
      description: 'Share of provider API attempts that failed (recording rules, 5m window). Retried attempts count, so a high ratio may still mean successful turns; see retries exhausted.',
      unit: 'percentunit',
      min: 0,
      queries: [{ expr: recordedErrorRatio(['provider', 'model']), legend: '{{provider}} / {{model}}' }],
    }),
    timeseries({
      title: 'Latency p50 / p95 / p99',
      description: 'Latency of successful provider calls across the selection. Hermes times a call from its first attempt, so retries are included.',
      unit: 's',
      min: 0,
      queries: [
        { expr: recordedLatencyQuantile(0.5, []), legend: 'p50' },
        { expr: recordedLatencyQuantile(0.95, []), legend: 'p95' },
        { expr: recordedLatencyQuantile(0.99, []), legend: 'p99' },
      ],
    }),
    timeseries({
      title: 'Latency p95 by provider and model',
      description: 'p95 latency of successful provider calls per provider and model (recording rule, 5m window).',
      unit: 's',
      min: 0,
      queries: [
        { expr: recordedLatencyQuantile(0.95, ['provider', 'model']), legend: '{{provider}} / {{model}}' },
      ],
    }),
    timeseries({
      title: 'Latency p95 by outcome',
      description: 'p95 duration of successful and failed provider attempts: slow failures point at timeouts, fast ones at refusals.',
      unit: 's',
      min: 0,
      queries: [
        {
          expr: quantileOf(0.95, 'hermes_api_request_duration_seconds', ['outcome'], PROVIDER, MODEL),
          legend: '{{outcome}}',
        },
      ],
    }),
    timeseries({
      title: 'Time to first chunk p50 / p95',
      description: 'Time from the start of a streamed provider call to its first chunk; only streaming calls report it.',
      unit: 's',
      min: 0,
      queries: [
        { expr: quantileOf(0.5, 'hermes_api_time_to_first_chunk_seconds', [], PROVIDER, MODEL), legend: 'p50' },
        { expr: quantileOf(0.95, 'hermes_api_time_to_first_chunk_seconds', [], PROVIDER, MODEL), legend: 'p95' },
      ],
    }),
    timeseries({
      title: 'Requests by kind and outcome',
      description: 'Provider API attempts per second: main agent-loop calls versus auxiliary calls (titles, compression, smart approval), by outcome.',
      unit: 'reqps',
      min: 0,
      stacked: true,
      queries: [
        {
          expr: sumBy(['kind', 'outcome'], rateOf('hermes_api_requests_total', PROVIDER, MODEL)),
          legend: '{{kind}} {{outcome}}',
        },
      ],
    }),
    timeseries({
      title: 'Finish reasons',
      description: 'Successful provider calls per second by finish reason; a rise in "length" or "content_filter" means truncated or refused answers.',
      unit: 'reqps',
      min: 0,
      stacked: true,
      queries: [
        {
          expr: sumBy(['finish_reason'], rateOf('hermes_api_finish_reasons_total', PROVIDER, MODEL)),
          legend: '{{finish_reason}}',
        },
      ],
    }),
    timeseries({
      title: 'API calls in flight by provider',
      description: 'Provider API attempts started and not finished, by kind and provider; a plateau means hung calls.',
      unit: 'short',
      min: 0,
      queries: [
        {
          expr: sumBy(['kind', 'provider'], selected('hermes_api_requests_in_flight', PROVIDER)),
          legend: '{{kind}} {{provider}}',
        },
      ],
    }),
  ],
};

const tokens: RowSpec = {
  title: 'Tokens',
  panels: [
    timeseries({
      title: 'Tokens per second by type',
      description: 'Tokens reported by providers. Reasoning tokens are a subset of output tokens, so do not add them up.',
      unit: 'suffix:tok/s',
      width: 6,
      min: 0,
      queries: [{ expr: sumBy(['token_type'], rateOf('hermes_tokens_total', PROVIDER, MODEL)), legend: '{{token_type}}' }],
    }),
    timeseries({
      title: 'Prompt tokens per second by provider and model',
      description: 'Prompt tokens (uncached input, cache reads and cache writes) per second by provider and model.',
      unit: 'suffix:tok/s',
      width: 6,
      min: 0,
      queries: [
        {
          expr: sumBy(['provider', 'model'], rateOf('hermes_tokens_total', PROVIDER, MODEL, PROMPT_TOKEN_TYPES)),
          legend: '{{provider}} / {{model}}',
        },
      ],
    }),
    timeseries({
      title: 'Cache-hit ratio by provider and model',
      description: 'Share of prompt tokens served from the provider cache: cache_read / (input + cache_read + cache_write).',
      unit: 'percentunit',
      width: 6,
      min: 0,
      max: 1,
      queries: [
        {
          expr: `${sumBy(['provider', 'model'], rateOf('hermes_tokens_total', PROVIDER, MODEL, 'token_type="cache_read"'))} / (${sumBy(['provider', 'model'], rateOf('hermes_tokens_total', PROVIDER, MODEL, PROMPT_TOKEN_TYPES))} > 0)`,
          legend: '{{provider}} / {{model}}',
        },
      ],
    }),
    timeseries({
      title: 'Prompt size p50 / p95',
      description: 'Prompt tokens per successful provider call (context size); a steady climb means growing conversations.',
      unit: 'suffix:tok',
      width: 6,
      min: 0,
      queries: [
        { expr: quantileOf(0.5, 'hermes_api_request_prompt_tokens', [], PROVIDER, MODEL), legend: 'p50' },
        { expr: quantileOf(0.95, 'hermes_api_request_prompt_tokens', [], PROVIDER, MODEL), legend: 'p95' },
      ],
    }),
  ],
};

const errorsAndRetries: RowSpec = {
  title: 'Errors and retries',
  panels: [
    timeseries({
      title: 'API errors by reason',
      description: 'Failed provider API attempts per second by provider and failover reason (rate_limit, timeout, server_error, ...).',
      unit: 'reqps',
      min: 0,
      width: 6,
      queries: [
        {
          expr: sumBy(['provider', 'reason'], rateOf('hermes_api_errors_total', PROVIDER, MODEL)),
          legend: '{{provider}} {{reason}}',
        },
      ],
    }),
    timeseries({
      title: 'API errors by status code',
      description: 'Failed provider API attempts per second by HTTP status code ("none" when no response came) and retryability.',
      unit: 'reqps',
      min: 0,
      width: 6,
      queries: [
        {
          expr: sumBy(['status_code', 'retryable'], rateOf('hermes_api_errors_total', PROVIDER, MODEL)),
          legend: '{{status_code}} retryable={{retryable}}',
        },
      ],
    }),
    timeseries({
      title: 'Retries by reason',
      description: 'Failed attempts per second after which Hermes retried the call.',
      unit: 'reqps',
      min: 0,
      width: 6,
      queries: [
        {
          expr: sumBy(['provider', 'reason'], rateOf('hermes_api_retries_total', PROVIDER, MODEL)),
          legend: '{{provider}} {{reason}}',
        },
      ],
    }),
    timeseries({
      title: 'Retries exhausted by reason',
      description: 'Logical calls per second that failed for good (not retryable, or out of retries): user-visible failures.',
      unit: 'reqps',
      min: 0,
      width: 6,
      queries: [
        {
          expr: sumBy(['provider', 'reason'], rateOf('hermes_api_retries_exhausted_total', PROVIDER, MODEL)),
          legend: '{{provider}} {{reason}}',
        },
      ],
    }),
  ],
};

const tools: RowSpec = {
  title: 'Tools',
  panels: [
    timeseries({
      title: 'Tool calls by status',
      description: 'Finished tool calls per second by status (ok, error, blocked, cancelled, timeout, other).',
      unit: 'ops',
      min: 0,
      stacked: true,
      queries: [{ expr: sumBy(['status'], rateOf('hermes_tool_calls_total')), legend: '{{status}}' }],
    }),
    timeseries({
      title: 'Tool latency p95 by tool',
      description: 'p95 tool call duration per tool.',
      unit: 's',
      min: 0,
      queries: [{ expr: quantileOf(0.95, 'hermes_tool_call_duration_seconds', ['tool']), legend: '{{tool}}' }],
    }),
    bargauge({
      title: 'Top failing tools',
      description: 'The ten tools with the most calls ending in error or timeout, ranked by their mean rate over the time range.',
      unit: 'ops',
      min: 0,
      queries: [
        {
          expr: `topk(10, ${sumBy(['tool'], rateOf('hermes_tool_calls_total', 'status=~"error|timeout"'))})`,
          legend: '{{tool}}',
        },
      ],
    }),
    timeseries({
      title: 'Tool errors by error type',
      description: 'Tool calls per second that did not finish ok, by error type.',
      unit: 'ops',
      width: 12,
      min: 0,
      stacked: true,
      queries: [{ expr: sumBy(['error_type'], rateOf('hermes_tool_errors_total')), legend: '{{error_type}}' }],
    }),
    timeseries({
      title: 'Tool calls in flight by tool',
      description: 'Tool calls started and not finished, per tool; a plateau means a hung tool.',
      unit: 'short',
      width: 12,
      min: 0,
      queries: [{ expr: sumBy(['tool'], selected('hermes_tool_calls_in_flight')), legend: '{{tool}}' }],
    }),
  ],
};

const approvals: RowSpec = {
  title: 'Approvals',
  panels: [
    timeseries({
      title: 'Approval requests by pattern',
      description: 'Approval requests per second by surface and dangerous-command pattern.',
      unit: 'ops',
      min: 0,
      width: 6,
      queries: [
        {
          expr: sumBy(['surface', 'pattern_key'], rateOf('hermes_approval_requests_total')),
          legend: '{{surface}} {{pattern_key}}',
        },
      ],
    }),
    timeseries({
      title: 'Approval decisions by choice',
      description: 'Approval decisions per second by choice (once, session, always, deny, timeout, ...).',
      unit: 'ops',
      min: 0,
      width: 6,
      stacked: true,
      queries: [{ expr: sumBy(['choice'], rateOf('hermes_approval_decisions_total')), legend: '{{choice}}' }],
    }),
    timeseries({
      title: 'Approval wait p50 / p95',
      description: 'Time from approval request to decision, by surface; the agent is blocked meanwhile.',
      unit: 's',
      min: 0,
      width: 6,
      queries: [
        { expr: quantileOf(0.5, 'hermes_approval_wait_seconds', ['surface']), legend: 'p50 {{surface}}' },
        { expr: quantileOf(0.95, 'hermes_approval_wait_seconds', ['surface']), legend: 'p95 {{surface}}' },
      ],
    }),
    timeseries({
      title: 'Approvals pending by surface',
      description: 'Approval requests waiting for a decision, by surface.',
      unit: 'short',
      min: 0,
      width: 6,
      queries: [{ expr: sumBy(['surface'], selected('hermes_approvals_pending')), legend: '{{surface}}' }],
    }),
  ],
};

const turnsAndSessions: RowSpec = {
  title: 'Turns and sessions',
  panels: [
    timeseries({
      title: 'Turns started and finished by outcome',
      description: 'User turns per second: started, and finished by outcome (completed, failed, interrupted, incomplete).',
      unit: 'ops',
      min: 0,
      queries: [
        { expr: sumBy([], rateOf('hermes_turns_started_total', MODEL)), legend: 'started' },
        { expr: sumBy(['outcome'], rateOf('hermes_turns_finished_total', MODEL)), legend: 'finished {{outcome}}' },
      ],
    }),
    timeseries({
      title: 'Turn exit reasons',
      description: 'Finished turns per second by exit reason; "max_iterations_reached" means the agent hit its iteration cap.',
      unit: 'ops',
      min: 0,
      stacked: true,
      queries: [
        { expr: sumBy(['exit_reason'], rateOf('hermes_turns_finished_total', MODEL)), legend: '{{exit_reason}}' },
      ],
    }),
    timeseries({
      title: 'Turn duration p50 / p95',
      description: 'Duration of a user turn from the first model call to its end, by platform.',
      unit: 's',
      min: 0,
      queries: [
        { expr: quantileOf(0.5, 'hermes_turn_duration_seconds', ['platform']), legend: 'p50 {{platform}}' },
        { expr: quantileOf(0.95, 'hermes_turn_duration_seconds', ['platform']), legend: 'p95 {{platform}}' },
      ],
    }),
    timeseries({
      title: 'API and tool calls per turn p50 / p95',
      description: 'Provider attempts and tool calls per finished turn; a climbing p95 means the agent loops.',
      unit: 'short',
      min: 0,
      queries: [
        { expr: quantileOf(0.5, 'hermes_turn_api_calls', []), legend: 'API calls p50' },
        { expr: quantileOf(0.95, 'hermes_turn_api_calls', []), legend: 'API calls p95' },
        { expr: quantileOf(0.5, 'hermes_turn_tool_calls', []), legend: 'tool calls p50' },
        { expr: quantileOf(0.95, 'hermes_turn_tool_calls', []), legend: 'tool calls p95' },
      ],
    }),
    timeseries({
      title: 'Sessions started, finalized and reset',
      description: 'Session lifecycle hooks per second by platform.',
      unit: 'ops',
      min: 0,
      queries: [
        { expr: sumBy(['platform'], rateOf('hermes_sessions_started_total')), legend: 'started {{platform}}' },
        { expr: sumBy(['platform'], rateOf('hermes_sessions_finalized_total')), legend: 'finalized {{platform}}' },
        { expr: sumBy(['platform'], rateOf('hermes_session_resets_total')), legend: 'reset {{platform}}' },
        { expr: sumBy(['event'], rateOf('hermes_session_events_total')), legend: 'session_event {{event}}' },
      ],
    }),
    timeseries({
      title: 'Active sessions by platform',
      description: 'Sessions started and not finalized yet, by platform.',
      unit: 'short',
      min: 0,
      queries: [{ expr: sumBy(['platform'], selected('hermes_sessions_active')), legend: '{{platform}}' }],
    }),
  ],
};

const subagents: RowSpec = {
  title: 'Subagents',
  panels: [
    timeseries({
      title: 'Subagents started and finished',
      description: 'Subagents per second: started by role, finished by role and status.',
      unit: 'ops',
      min: 0,
      queries: [
        { expr: sumBy(['role'], rateOf('hermes_subagents_started_total')), legend: 'started {{role}}' },
        {
          expr: sumBy(['role', 'status'], rateOf('hermes_subagents_finished_total')),
          legend: 'finished {{role}} {{status}}',
        },
      ],
    }),
    timeseries({
      title: 'Subagent duration p95 by role',
      description: 'p95 subagent run duration by role.',
      unit: 's',
      min: 0,
      queries: [{ expr: quantileOf(0.95, 'hermes_subagent_duration_seconds', ['role']), legend: '{{role}}' }],
    }),
    timeseries({
      title: 'Active subagents by role',
      description: 'Subagents started and not stopped yet, by role.',
      unit: 'short',
      min: 0,
      queries: [{ expr: sumBy(['role'], selected('hermes_subagents_active')), legend: '{{role}}' }],
    }),
  ],
};

const runsAndMemory: RowSpec = {
  title: 'Agent runs and memory',
  panels: [
    timeseries({
      title: 'Agent runs by stop reason',
      description: 'Finished agent runs per second (envelope agent_end) by stop reason.',
      unit: 'ops',
      min: 0,
      width: 6,
      stacked: true,
      queries: [{ expr: sumBy(['stop_reason'], rateOf('hermes_agent_runs_total')), legend: '{{stop_reason}}' }],
    }),
    timeseries({
      title: 'Agent run duration p50 / p95',
      description: 'Agent run duration (envelope agent_end).',
      unit: 's',
      min: 0,
      width: 6,
      queries: [
        { expr: quantileOf(0.5, 'hermes_agent_run_duration_seconds', []), legend: 'p50' },
        { expr: quantileOf(0.95, 'hermes_agent_run_duration_seconds', []), legend: 'p95' },
      ],
    }),
    timeseries({
      title: 'Memory writes',
      description: 'Memory writes per second (envelope memory_write) by memory provider and action.',
      unit: 'ops',
      min: 0,
      width: 6,
      queries: [
        {
          expr: sumBy(['memory_provider', 'action'], rateOf('hermes_memory_writes_total')),
          legend: '{{memory_provider}} {{action}}',
        },
      ],
    }),
    timeseries({
      title: 'Memory write throughput',
      description: 'Bytes written to memory per second by memory provider and action.',
      unit: 'Bps',
      min: 0,
      width: 6,
      queries: [
        {
          expr: sumBy(['memory_provider', 'action'], rateOf('hermes_memory_write_bytes_total')),
          legend: '{{memory_provider}} {{action}}',
        },
      ],
    }),
  ],
};

export function agentOverviewDashboard(): Dashboard {
  return buildDashboard({
    uid: AGENT_OVERVIEW_UID,
    title: 'Hermes Agent overview',
    description:
      'Hermes Agent health from the observer-hook sidecar: provider calls, tokens, tools, approvals, turns, sessions and subagents.',
    variables: [datasourceVariable(), jobVariable(), instanceVariable(), providerVariable(), modelVariable()],
    rows: [atAGlance, providerCalls, tokens, errorsAndRetries, tools, approvals, turnsAndSessions, subagents, runsAndMemory],
  });
}
