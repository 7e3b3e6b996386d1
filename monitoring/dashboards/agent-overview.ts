/**
 * "Hermes Agent overview": the dashboard an on-call SRE opens first.
 *
 * Top row answers "is it healthy right now"; the rows below follow the agent loop: provider
 * calls (RED), tokens, cost, errors and retries, tools, approvals, turns and sessions and
 * subagents. Metrics only the envelope variant feeds (docs/metrics.md) have no panel. Heavy
 * provider queries read recording rules from rules/hermes-recording.yml (5m windows);
 * everything else uses $__rate_interval.
 */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { apiDurationRateRecord, RECORDING as R } from '../rules/recording.js';
import { quantileLabels } from '../promql.js';
import {
  bargauge,
  buildDashboard,
  RANGE,
  datasourceVariable,
  instanceVariable,
  jobVariable,
  modelVariable,
  providerVariable,
  stat,
  sumBy,
  timeseries,
  promql,
  type Promql,
  type RowSpec,
} from './common.js';
import type { MonitoringConfig } from '../config.js';
import { SLO_PANELS, sloRow } from './slo-row.js';
import { SLO_RECORDS } from '../rules/slos.js';
import { apiErrorRatioSteps, neutral, redBelow, redFrom } from './thresholds.js';

export const AGENT_OVERVIEW_UID = 'hermes-agent-overview';

const PROVIDER = 'provider=~"$provider"';
const MODEL = 'model=~"$model"';
/** Prompt tokens as docs/metrics.md defines them: uncached input plus cache reads and writes. */
const PROMPT_TOKEN_TYPES = 'token_type=~"input|cache_read|cache_write"';

/** A recorded provider series, filtered like a raw one. */
function recorded(q: Promql, name: string): string {
  return q.selected(name, PROVIDER, MODEL);
}

function recordedLatencyQuantile(q: Promql, quantile: number, labels: readonly string[]): string {
  return `histogram_quantile(${quantile}, ${sumBy(quantileLabels(labels, q.histograms), recorded(q, apiDurationRateRecord(q.histograms)))})`;
}

function recordedErrorRatio(q: Promql, labels: readonly string[]): string {
  return `${sumBy(labels, recorded(q, R.apiErrorsRate))} / (${sumBy(labels, recorded(q, R.apiRequestsRate))} > 0)`;
}

/** `sum(increase(hermes_cost_usd_total[1h]))` by `labels`: the money of the last hour, not a rate scaled up. */
function spendLastHour(q: Promql, labels: readonly string[]): string {
  return sumBy(labels, `increase(${q.selected('hermes_cost_usd_total', PROVIDER, MODEL)}[1h])`);
}

/** Share of tool calls ending in error or timeout per tool, over the rate window; tools without failures drop out. */
function toolFailureRatio(q: Promql, labels: readonly string[]): string {
  const failed = sumBy(labels, q.rateOf('hermes_tool_calls_total', 'status=~"error|timeout"'));
  return `(${failed} / (${sumBy(labels, q.rateOf('hermes_tool_calls_total'))} > 0))`;
}

/**
 * The first screen: is it broken (the alerting ratios, coloured at the alerts' levels, and the
 * error budget), since when and where (the ratios over time by provider and model, and by tool),
 * and what the last hour cost (in total and by provider and model).
 */
