/** Provider API calls: pre/post_api_request, api_request_error and the auxiliary variants. */
import type { ApiCall, ApiKind, EventData, Usage } from '../../contract/events.js';
import type { CounterHandle, Exemplar, Families, HistogramHandle } from '../../metrics/registry.js';
import { compositeKey, spanTable, type RecorderContext } from './context.js';
import { PRICING_VALUES, costOf, type CallCost } from './pricing.js';
import { RetriedCalls } from './retriedCalls.js';
import { callExemplar, callKeyOf, retryableLabel, retryVerdict } from './apiAttempts.js';
import { promptTokens, TOKEN_TYPES } from './usage.js';
import { VALUES, type ValueOf } from '../../contract/vocabulary.js';
import { OPEN, counter, gauge, histogram, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';
import { TESTED_HERMES } from '../../contract/hooks.js';

/** The closed value sets of this module's labels. */
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

/** Why the auxiliary kind is unfed by the tested Hermes release. */
const AUXILIARY = '`kind="auxiliary"` needs `pre/post_auxiliary_call` (newer Hermes; not in VALID_HOOKS of ' + TESTED_HERMES + ')';

const API_LABELS = { kind: VALUES.api_kind, provider: OPEN, model: OPEN } as const;

/** The families this module writes (and all it is handed). */
export const API_FAMILIES = {
  apiRequests: fed(counter('hermes_api_requests_total', { ...API_LABELS, outcome: VALUES.api_outcome }, 'agent',
    'Finished provider API attempts by outcome (success on post_api_request, error on api_request_error).'),
    'hermes', `\`post_api_request\` (success), \`api_request_error\` (error); ${AUXILIARY}`),
  apiRequestDuration: fed(histogram('hermes_api_request_duration_seconds', { ...API_LABELS, outcome: VALUES.api_outcome }, 'api_seconds', 'agent',
    'Provider API call duration as Hermes reports it (from the start of the logical call, so it includes earlier failed attempts).'),
    'hermes', '`api_duration` (s) of `post_api_request` / `api_request_error`'),
  apiTimeToFirstChunk: fed(histogram('hermes_api_time_to_first_chunk_seconds', { ...API_LABELS, outcome: VALUES.api_outcome }, 'api_seconds', 'agent',
    'Time from the start of a streamed provider call to its first chunk, by the attempt\'s outcome ({outcome}): a failed attempt that streamed before it failed counts under error.'),
    'partial', '`first_chunk_at` − `started_at` of `post_api_request` (`outcome="success"`); `outcome="error"` from `api_request_error`\'s `first_chunk_at`, which Hermes 0.21 passes (agent/api_request_hooks.py); streamed calls only, and only the first attempt of a call to end (later ones count in hermes_sidecar_time_to_first_chunk_unmeasured_total)'),
  apiErrors: fed(counter('hermes_api_errors_total', { ...API_LABELS, reason: OPEN, error_class: OPEN, status_code: OPEN, retryable: VALUES.retryable }, 'agent',
    'Failed provider API attempts by failover reason, exception class (error_class), HTTP status code and retryability.'),
    'hermes', '`api_request_error`: `reason`, `error_type` (the plugin forwards `error["type"]`) as `error_class`, `status_code`, `retryable`'),
  apiRetries: fed(counter('hermes_api_retries_total', { ...API_LABELS, reason: OPEN }, 'agent',
    'Failed provider API attempts after which Hermes retries the call.'),
    'hermes', '`api_request_error`: `retryable`, `retry_count`, `max_retries`'),
  apiRetriesExhausted: fed(counter('hermes_api_retries_exhausted_total', { ...API_LABELS, reason: OPEN }, 'agent',
    'Failed provider API attempts that end the logical call (not retryable, or out of retries).'),
    'hermes', '`api_request_error`: `retryable`, `retry_count`, `max_retries`'),
  tokens: fed(counter('hermes_tokens_total', { ...API_LABELS, token_type: VALUES.token_type }, 'agent',
    'Tokens reported by providers by token type: {token_type} (input is uncached; reasoning is a subset of output).'),
    'hermes', '`post_api_request` `usage` (`_usage_summary_for_api_request_hook`): `input_tokens`, `cache_read_tokens`, `cache_write_tokens`, `output_tokens`, `reasoning_tokens`; a type whose `usage.reported_usage_fields` flag is false (Hermes 0.21) is not counted, not counted as 0'),
  apiPromptTokens: fed(histogram('hermes_api_request_prompt_tokens', API_LABELS, 'tokens', 'agent',
    'Prompt size (input + cache_read + cache_write tokens) per successful provider call.'),
    'hermes', '`post_api_request` `usage.prompt_tokens`'),
  apiFinishReasons: fed(counter('hermes_api_finish_reasons_total', { ...API_LABELS, finish_reason: OPEN }, 'agent',
    'Successful provider API attempts by finish reason.'),
    'hermes', '`post_api_request` `finish_reason`'),
  costUsd: fed(counter('hermes_cost_usd_total', { ...API_LABELS, pricing: PRICING_VALUES.pricing }, 'agent',
    'Cost in USD of successful provider API calls, by how they were priced ({pricing}): hermes is Hermes\' own agent.usage_pricing, config the price table of the config file, included a subscription route (counts 0).'),
    'hermes', '`post_api_request`: `cost_usd`/`cost_status` (the plugin\'s sender thread, Hermes\' `agent.usage_pricing.estimate_usage_cost`), else `usage` × the config file\'s `prices:`'),
  costUnpriced: fed(counter('hermes_cost_unpriced_requests_total', { ...API_LABELS, reason: PRICING_VALUES.unpriced_reason }, 'agent',
    'Successful provider API calls that could not be priced, never guessed ({reason}): no_usage when the call reported no usage, no_price when neither Hermes nor the price table knows the route or a token type has no price.'),
    'hermes', '`post_api_request` without `cost_usd` and without a `prices:` entry, or without `usage`'),
  apiContextUtilization: fed(histogram('hermes_api_context_utilization_ratio', API_LABELS, 'ratio', 'agent',
    'How full the context window was per successful provider call: prompt tokens (input + cache_read + cache_write) / the context engine\'s window; above 1 counts in +Inf.'),
    'partial', '`post_api_request`: prompt tokens of `usage` / `context_length`, which only Hermes after 0.21.3 passes (agent/turn_response_intake.py on main)'),
  apiOutputTokensPerSecond: fed(histogram('hermes_api_output_tokens_per_second', API_LABELS, 'tokens_per_second', 'agent',
    'Output speed of streamed successful provider calls: output tokens over the time from the first chunk to the end of the call (api_duration − time to first chunk).'),
    'hermes', '`post_api_request`: `usage.output_tokens` / (`api_duration` − (`first_chunk_at` − `started_at`)); streamed calls only'),
  outputSpeedUnmeasured: fed(counter('hermes_sidecar_output_speed_unmeasured_total', { reason: API_VALUES.output_speed_unmeasured_reason }, 'delivery',
    'Streamed successful provider calls left out of hermes_api_output_tokens_per_second, by why ({reason}).'),
    'sidecar', '`post_api_request` with `first_chunk_at` but no positive time after it, or no `usage.output_tokens`'),
  firstChunkUnmeasured: fed(counter('hermes_sidecar_time_to_first_chunk_unmeasured_total', { reason: API_VALUES.first_chunk_unmeasured_reason }, 'delivery',
    'Streamed provider API attempts left out of hermes_api_time_to_first_chunk_seconds, by why ({reason}): Hermes times every attempt from the start of the logical call, so after a failed attempt the interval would include it and its backoff.'),
    'sidecar', '`api_request_error` or `post_api_request` with `first_chunk_at` whose `api_request_id` had a failed attempt before'),
  apiRequestsInFlight: fed(gauge('hermes_api_requests_in_flight', { kind: VALUES.api_kind, provider: OPEN }, 'agent',
    'Provider API attempts started and not yet finished (moved as attempts start and finish; at 0 for the series TTL, the series expires).', { computed: true }),
    'hermes', '`pre_api_request` → `post_api_request` / `api_request_error` by `api_request_id`'),

  // OpenTelemetry GenAI semantic conventions (opt-in, --metrics.semconv): the same provider calls
  // under the names OpenTelemetry dashboards expect. Provider, model and error type are the
  // guarded values of the provider, model and reason labels.
  genAiOperationDuration: fed({
    ...histogram('gen_ai_client_operation_duration_seconds',
      { gen_ai_operation_name: API_VALUES.gen_ai_operation, gen_ai_provider_name: { sameAs: 'provider' }, gen_ai_request_model: { sameAs: 'model' }, error_type: { sameAs: 'reason' } },
      'genai_seconds', 'agent',
      'GenAI operation duration (OpenTelemetry gen_ai.client.operation.duration; exported with --metrics.semconv): each provider API attempt as a chat operation; error_type is the failover reason, empty on success.'),
    optIn: 'semconv',
  },
    'hermes', '`api_duration` (s) of `post_api_request` / `api_request_error` (`reason` as `error_type`); with `--metrics.semconv`'),
  genAiTokenUsage: fed({
    ...histogram('gen_ai_client_token_usage',
      { gen_ai_operation_name: API_VALUES.gen_ai_operation, gen_ai_provider_name: { sameAs: 'provider' }, gen_ai_request_model: { sameAs: 'model' }, gen_ai_token_type: API_VALUES.gen_ai_token_type },
      'genai_tokens', 'agent',
      'Tokens per successful provider call (OpenTelemetry gen_ai.client.token.usage; exported with --metrics.semconv) by token type ({gen_ai_token_type}): input is the whole prompt, cached parts included.'),
    optIn: 'semconv',
  },
    'hermes', '`post_api_request` `usage`: `prompt_tokens` (else input + cache read + cache write) as input, `output_tokens` as output; with `--metrics.semconv`'),
} as const satisfies Declarations;

type ApiMetrics = Families<typeof API_FAMILIES>;

type Succeeded = Extract<EventData, { type: 'api_attempt_succeeded' }>;
type Failed = Extract<EventData, { type: 'api_attempt_failed' }>;

interface CallLabels {
  readonly kind: ApiKind;
  readonly provider: string;
  readonly model: string;
}

type OpenAttempt = { readonly kind: ApiKind; readonly provider: string };
type Outcome = 'success' | 'error';
type GenAiTokenType = (typeof API_VALUES)['gen_ai_token_type'][number];
type Pricing = (typeof PRICING_VALUES)['pricing'][number];
type UnpricedReason = (typeof PRICING_VALUES)['unpriced_reason'][number];

/** The handle of `key` in `handles`, created on first use; keys are closed values, so each map is bounded by its set. */
function handleOf<K extends string, H>(handles: Map<K, H>, key: K, create: (key: K) => H): H {
  let handle = handles.get(key);
  if (handle === undefined) handles.set(key, (handle = create(key)));
  return handle;
}

/**
 * The hot series of one (kind, provider, model), resolved on first use and kept: a successful
 * call writes up to ten of them, and resolving each from labels every time was the largest cost
 * of ingest after JSON.parse (bench/RESULTS.md, Profile). The unlabelled ones are fields, the
 * others a map per closed label keyed by the value itself, so a write builds no key string; labels
 * with guarded values (finish and failover reasons) are written by label object instead, so no
 * handle here is keyed by a value the label guard may forget. Created lazily, so a series appears
 * only once it has a value. A handle follows its series across expiry itself (the series table's
 * generation, src/metrics/seriesTable.ts).
 */
class CallSeries {
  private prompt: HistogramHandle | undefined;
  private contextUtilization: HistogramHandle | undefined;
  private outputSpeed: HistogramHandle | undefined;
  private readonly firstChunks = new Map<Outcome, HistogramHandle>();
  private readonly requestCounters = new Map<Outcome, CounterHandle>();
  private readonly durations = new Map<Outcome, HistogramHandle>();
  private readonly tokenCounters = new Map<ValueOf<'token_type'>, CounterHandle>();
  private readonly tokenUsages = new Map<GenAiTokenType, HistogramHandle>();
  private readonly costs = new Map<Pricing, CounterHandle>();
  private readonly unpricedCalls = new Map<UnpricedReason, CounterHandle>();

  // The handles' constructors, made once per call series: a function literal passed at each
  // write would be a closure allocated on every write, hit or miss (up to ten per call).
  private readonly newRequests = (outcome: Outcome) => this.metrics.apiRequests.handle({ ...this.labels, outcome });
  private readonly newDuration = (outcome: Outcome) => this.metrics.apiRequestDuration.handle({ ...this.labels, outcome });
  private readonly newFirstChunk = (outcome: Outcome) => this.metrics.apiTimeToFirstChunk.handle({ ...this.labels, outcome });
  private readonly newTokens = (tokenType: ValueOf<'token_type'>) => this.metrics.tokens.handle({ ...this.labels, token_type: tokenType });
  private readonly newTokenUsage = (tokenType: GenAiTokenType) =>
    this.metrics.genAiTokenUsage.handle({ gen_ai_operation_name: 'chat', gen_ai_provider_name: this.labels.provider, gen_ai_request_model: this.labels.model, gen_ai_token_type: tokenType });
  private readonly newCost = (pricing: Pricing) => this.metrics.costUsd.handle({ ...this.labels, pricing });
  private readonly newUnpriced = (reason: UnpricedReason) => this.metrics.costUnpriced.handle({ ...this.labels, reason });

  constructor(
    private readonly metrics: ApiMetrics,
    readonly labels: CallLabels,
  ) {}

  requests(outcome: Outcome): CounterHandle {
    return handleOf(this.requestCounters, outcome, this.newRequests);
  }

  duration(outcome: Outcome): HistogramHandle {
    return handleOf(this.durations, outcome, this.newDuration);
  }

  timeToFirstChunk(outcome: Outcome): HistogramHandle {
    return handleOf(this.firstChunks, outcome, this.newFirstChunk);
  }

  contextUse(): HistogramHandle {
    return (this.contextUtilization ??= this.metrics.apiContextUtilization.handle(this.labels));
  }

  outputTokensPerSecond(): HistogramHandle {
    return (this.outputSpeed ??= this.metrics.apiOutputTokensPerSecond.handle(this.labels));
  }

  promptTokens(): HistogramHandle {
    return (this.prompt ??= this.metrics.apiPromptTokens.handle(this.labels));
  }

  tokens(tokenType: ValueOf<'token_type'>): CounterHandle {
    return handleOf(this.tokenCounters, tokenType, this.newTokens);
  }

  tokenUsage(tokenType: GenAiTokenType): HistogramHandle {
    return handleOf(this.tokenUsages, tokenType, this.newTokenUsage);
  }

  cost(pricing: Pricing): CounterHandle {
    return handleOf(this.costs, pricing, this.newCost);
  }

  unpriced(reason: UnpricedReason): CounterHandle {
    return handleOf(this.unpricedCalls, reason, this.newUnpriced);
  }

  /** OpenTelemetry's operation duration; `errorType` is a guarded reason ('' on success). */
  operationDuration(errorType: string, seconds: number, exemplar: Exemplar | undefined): void {
    const { provider, model } = this.labels;
    this.metrics.genAiOperationDuration.observe(
      { gen_ai_operation_name: 'chat', gen_ai_provider_name: provider, gen_ai_request_model: model, error_type: errorType },
      seconds,
      exemplar,
    );
  }

  /** `reason` is a guarded label value. */
  finishReason(reason: string): void {
    const { kind, provider, model } = this.labels;
    this.metrics.apiFinishReasons.inc({ kind, provider, model, finish_reason: reason });
  }

  /** How many handles this call's series keeps (for tests). */
  get handleCount(): number {
    const fields = [this.prompt, this.contextUtilization, this.outputSpeed].filter((handle) => handle !== undefined).length;
    const maps = [this.firstChunks, this.requestCounters, this.durations, this.tokenCounters, this.tokenUsages, this.costs, this.unpricedCalls];
    return maps.reduce((total, map) => total + map.size, fields);
  }
}

export class ApiRecorder {
  // Guarded (kind, provider, model) → its series, one Map level each: the guard hands back the
  // same strings every time, so finding a call's series builds no key. A cache of the storage's
  // handles, bounded by the provider and model caps: it is dropped whenever the label guard has
  // forgotten values since it was filled (its generation), so as series expire and new models are
  // admitted it holds only values the caps hold.
  private calls: Record<ApiKind, Map<string, Map<string, CallSeries>>> = { main: new Map(), auxiliary: new Map() };
  private callsGeneration: number;
  // Keyed by kind and api_request_id: retries reuse the id, and a post/error closes the open attempt.
  private readonly inFlight;
  private readonly retried: RetriedCalls;

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: ApiMetrics,
  ) {
    this.inFlight = spanTable<OpenAttempt>(context, 'api', undefined, (attempt) => this.metrics.apiRequestsInFlight.dec(attempt));
    this.callsGeneration = context.labels.generation;
    this.retried = new RetriedCalls(context);
  }

  /** How many (kind, provider, model) series the recorder keeps (for tests: bounded by the caps). */
  get callSeriesCount(): number {
    return [...this.everyCall()].length;
  }

  /** How many handles the recorder keeps across its calls' series (for tests: bounded by the caps). */
  get handleCount(): number {
    let count = 0;
    for (const call of this.everyCall()) count += call.handleCount;
    return count;
  }

  started(call: ApiCall): void {
    if (call.requestId === undefined) return;
    const attempt = { kind: call.kind, provider: this.context.labels.value('provider', call.provider) };
    this.metrics.apiRequestsInFlight.inc(attempt);
    this.inFlight.open(compositeKey(call.kind, call.requestId), attempt);
  }

  /** Records a successful attempt; returns its cost, which its session adds up (sessions.ts). */
  succeeded(event: Succeeded, observedAt: number): CallCost {
    const callKey = callKeyOf(event.call);
    const call = this.finish(event.call, callKey);
    call.requests('success').inc();
    const seconds = event.durationSeconds;
    if (seconds !== undefined) {
      const exemplar = callExemplar(event.call, seconds, observedAt);
      call.duration('success').observe(seconds, exemplar);
      call.operationDuration('', seconds, exemplar);
    }
    const afterFailure = callKey !== undefined && this.retried.succeeded(callKey);
    this.observeFirstChunk(call, 'success', event.timeToFirstChunkSeconds, afterFailure);
    call.finishReason(this.context.labels.value('finish_reason', event.finishReason));
    if (event.usage !== undefined) this.recordUsage(call, event.usage);
    this.recordContextUse(call, event);
    this.recordOutputSpeed(call, event);
    return this.recordCost(call, event);
  }

  failed(event: Failed, observedAt: number): void {
    const callKey = callKeyOf(event.call);
    const call = this.finish(event.call, callKey);
    const { labels } = call;
    call.requests('error').inc();
    const reason = this.context.labels.value('reason', event.reason);
    const seconds = event.durationSeconds;
    if (seconds !== undefined) {
      const exemplar = callExemplar(event.call, seconds, observedAt);
      call.duration('error').observe(seconds, exemplar);
      call.operationDuration(reason, seconds, exemplar);
    }
    const afterFailure = callKey !== undefined && this.retried.failed(callKey);
    this.observeFirstChunk(call, 'error', event.timeToFirstChunkSeconds, afterFailure);
    // Label objects written out rather than spread: a spread plus added keys makes an object
    // V8 reads slowly, and storage reads each label of it.
    const { kind, provider, model } = labels;
    this.metrics.apiErrors.inc({
      kind,
      provider,
      model,
      reason,
      error_class: this.context.labels.value('error_class', event.errorType),
      status_code: this.context.labels.value('status_code', event.statusCode === undefined ? 'none' : String(event.statusCode)),
      retryable: retryableLabel(event.retryable),
    });
    const verdict = retryVerdict(event);
    if (verdict === 'retried') this.metrics.apiRetries.inc({ kind, provider, model, reason });
    if (verdict === 'exhausted') this.metrics.apiRetriesExhausted.inc({ kind, provider, model, reason });
  }

  private *everyCall(): Generator<CallSeries> {
    for (const byProvider of Object.values(this.calls)) for (const byModel of byProvider.values()) yield* byModel.values();
  }

  /** A time to first chunk measures one attempt only when no attempt of its call failed before it. */
  private observeFirstChunk(call: CallSeries, outcome: 'success' | 'error', seconds: number | undefined, afterFailure: boolean): void {
    if (seconds === undefined) return;
    if (afterFailure) this.metrics.firstChunkUnmeasured.inc({ reason: 'after_failed_attempt' });
    else call.timeToFirstChunk(outcome).observe(seconds);
  }

  /** Closes the open attempt (if its pre event was seen) and returns the call's series. */
  private finish(call: ApiCall, callKey: string | undefined): CallSeries {
    if (callKey !== undefined) this.inFlight.close(callKey);
    const provider = this.context.labels.value('provider', call.provider);
    const model = this.context.labels.value('model', call.model);
    if (this.callsGeneration !== this.context.labels.generation) {
      this.callsGeneration = this.context.labels.generation;
      this.calls = { main: new Map(), auxiliary: new Map() };
    }
    let byModel = this.calls[call.kind].get(provider);
    if (byModel === undefined) this.calls[call.kind].set(provider, (byModel = new Map<string, CallSeries>()));
    let series = byModel.get(model);
    if (series === undefined) byModel.set(model, (series = new CallSeries(this.metrics, { kind: call.kind, provider, model })));
    return series;
  }

  /** Prompt tokens over the context window: how close the agent is to its capacity. */
  private recordContextUse(call: CallSeries, event: Succeeded): void {
    const window = event.contextLength;
    const prompt = event.usage === undefined ? undefined : promptTokens(event.usage);
    if (window === undefined || window === 0 || prompt === undefined) return;
    call.contextUse().observe(prompt / window);
  }

  /**
   * Output tokens over the streaming time of a streamed call (one with a first chunk). Hermes
   * reports ended_at as started_at + api_duration, so the time from the first chunk to the end is
   * api_duration − (first_chunk_at − started_at); a call whose interval is not positive, or so
   * short that the quotient is not finite, is counted instead of observed.
   */
  private recordOutputSpeed(call: CallSeries, event: Succeeded): void {
    const firstChunk = event.timeToFirstChunkSeconds;
    if (firstChunk === undefined) return;
    const output = event.usage?.output;
    if (output === undefined) {
      this.metrics.outputSpeedUnmeasured.inc({ reason: 'no_output_tokens' });
      return;
    }
    const streaming = event.durationSeconds === undefined ? undefined : event.durationSeconds - firstChunk;
    const speed = streaming === undefined || !(streaming > 0) ? undefined : output / streaming;
    if (speed === undefined || !Number.isFinite(speed)) {
      this.metrics.outputSpeedUnmeasured.inc({ reason: 'no_interval' });
      return;
    }
    call.outputTokensPerSecond().observe(speed);
  }

  private recordCost(call: CallSeries, event: Succeeded): CallCost {
    const cost = costOf(event.call, event.usage, event.cost, this.context.prices);
    if (cost.priced) call.cost(cost.pricing).inc(cost.usd);
    else call.unpriced(cost.reason).inc();
    return cost;
  }

  private recordUsage(call: CallSeries, usage: Usage): void {
    for (const [field, type] of TOKEN_TYPES) {
      const tokens = usage[field];
      if (tokens !== undefined) call.tokens(type).inc(tokens);
    }
    if (usage.prompt !== undefined) call.promptTokens().observe(usage.prompt);
    const prompt = promptTokens(usage);
    if (prompt !== undefined) call.tokenUsage('input').observe(prompt);
    if (usage.output !== undefined) call.tokenUsage('output').observe(usage.output);
  }
}
