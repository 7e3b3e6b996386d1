/**
 * Recording rules: `level:metric:operation` (Prometheus naming practice).
 *
 * - Aggregations use `sum without (...)`, so `job`, `instance` and any target labels a user
 *   adds survive; dashboards can still filter by `$instance`.
 * - Ratios aggregate numerator and denominator separately and divide last (never average a
 *   ratio). A zero denominator yields no sample instead of NaN or +Inf; a denominator with
 *   traffic but no failures yields 0 instead of no sample.
 * - Rules in a group run in order, so later rules may read earlier ones of the same group.
 */
import type { MonitoringConfig } from '../config.js';
import { histogramSeries, lines, series, type HistogramKind } from '../promql.js';
import { budgetRecordingGroups } from './budget.js';
import type { RecordingRule, RuleGroup } from './types.js';

function rule(record: string, expr: string, comment: string): RecordingRule {
  return { record, expr, comment };
}

/** `(failures or total * 0) / (total > 0)`: 0 when nothing failed, nothing when idle. */
function guardedRatio(failures: string, total: string): string {
  return lines(`(${failures} or ${total} * 0)`, '/', `(${total} > 0)`);
}

export const RECORDING = {
  apiRequestsRate: 'provider_model:hermes_api_requests:rate5m',
  apiErrorsRate: 'provider_model:hermes_api_errors:rate5m',
  apiDurationBucketsRate: 'provider_model_le:hermes_api_request_duration_seconds_bucket:rate5m',
  apiDurationP95: 'provider_model:hermes_api_request_duration_seconds:p95_rate5m',
  providerRequestsRate: 'provider:hermes_api_requests:rate5m',
  providerErrorsRate: 'provider:hermes_api_errors:rate5m',
  providerErrorRatio: 'provider:hermes_api_requests:error_ratio_rate5m',
  providerRetriesRate: 'provider:hermes_api_retries:rate5m',
  providerRetriesExhaustedRate: 'provider:hermes_api_retries_exhausted:rate5m',
  toolCallsRate: 'tool:hermes_tool_calls:rate5m',
  toolFailureRatio: 'tool:hermes_tool_calls:failure_ratio_rate5m',
  cacheReadTokensRate: 'provider_model:hermes_tokens_cache_read:rate5m',
  promptTokensRate: 'provider_model:hermes_tokens_prompt:rate5m',
  cacheHitRatio: 'provider_model:hermes_tokens:cache_hit_ratio_rate5m',
  // The metric part keeps the hermes_ prefix of this bundle's recorded series.
  genAiDurationP95: 'gen_ai_provider_name:hermes_gen_ai_client_operation_duration_seconds:p95_rate5m',
} as const;

const R = RECORDING;

/** The recorded latency histogram of successful provider calls: classic buckets keep `le` in the level and `_bucket` in the name. */
export function apiDurationRateRecord(kind: HistogramKind): string {
  return kind === 'classic' ? R.apiDurationBucketsRate : 'provider_model:hermes_api_request_duration_seconds:rate5m';
}