const atAGlance = (q: Promql, config: MonitoringConfig): RowSpec => ({
  title: 'At a glance',
  panels: [
    stat({
      title: 'API error ratio',
      description: `Share of provider API attempts that failed over the last 5 minutes; orange at ${String(config.thresholds.apiErrorRatioWarning)}, red at ${String(config.thresholds.apiErrorRatioCritical)} (the levels of HermesApiErrorRatioHigh). "No data" means no traffic.`,
      unit: 'percentunit',
      width: 4,
      thresholds: apiErrorRatioSteps(config),
      queries: [
        {
          expr: `(${sumBy([], recorded(q, R.apiErrorsRate))} or vector(0)) / (${sumBy([], recorded(q, R.apiRequestsRate))} > 0)`,
          legend: 'error ratio',
        },
      ],
    }),
    stat({
      title: 'Tool failure ratio',
      description: `Share of tool calls ending in error or timeout; red at ${String(config.thresholds.toolFailureRatio)} (HermesToolFailureRatioHigh). "No data" means no tool calls.`,
      unit: 'percentunit',
      width: 4,
      thresholds: redFrom(config.thresholds.toolFailureRatio),
      queries: [{ expr: `(${sumBy([], q.rateOf('hermes_tool_calls_total', 'status=~"error|timeout"'))} or vector(0)) / (${sumBy([], q.rateOf('hermes_tool_calls_total'))} > 0)`, legend: 'failure ratio' }],
    }),
    stat({
      title: SLO_PANELS.worstBudgetLeft,
      description: 'The least 30-day error budget left of any SLO, provider, tool and sidecar of the selection; red below 0 (the objective is missed). The SLO row has each one.',
      unit: 'percentunit',
      width: 4,
      thresholds: redBelow(0),
      queries: [{ expr: `min(${q.selected(SLO_RECORDS.budgetRemaining)})`, legend: 'budget left', instant: true }],
    }),
    stat({
      title: 'API latency p95',
      description: `p95 latency of successful provider calls, retries included (recording rule, 5m window); red at ${String(config.thresholds.apiLatencyP95Seconds)} s (HermesApiLatencyHigh).`,
      unit: 's',
      width: 4,
      thresholds: redFrom(config.thresholds.apiLatencyP95Seconds),
      queries: [{ expr: recordedLatencyQuantile(q, 0.95, []), legend: 'p95' }],
    }),
    stat({
      title: 'Spend in the last hour',
      description: `USD spent in the last hour across the selection; red at ${String(config.thresholds.costUsdPerHour)} USD, the level HermesSpendRateHigh alerts at per sidecar.`,
      unit: 'currencyUSD',
      width: 4,
      thresholds: redFrom(config.thresholds.costUsdPerHour),
      queries: [{ expr: spendLastHour(q, []), legend: 'USD', instant: true }],
    }),
    stat({
      title: 'API request rate',
      description: 'Finished provider API attempts per second (recording rule, 5m window); neither good nor bad by itself.',
      unit: 'reqps',
      width: 4,
      thresholds: neutral(),
      queries: [{ expr: sumBy([], recorded(q, R.apiRequestsRate)), legend: 'requests' }],
    }),
    timeseries({
      title: 'Error ratio by provider and model',
      description: `Share of provider API attempts that failed, by provider and model (recording rules, 5m window); lines at the alert levels ${String(config.thresholds.apiErrorRatioWarning)} and ${String(config.thresholds.apiErrorRatioCritical)}. Retried attempts count, so a high ratio may still mean successful turns; see retries exhausted.`,
      unit: 'percentunit',
      min: 0,
      width: 8,
      thresholdLines: apiErrorRatioSteps(config),
      queries: [{ expr: recordedErrorRatio(q, ['provider', 'model']), legend: '{{provider}} / {{model}}' }],
    }),
    timeseries({
      title: 'Tool failure ratio by tool',
      description: `Share of calls ending in error or timeout, per tool with any failure; a line at the alert level ${String(config.thresholds.toolFailureRatio)}.`,
      unit: 'percentunit',
      min: 0,
      width: 8,
      thresholdLines: redFrom(config.thresholds.toolFailureRatio),
      queries: [{ expr: `${toolFailureRatio(q, ['tool'])} > 0`, legend: '{{tool}}' }],
    }),
    bargauge({
      title: 'Spend in the last hour by provider and model',
      description: 'USD spent in the last hour, the ten most expensive provider and model pairs of the selection.',
      unit: 'currencyUSD',
      min: 0,
      width: 8,
      thresholds: neutral(),
      queries: [{ expr: `topk(10, ${spendLastHour(q, ['provider', 'model'])})`, legend: '{{provider}} / {{model}}' }],
    }),
  ],
});

