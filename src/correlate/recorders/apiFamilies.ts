/**
 * What the provider API recorder (api.ts) writes: its label value sets and family declarations,
 * the OpenTelemetry GenAI views among them.
 */
import { VALUES } from '../../contract/vocabulary.js';
import { OPEN, counter, gauge, histogram, type Declarations } from '../../metrics/declare.js';
import { PRICING_VALUES } from './pricing.js';

/** The closed value sets of the API recorder's labels. */
export const API_VALUES = {
  /** OpenTelemetry's gen_ai.operation.name: Hermes' provider calls are chat completions. */
  gen_ai_operation: ['chat'],
  /** OpenTelemetry's gen_ai.token.type. */
  gen_ai_token_type: ['input', 'output'],
  /**
   * Why a streamed successful call has no output speed: no_interval when the time from its first
   * chunk to its end is zero, negative or unknown (no api_duration), or too short to divide by;
   * no_output_tokens when its usage has no output count.
   */
  output_speed_unmeasured_reason: ['no_interval', 'no_output_tokens'],
  /** Why a streamed attempt has no time to first chunk: an earlier attempt of its call had failed (retriedCalls.ts). */
  first_chunk_unmeasured_reason: ['after_failed_attempt'],
} as const satisfies Record<string, readonly string[]>;

const API_LABELS = { kind: VALUES.api_kind, provider: OPEN, model: OPEN } as const;

/** The families the API recorder writes (and all it is handed). */
export const API_FAMILIES = {
  apiRequests: counter('hermes_api_requests_total', { ...API_LABELS, outcome: VALUES.api_outcome }, 'agent',
    'Finished provider API attempts by outcome (success on post_api_request, error on api_request_error).'),
  apiRequestDuration: histogram('hermes_api_request_duration_seconds', { ...API_LABELS, outcome: VALUES.api_outcome }, 'api_seconds', 'agent',
    'Provider API call duration as Hermes reports it (from the start of the logical call, so it includes earlier failed attempts).'),
  apiTimeToFirstChunk: histogram('hermes_api_time_to_first_chunk_seconds', { ...API_LABELS, outcome: VALUES.api_outcome }, 'api_seconds', 'agent',
    'Time from the start of a streamed provider call to its first chunk, by the attempt\'s outcome ({outcome}): a failed attempt that streamed before it failed counts under error.'),
  apiErrors: counter('hermes_api_errors_total', { ...API_LABELS, reason: OPEN, error_class: OPEN, status_code: OPEN, retryable: VALUES.retryable }, 'agent',
    'Failed provider API attempts by failover reason, exception class (error_class), HTTP status code and retryability.'),
  apiRetries: counter('hermes_api_retries_total', { ...API_LABELS, reason: OPEN }, 'agent',
    'Failed provider API attempts after which Hermes retries the call.'),
  apiRetriesExhausted: counter('hermes_api_retries_exhausted_total', { ...API_LABELS, reason: OPEN }, 'agent',
    'Failed provider API attempts that end the logical call (not retryable, or out of retries).'),
  tokens: counter('hermes_tokens_total', { ...API_LABELS, token_type: VALUES.token_type }, 'agent',
    'Tokens reported by providers by token type: {token_type} (input is uncached; reasoning is a subset of output).'),
  apiPromptTokens: histogram('hermes_api_request_prompt_tokens', API_LABELS, 'tokens', 'agent',
    'Prompt size (input + cache_read + cache_write tokens) per successful provider call.'),
  apiFinishReasons: counter('hermes_api_finish_reasons_total', { ...API_LABELS, finish_reason: OPEN }, 'agent',
    'Successful provider API attempts by finish reason.'),
  costUsd: counter('hermes_cost_usd_total', { ...API_LABELS, pricing: PRICING_VALUES.pricing }, 'agent',
    'Cost in USD of successful provider API calls, by how they were priced ({pricing}): hermes is Hermes\' own agent.usage_pricing, config the price table of the config file, included a subscription route (counts 0).'),
  costUnpriced: counter('hermes_cost_unpriced_requests_total', { ...API_LABELS, reason: PRICING_VALUES.unpriced_reason }, 'agent',
    'Successful provider API calls that could not be priced, never guessed ({reason}): no_usage when the call reported no usage, no_price when neither Hermes nor the price table knows the route or a token type has no price.'),
  apiContextUtilization: histogram('hermes_api_context_utilization_ratio', API_LABELS, 'ratio', 'agent',
    'How full the context window was per successful provider call: prompt tokens (input + cache_read + cache_write) / the context engine\'s window; above 1 counts in +Inf.'),
  apiOutputTokensPerSecond: histogram('hermes_api_output_tokens_per_second', API_LABELS, 'tokens_per_second', 'agent',
    'Output speed of streamed successful provider calls: output tokens over the time from the first chunk to the end of the call (api_duration − time to first chunk).'),
  outputSpeedUnmeasured: counter('hermes_sidecar_output_speed_unmeasured_total', { reason: API_VALUES.output_speed_unmeasured_reason }, 'delivery',
    'Streamed successful provider calls left out of hermes_api_output_tokens_per_second, by why ({reason}).'),
  firstChunkUnmeasured: counter('hermes_sidecar_time_to_first_chunk_unmeasured_total', { reason: API_VALUES.first_chunk_unmeasured_reason }, 'delivery',
    'Streamed provider API attempts left out of hermes_api_time_to_first_chunk_seconds, by why ({reason}): Hermes times every attempt from the start of the logical call, so after a failed attempt the interval would include it and its backoff.'),
  apiRequestsInFlight: gauge('hermes_api_requests_in_flight', { kind: VALUES.api_kind, provider: OPEN }, 'agent',
    'Provider API attempts started and not yet finished (moved as attempts start and finish; at 0 for the series TTL, the series expires).', { computed: true }),

  // OpenTelemetry GenAI semantic conventions (opt-in, --metrics.semconv): the same provider calls
  // under the names OpenTelemetry dashboards expect. Provider, model and error type are the
  // guarded values of the provider, model and reason labels.
  genAiOperationDuration: {
    ...histogram('gen_ai_client_operation_duration_seconds',
      { gen_ai_operation_name: API_VALUES.gen_ai_operation, gen_ai_provider_name: { sameAs: 'provider' }, gen_ai_request_model: { sameAs: 'model' }, error_type: { sameAs: 'reason' } },
      'genai_seconds', 'agent',
      'GenAI operation duration (OpenTelemetry gen_ai.client.operation.duration; exported with --metrics.semconv): each provider API attempt as a chat operation; error_type is the failover reason, empty on success.'),
    optIn: 'semconv',
  },
  genAiTokenUsage: {
    ...histogram('gen_ai_client_token_usage',
      { gen_ai_operation_name: API_VALUES.gen_ai_operation, gen_ai_provider_name: { sameAs: 'provider' }, gen_ai_request_model: { sameAs: 'model' }, gen_ai_token_type: API_VALUES.gen_ai_token_type },
      'genai_tokens', 'agent',
      'Tokens per successful provider call (OpenTelemetry gen_ai.client.token.usage; exported with --metrics.semconv) by token type ({gen_ai_token_type}): input is the whole prompt, cached parts included.'),
    optIn: 'semconv',
  },
} as const satisfies Declarations;