const apiGroup = ({ selector, histograms }: MonitoringConfig): RuleGroup<RecordingRule> => ({
  name: 'hermes-api.rules',
  rules: [
    rule(
      R.apiRequestsRate,
      `sum without (kind, outcome) (rate(${series('hermes_api_requests_total', selector)}[5m]))`,
      'Finished provider API attempts per second (success and error), main and auxiliary calls together.',
    ),
    rule(
      R.apiErrorsRate,
      `sum without (kind, reason, error_class, status_code, retryable) (rate(${series('hermes_api_errors_total', selector)}[5m]))`,
      'Failed provider API attempts per second, every reason and status code together.',
    ),
    rule(
      apiDurationRateRecord(histograms),
      `sum without (kind, outcome) (rate(${series(histogramSeries('hermes_api_request_duration_seconds', histograms), selector, 'outcome="success"')}[5m]))`,
      'Latency histogram of successful provider calls (Hermes times them from the start of the logical call, so retries count).',
    ),
    rule(
      R.apiDurationP95,
      `histogram_quantile(0.95, ${series(apiDurationRateRecord(histograms), selector)})`,
      'p95 latency of successful provider calls.',
    ),
    rule(
      R.providerRequestsRate,
      `sum without (model) (${series(R.apiRequestsRate, selector)})`,
      'Finished provider API attempts per second, all models of a provider together.',
    ),
    rule(
      R.providerErrorsRate,
      `sum without (model) (${series(R.apiErrorsRate, selector)})`,
      'Failed provider API attempts per second, all models of a provider together.',
    ),
    rule(
      R.providerErrorRatio,
      guardedRatio(series(R.providerErrorsRate, selector), series(R.providerRequestsRate, selector)),
      'Share of provider API attempts that failed (0 to 1); absent while the provider has no traffic.',
    ),
    rule(
      R.providerRetriesRate,
      `sum without (kind, model, reason) (rate(${series('hermes_api_retries_total', selector)}[5m]))`,
      'Failed provider API attempts per second after which Hermes retried.',
    ),
    rule(
      R.providerRetriesExhaustedRate,
      `sum without (kind, model, reason) (rate(${series('hermes_api_retries_exhausted_total', selector)}[5m]))`,
      'Logical provider calls per second that failed for good (not retryable, or out of retries).',
    ),
  ],
});

const toolGroup = ({ selector }: MonitoringConfig): RuleGroup<RecordingRule> => ({
  name: 'hermes-tools.rules',
  rules: [
    rule(
      R.toolCallsRate,
      `sum without (status) (rate(${series('hermes_tool_calls_total', selector)}[5m]))`,
      'Finished tool calls per second, every status together.',
    ),
    rule(
      R.toolFailureRatio,
      guardedRatio(
        `sum without (status) (rate(${series('hermes_tool_calls_total', selector, 'status=~"error|timeout"')}[5m]))`,
        series(R.toolCallsRate, selector),
      ),
      'Share of tool calls that ended in error or timeout (blocked and cancelled calls are decisions, not failures).',
    ),
  ],
});

/** Prompt tokens as docs/metrics.md defines them: uncached input plus cache reads and writes. */
const PROMPT_TOKEN_TYPES = 'token_type=~"input|cache_read|cache_write"';

const tokenGroup = ({ selector }: MonitoringConfig): RuleGroup<RecordingRule> => ({
  name: 'hermes-tokens.rules',
  rules: [
    rule(
      R.cacheReadTokensRate,
      `sum without (kind, token_type) (rate(${series('hermes_tokens_total', selector, 'token_type="cache_read"')}[5m]))`,
      'Prompt tokens per second served from the provider cache.',
    ),
    rule(
      R.promptTokensRate,
      `sum without (kind, token_type) (rate(${series('hermes_tokens_total', selector, PROMPT_TOKEN_TYPES)}[5m]))`,
      'Prompt tokens per second: uncached input, cache reads and cache writes.',
    ),
    rule(
      R.cacheHitRatio,
      guardedRatio(series(R.cacheReadTokensRate, selector), series(R.promptTokensRate, selector)),
      'Prompt-cache hit ratio: cache_read / (input + cache_read + cache_write) tokens (0 to 1); absent without prompt tokens.',
    ),
  ],
});

/** The OpenTelemetry GenAI families (exported with --metrics.semconv); idle without them. */
const genAiGroup = ({ selector, histograms }: MonitoringConfig): RuleGroup<RecordingRule> => ({
  name: 'hermes-gen-ai.rules',
  rules: [
    rule(
      R.genAiDurationP95,
      `histogram_quantile(0.95, sum without (gen_ai_operation_name, gen_ai_request_model, error_type) (rate(${series(histogramSeries('gen_ai_client_operation_duration_seconds', histograms), selector)}[5m])))`,
      'p95 GenAI operation duration (OpenTelemetry gen_ai.client.operation.duration) by provider, successful and failed attempts together.',
    ),
  ],
});

export function recordingGroups(config: MonitoringConfig): RuleGroup<RecordingRule>[] {
  return [apiGroup(config), toolGroup(config), tokenGroup(config), genAiGroup(config), ...budgetRecordingGroups(config)];
}