/** What is in flight and how many sessions and subagents run: counts, neither good nor bad by themselves. */
const load = (q: Promql): RowSpec => ({
  title: 'Load',
  panels: [
    stat({
      title: 'API calls in flight',
      description: 'Provider API attempts started and not finished yet.',
      unit: 'short',
      width: 4,
      thresholds: neutral(),
      queries: [{ expr: sumBy([], q.selected('hermes_api_requests_in_flight', PROVIDER)), legend: 'in flight' }],
    }),
    stat({
      title: 'Tool calls in flight',
      description: 'Tool calls started and not finished yet.',
      unit: 'short',
      width: 4,
      thresholds: neutral(),
      queries: [{ expr: sumBy([], q.selected('hermes_tool_calls_in_flight')), legend: 'in flight' }],
    }),
    stat({
      title: 'Approvals pending',
      description: 'Approval requests waiting for a decision.',
      unit: 'short',
      width: 4,
      thresholds: neutral(),
      queries: [{ expr: sumBy([], q.selected('hermes_approvals_pending')), legend: 'pending' }],
    }),
    stat({
      title: 'Active sessions',
      description: 'Sessions started and not finalized yet (idle sessions expire after the session TTL).',
      unit: 'short',
      width: 4,
      thresholds: neutral(),
      queries: [{ expr: sumBy([], q.selected('hermes_sessions_active')), legend: 'sessions' }],
    }),
    stat({
      title: 'Active subagents',
      description: 'Subagents started and not stopped yet.',
      unit: 'short',
      width: 4,
      thresholds: neutral(),
      queries: [{ expr: sumBy([], q.selected('hermes_subagents_active')), legend: 'subagents' }],
    }),
  ],
});

const providerCalls = (q: Promql): RowSpec => ({
  title: 'Provider API calls',
  panels: [
    timeseries({
      title: 'Request rate by provider and model',
      description: 'Finished provider API attempts per second, success and error together (recording rule, 5m window).',
      unit: 'reqps',
      min: 0,
      queries: [
        { expr: sumBy(['provider', 'model'], recorded(q, R.apiRequestsRate)), legend: '{{provider}} / {{model}}' },
      ],
    }),
    timeseries({
      title: 'Latency p50 / p95 / p99',
      description: 'Latency of successful provider calls across the selection. Hermes times a call from its first attempt, so retries are included.',
      unit: 's',
      min: 0,
      queries: [
        { expr: recordedLatencyQuantile(q, 0.5, []), legend: 'p50' },
        { expr: recordedLatencyQuantile(q, 0.95, []), legend: 'p95' },
        { expr: recordedLatencyQuantile(q, 0.99, []), legend: 'p99' },
      ],
    }),
    timeseries({
      title: 'Latency p95 by provider and model',
      description: 'p95 latency of successful provider calls per provider and model (recording rule, 5m window).',
      unit: 's',
      min: 0,
      queries: [
        { expr: recordedLatencyQuantile(q, 0.95, ['provider', 'model']), legend: '{{provider}} / {{model}}' },
      ],
    }),
    timeseries({
      title: 'Latency p95 by outcome',
      description: 'p95 duration of successful and failed provider attempts: slow failures point at timeouts, fast ones at refusals.',
      unit: 's',
      min: 0,
      queries: [
        {
          expr: q.quantileOf(0.95, 'hermes_api_request_duration_seconds', ['outcome'], PROVIDER, MODEL),
          legend: '{{outcome}}',
        },
      ],
    }),
    timeseries({
      title: 'Time to first chunk p50 / p95',
      description: 'Time from the start of a streamed provider call to its first chunk, for calls that succeeded; only streaming calls report it.',
      unit: 's',
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_api_time_to_first_chunk_seconds', [], PROVIDER, MODEL, 'outcome="success"'), legend: 'p50' },
        { expr: q.quantileOf(0.95, 'hermes_api_time_to_first_chunk_seconds', [], PROVIDER, MODEL, 'outcome="success"'), legend: 'p95' },
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
          expr: sumBy(['kind', 'outcome'], q.rateOf('hermes_api_requests_total', PROVIDER, MODEL)),
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
          expr: sumBy(['finish_reason'], q.rateOf('hermes_api_finish_reasons_total', PROVIDER, MODEL)),
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
          expr: sumBy(['kind', 'provider'], q.selected('hermes_api_requests_in_flight', PROVIDER)),
          legend: '{{kind}} {{provider}}',
        },
      ],
    }),
  ],
});

const tokens = (q: Promql): RowSpec => ({
  title: 'Tokens',
  panels: [
    timeseries({
      title: 'Tokens per second by type',
      description: 'Tokens reported by providers. Reasoning tokens are a subset of output tokens, so do not add them up.',
      unit: 'cps',
      width: 6,
      min: 0,
      queries: [{ expr: sumBy(['token_type'], q.rateOf('hermes_tokens_total', PROVIDER, MODEL)), legend: '{{token_type}}' }],
    }),
    timeseries({
      title: 'Prompt tokens per second by provider and model',
      description: 'Prompt tokens (uncached input, cache reads and cache writes) per second by provider and model.',
      unit: 'cps',
      width: 6,
      min: 0,
      queries: [
        {
          expr: sumBy(['provider', 'model'], q.rateOf('hermes_tokens_total', PROVIDER, MODEL, PROMPT_TOKEN_TYPES)),
          legend: '{{provider}} / {{model}}',
        },
      ],
    }),
    timeseries({
      title: 'Cache-hit ratio by provider and model',
      description: 'Share of prompt tokens served from the provider cache: cache_read / (input + cache_read + cache_write) (recording rules, 5m window).',
      unit: 'percentunit',
      width: 6,
      min: 0,
      max: 1,
      queries: [
        {
          expr: `${sumBy(['provider', 'model'], recorded(q, R.cacheReadTokensRate))} / (${sumBy(['provider', 'model'], recorded(q, R.promptTokensRate))} > 0)`,
          legend: '{{provider}} / {{model}}',
        },
      ],
    }),
    timeseries({
      title: 'Prompt size p50 / p95',
      description: 'Prompt tokens per successful provider call (context size); a steady climb means growing conversations.',
      unit: 'short',
      width: 6,
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_api_request_prompt_tokens', [], PROVIDER, MODEL), legend: 'p50' },
        { expr: q.quantileOf(0.95, 'hermes_api_request_prompt_tokens', [], PROVIDER, MODEL), legend: 'p95' },
      ],
    }),
    timeseries({
      title: 'Context window use p50 / p95',
      description: 'Prompt tokens over the context window per successful call (Hermes 0.21 and later): near 1 the agent compresses or fails.',
      unit: 'percentunit',
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_api_context_utilization_ratio', [], PROVIDER, MODEL), legend: 'p50' },
        { expr: q.quantileOf(0.95, 'hermes_api_context_utilization_ratio', [], PROVIDER, MODEL), legend: 'p95' },
      ],
    }),
  ],
});

/** USD per hour from a per-second rate. */
const PER_HOUR = '* 3600';

const cost = (q: Promql): RowSpec => ({
  title: 'Cost',
  panels: [
    timeseries({
      title: 'Spend rate by provider and model',
      description: 'USD per hour by provider and model.',
      unit: 'currencyUSD',
      min: 0,
      width: 8,
      stacked: true,
      queries: [
        {
          expr: `${sumBy(['provider', 'model'], q.rateOf('hermes_cost_usd_total', PROVIDER, MODEL))} ${PER_HOUR}`,
          legend: '{{provider}} / {{model}}',
        },
      ],
    }),
    timeseries({
      title: 'Spend rate by pricing',
      description: 'USD per hour by how calls were priced: hermes (Hermes\' own pricing), config (the sidecar\'s price table), included (subscription, 0).',
      unit: 'currencyUSD',
      min: 0,
      width: 8,
      stacked: true,
      queries: [{ expr: `${sumBy(['pricing'], q.rateOf('hermes_cost_usd_total', PROVIDER, MODEL))} ${PER_HOUR}`, legend: '{{pricing}}' }],
    }),
    timeseries({
      title: 'Unpriced calls',
      description: 'Successful calls per second that neither Hermes nor the price table could price (not in the spend): add the route to prices: in the config file.',
      unit: 'reqps',
      min: 0,
      width: 8,
      queries: [
        {
          expr: sumBy(['provider', 'model', 'reason'], q.rateOf('hermes_cost_unpriced_requests_total', PROVIDER, MODEL)),
          legend: '{{provider}} / {{model}} {{reason}}',
        },
      ],
    }),
  ],
});

const errorsAndRetries = (q: Promql): RowSpec => ({
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
          expr: sumBy(['provider', 'reason'], q.rateOf('hermes_api_errors_total', PROVIDER, MODEL)),
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
          expr: sumBy(['status_code', 'retryable'], q.rateOf('hermes_api_errors_total', PROVIDER, MODEL)),
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
          expr: sumBy(['provider', 'reason'], q.rateOf('hermes_api_retries_total', PROVIDER, MODEL)),
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
          expr: sumBy(['provider', 'reason'], q.rateOf('hermes_api_retries_exhausted_total', PROVIDER, MODEL)),
          legend: '{{provider}} {{reason}}',
        },
      ],
    }),
  ],
});

const tools = (q: Promql): RowSpec => ({
  title: 'Tools',
  panels: [
    timeseries({
      title: 'Tool calls by status',
      description: 'Finished tool calls per second by status (ok, error, blocked, cancelled, timeout, other).',
      unit: 'ops',
      min: 0,
      stacked: true,
      queries: [{ expr: sumBy(['status'], q.rateOf('hermes_tool_calls_total')), legend: '{{status}}' }],
    }),
    timeseries({
      title: 'Tool latency p95 by tool',
      description: 'p95 tool call duration per tool.',
      unit: 's',
      min: 0,
      queries: [{ expr: q.quantileOf(0.95, 'hermes_tool_call_duration_seconds', ['tool']), legend: '{{tool}}' }],
    }),
    bargauge({
      title: 'Top failing tools',
      description: 'The ten tools with the most calls ending in error or timeout over the dashboard\'s time range.',
      unit: 'short',
      min: 0,
      thresholds: neutral(),
      queries: [
        {
          expr: `topk(10, ${sumBy(['tool'], `increase(${q.selected('hermes_tool_calls_total', 'status=~"error|timeout"')}[${RANGE}])`)})`,
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
      queries: [{ expr: sumBy(['error_type'], q.rateOf('hermes_tool_errors_total')), legend: '{{error_type}}' }],
    }),
    timeseries({
      title: 'Tool calls in flight by tool',
      description: 'Tool calls started and not finished, per tool; a plateau means a hung tool.',
      unit: 'short',
      width: 12,
      min: 0,
      queries: [{ expr: sumBy(['tool'], q.selected('hermes_tool_calls_in_flight')), legend: '{{tool}}' }],
    }),
  ],
});

const approvals = (q: Promql): RowSpec => ({
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
          expr: sumBy(['surface', 'pattern_key'], q.rateOf('hermes_approval_requests_total')),
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
      queries: [{ expr: sumBy(['choice'], q.rateOf('hermes_approval_decisions_total')), legend: '{{choice}}' }],
    }),
    timeseries({
      title: 'Approval wait p50 / p95',
      description: 'Time from approval request to decision, by surface; the agent is blocked meanwhile.',
      unit: 's',
      min: 0,
      width: 6,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_approval_wait_seconds', ['surface']), legend: 'p50 {{surface}}' },
        { expr: q.quantileOf(0.95, 'hermes_approval_wait_seconds', ['surface']), legend: 'p95 {{surface}}' },
      ],
    }),
    timeseries({
      title: 'Approvals pending by surface',
      description: 'Approval requests waiting for a decision, by surface.',
      unit: 'short',
      min: 0,
      width: 6,
      queries: [{ expr: sumBy(['surface'], q.selected('hermes_approvals_pending')), legend: '{{surface}}' }],
    }),
  ],
});

const turnsAndSessions = (q: Promql): RowSpec => ({
  title: 'Turns and sessions',
  panels: [
    timeseries({
      title: 'Turns started and finished by outcome',
      description: 'User turns per second: started, and finished by outcome (completed, failed, interrupted, incomplete).',
      unit: 'ops',
      min: 0,
      queries: [
        { expr: sumBy([], q.rateOf('hermes_turns_started_total', MODEL)), legend: 'started' },
        { expr: sumBy(['outcome'], q.rateOf('hermes_turns_finished_total', MODEL)), legend: 'finished {{outcome}}' },
      ],
    }),
    timeseries({
      title: 'Interrupted turns by reason',
      description: 'Running turns interrupted per second (/stop, or /new while a turn runs; Hermes 0.21 and later), by platform and reason.',
      unit: 'ops',
      min: 0,
      queries: [{ expr: sumBy(['platform', 'reason'], q.rateOf('hermes_agent_interrupts_total')), legend: '{{platform}} {{reason}}' }],
    }),
    timeseries({
      title: 'Turn exit reasons',
      description: 'Finished turns per second by exit reason; "max_iterations_reached" means the agent hit its iteration cap.',
      unit: 'ops',
      min: 0,
      stacked: true,
      queries: [
        { expr: sumBy(['exit_reason'], q.rateOf('hermes_turns_finished_total', MODEL)), legend: '{{exit_reason}}' },
      ],
    }),
    timeseries({
      title: 'Turn duration p50 / p95',
      description: 'Duration of a user turn from the first model call to its end, by platform.',
      unit: 's',
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_turn_duration_seconds', ['platform']), legend: 'p50 {{platform}}' },
        { expr: q.quantileOf(0.95, 'hermes_turn_duration_seconds', ['platform']), legend: 'p95 {{platform}}' },
      ],
    }),
    timeseries({
      title: 'API and tool calls per turn p50 / p95',
      description: 'Provider attempts and tool calls per finished turn; a climbing p95 means the agent loops.',
      unit: 'short',
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_turn_api_calls', []), legend: 'API calls p50' },
        { expr: q.quantileOf(0.95, 'hermes_turn_api_calls', []), legend: 'API calls p95' },
        { expr: q.quantileOf(0.5, 'hermes_turn_tool_calls', []), legend: 'tool calls p50' },
        { expr: q.quantileOf(0.95, 'hermes_turn_tool_calls', []), legend: 'tool calls p95' },
      ],
    }),
    timeseries({
      title: 'Sessions started, finalized and reset',
      description: 'Session lifecycle hooks per second by platform.',
      unit: 'ops',
      min: 0,
      queries: [
        { expr: sumBy(['platform'], q.rateOf('hermes_sessions_started_total')), legend: 'started {{platform}}' },
        { expr: sumBy(['platform'], q.rateOf('hermes_sessions_finalized_total')), legend: 'finalized {{platform}}' },
        { expr: sumBy(['platform'], q.rateOf('hermes_session_resets_total')), legend: 'reset {{platform}}' },
      ],
    }),
    timeseries({
      title: 'Active sessions by platform',
      description: 'Sessions started and not finalized yet, by platform.',
      unit: 'short',
      min: 0,
      queries: [{ expr: sumBy(['platform'], q.selected('hermes_sessions_active')), legend: '{{platform}}' }],
    }),
  ],
});

const subagents = (q: Promql): RowSpec => ({
  title: 'Subagents',
  panels: [
    timeseries({
      title: 'Subagents started and finished',
      description: 'Subagents per second: started by role, finished by role and status.',
      unit: 'ops',
      min: 0,
      queries: [
        { expr: sumBy(['role'], q.rateOf('hermes_subagents_started_total')), legend: 'started {{role}}' },
        {
          expr: sumBy(['role', 'status'], q.rateOf('hermes_subagents_finished_total')),
          legend: 'finished {{role}} {{status}}',
        },
      ],
    }),
    timeseries({
      title: 'Subagent duration p95 by role',
      description: 'p95 subagent run duration by role.',
      unit: 's',
      min: 0,
      queries: [{ expr: q.quantileOf(0.95, 'hermes_subagent_duration_seconds', ['role']), legend: '{{role}}' }],
    }),
    timeseries({
      title: 'Active subagents by role',
      description: 'Subagents started and not stopped yet, by role.',
      unit: 'short',
      min: 0,
      queries: [{ expr: sumBy(['role'], q.selected('hermes_subagents_active')), legend: '{{role}}' }],
    }),
  ],
});

const GEN_AI_PROVIDER = 'gen_ai_provider_name=~"$provider"';
const GEN_AI_MODEL = 'gen_ai_request_model=~"$model"';

/** The same calls under the OpenTelemetry GenAI names; empty unless the sidecar runs with --metrics.semconv. */
const genAiConventions = (q: Promql): RowSpec => ({
  title: 'OpenTelemetry GenAI conventions (--metrics.semconv)',
  panels: [
    timeseries({
      title: 'GenAI operation duration p50 / p95 by provider',
      description: 'gen_ai_client_operation_duration_seconds, successful and failed attempts together: p50 from the raw histogram, p95 recorded (5m). Empty unless the sidecar runs with --metrics.semconv.',
      unit: 's',
      min: 0,
      width: 12,
      queries: [
        { expr: q.quantileOf(0.5, 'gen_ai_client_operation_duration_seconds', ['gen_ai_provider_name'], GEN_AI_PROVIDER, GEN_AI_MODEL), legend: 'p50 {{gen_ai_provider_name}}' },
        { expr: q.selected(R.genAiDurationP95, GEN_AI_PROVIDER), legend: 'p95 {{gen_ai_provider_name}}' },
      ],
    }),
    timeseries({
      title: 'GenAI token usage per call p50 / p95 by token type',
      description: 'Tokens per successful call from gen_ai_client_token_usage: input is the whole prompt, cached parts included. Empty unless the sidecar runs with --metrics.semconv.',
      unit: 'short',
      min: 0,
      width: 12,
      queries: [
        { expr: q.quantileOf(0.5, 'gen_ai_client_token_usage', ['gen_ai_token_type'], GEN_AI_PROVIDER, GEN_AI_MODEL), legend: 'p50 {{gen_ai_token_type}}' },
        { expr: q.quantileOf(0.95, 'gen_ai_client_token_usage', ['gen_ai_token_type'], GEN_AI_PROVIDER, GEN_AI_MODEL), legend: 'p95 {{gen_ai_token_type}}' },
      ],
    }),
  ],
});

/**
 * What a session costs and how fast models write: distributions over finalized sessions (one
 * observation each, no series per session) and over streamed successful calls.
 */
const sessionsAndOutputSpeed = (q: Promql): RowSpec => ({
  title: 'Sessions and output speed',
  panels: [
    timeseries({
      title: 'Session cost p50 / p95',
      description: 'Cost in USD per finalized session, by platform; sessions with a call that could not be priced are left out (sidecar health: sessions left out).',
      unit: 'currencyUSD',
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_session_cost_usd', ['platform']), legend: 'p50 {{platform}}' },
        { expr: q.quantileOf(0.95, 'hermes_session_cost_usd', ['platform']), legend: 'p95 {{platform}}' },
      ],
    }),
    timeseries({
      title: 'Session tokens p50 / p95',
      description: 'Prompt and output tokens per finalized session, by platform: every call re-sends the context, so this grows with turns.',
      unit: 'short',
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_session_tokens', ['platform']), legend: 'p50 {{platform}}' },
        { expr: q.quantileOf(0.95, 'hermes_session_tokens', ['platform']), legend: 'p95 {{platform}}' },
      ],
    }),
    timeseries({
      title: 'Turns per session p50 / p95',
      description: 'User turns per finalized session, by platform.',
      unit: 'short',
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_session_turns', ['platform']), legend: 'p50 {{platform}}' },
        { expr: q.quantileOf(0.95, 'hermes_session_turns', ['platform']), legend: 'p95 {{platform}}' },
      ],
    }),
    timeseries({
      title: 'Session duration p50 / p95',
      description: 'Time from session start to finalization, by platform.',
      unit: 's',
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_session_duration_seconds', ['platform']), legend: 'p50 {{platform}}' },
        { expr: q.quantileOf(0.95, 'hermes_session_duration_seconds', ['platform']), legend: 'p95 {{platform}}' },
      ],
    }),
    timeseries({
      title: 'Output speed p50 by provider and model',
      description: 'Median output tokens per second of streamed successful main-loop calls, from the first chunk to the end of the call; a drop with steady time to first chunk points at the provider decoding slower.',
      unit: 'cps',
      min: 0,
      width: 16,
      queries: [
        {
          expr: q.quantileOf(0.5, 'hermes_api_output_tokens_per_second', ['provider', 'model'], 'kind="main"', PROVIDER, MODEL),
          legend: '{{provider}} {{model}}',
        },
      ],
    }),
  ],
});

/** Live series have no `source` label; the history's carry source="backfill" (hermes-prometheus-sidecar backfill). */
const bySource = (inner: string): string => `sum by (source) (label_replace(${inner}, "source", "live", "source", ""))`;

/**
 * History from Hermes' session databases (`backfill`) beside the live scrape, for the metrics
 * whose meaning is the same in both; the other rows show both already, summed.
 */
const history = (q: Promql): RowSpec => ({
  title: 'History (backfill) and live',
  panels: [
    timeseries({
      title: 'Tokens: history and live',
      description: 'Tokens per second, from the session databases (source="backfill", at each usage row\'s last_seen) and from the live scrape (live). Empty for history until `hermes-prometheus-sidecar backfill` blocks are loaded.',
      unit: 'cps',
      min: 0,
      queries: [{ expr: bySource(q.rateOf('hermes_tokens_total', PROVIDER, MODEL)), legend: '{{source}}' }],
    }),
    timeseries({
      title: 'Cost: history and live',
      description: 'USD per hour by source: history is Hermes\' own estimate from the session databases (pricing hermes or included), live is every pricing source.',
      unit: 'currencyUSD',
      min: 0,
      queries: [{ expr: `${bySource(q.rateOf('hermes_cost_usd_total', PROVIDER, MODEL))} * 3600`, legend: '{{source}}' }],
    }),
    timeseries({
      title: 'Sessions started: history and live',
      description: 'Sessions started per second by source: history at sessions.started_at, live from on_session_start.',
      unit: 'ops',
      min: 0,
      queries: [{ expr: bySource(q.rateOf('hermes_sessions_started_total')), legend: '{{source}}' }],
    }),
  ],
});

export function agentOverviewDashboard(config: MonitoringConfig): Dashboard {
  const q = promql(config.selector, config.histograms);
  return buildDashboard({
    uid: AGENT_OVERVIEW_UID,
    title: 'Hermes Agent overview',
    description:
      'Hermes Agent health from the observer-hook sidecar: provider calls, tokens, tools, approvals, turns, sessions and subagents.',
    variables: [
      datasourceVariable(),
      jobVariable(config.selector),
      instanceVariable(config.selector),
      providerVariable(q),
      modelVariable(q),
    ],
    rows: [(query: Promql) => atAGlance(query, config), (query: Promql) => sloRow(query, config), load, providerCalls, tokens, cost, errorsAndRetries, tools, approvals, turnsAndSessions, subagents, genAiConventions, sessionsAndOutputSpeed, history].map((row) => row(q)),
  });
}
