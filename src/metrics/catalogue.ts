/**
 * The metric catalogue: the product's public contract (docs/metrics.md is generated from it).
 *
 * Every metric the sidecar exports is declared here and nowhere else; input never creates a
 * metric name. Each metric names
 *  - its labels, each either a closed set of values the sidecar chooses (declared once, in
 *    VALUES), an open label whose values come from Hermes and pass the cardinality guard
 *    (src/metrics/labels.ts), or an info label set once at start;
 *  - its owner: the one module under src/ that writes it (test/metrics/ownership.test.ts).
 * The closed sets pre-initialise the pipeline's own series at 0 (the registry does it), validate
 * values through closedLabel, fill `{label}` placeholders of HELP texts and are listed in
 * docs/metrics.md. Dashboards, rules and their tests import this list to check every name they use.
 */
import { ERRORS } from '../errors.js';
import { OPEN_LABELS, type OpenLabel } from './labels.js';

/** Bucket sets; each can be overridden in the config file (`buckets:`). */
export const DEFAULT_BUCKETS = {
  api_seconds: [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84,
    327.68,
  ],
  tool_seconds: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
  turn_seconds: [
    0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6, 819.2, 1800, 3600,
  ],
  tokens: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304],
  count: [1, 2, 3, 5, 8, 13, 21, 34, 55, 89],
  batch_events: [1, 5, 10, 50, 100, 500, 1000, 5000],
  // The OpenTelemetry GenAI semantic conventions' advice for gen_ai.client.operation.duration
  // (0.01 s doubling to 81.92 s) and gen_ai.client.token.usage (powers of 4 up to 67108864).
  genai_seconds: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  genai_tokens: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  /** A share of a whole (0–1), finer near full, where a context window starts to compress or fail. */
  ratio: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1],
} as const satisfies Record<string, readonly number[]>;

export type BucketSetName = keyof typeof DEFAULT_BUCKETS;
export type BucketSets = Record<BucketSetName, readonly number[]>;

/** Hook names that move agent or delivery metrics (src/contract/hooks.ts reads them from here). */
const MAPPED_HOOKS = [
  'on_session_start',
  'on_session_end',
  'on_session_finalize',
  'on_session_reset',
  'pre_llm_call',
  'pre_api_request',
  'post_api_request',
  'api_request_error',
  'pre_auxiliary_call',
  'post_auxiliary_call',
  'pre_tool_call',
  'post_tool_call',
  'pre_approval_request',
  'post_approval_response',
  'subagent_start',
  'subagent_stop',
  'agent_loop_stopped',
] as const;

/** The envelope variant's events (register_observer_hook). */
const ENVELOPE_EVENTS = ['agent_end', 'memory_write', 'turn_end', 'session_event'] as const;

/** Valid Hermes events with no metric mapping: accepted and counted as ignored. */
const IGNORED_EVENTS = [
  'post_llm_call',
  'agent_start',
  'transform_llm_output',
  'transform_tool_result',
  'transform_terminal_output',
  'transform_api_error_classification',
  'pre_verify',
  'on_stream_start',
  'on_stream_delta',
  'on_stream_end',
  'on_interim_message',
  'on_skill_lifecycle',
  'pre_gateway_dispatch',
  'gateway_platform_event',
  'pre_command',
  'on_room_member_activity',
  'pre_transcription',
  'pre_tts_synthesis',
  'kanban_task_claimed',
  'kanban_task_completed',
  'kanban_task_blocked',
  'on_kanban_worker_spawned',
  'on_kanban_worker_exited',
  'on_kanban_worker_stale_claim',
  'on_kanban_task_updated',
  'on_kanban_dispatch_tick',
] as const;

/**
 * Every closed value set, declared once. A closed label takes one of its values, `unknown` when
 * the value is absent, or `other` when it is not listed (closedLabel in src/metrics/labels.ts).
 */
export const VALUES = {
  api_kind: ['main', 'auxiliary'],
  api_outcome: ['success', 'error'],
  retryable: ['true', 'false'],
  /** OpenTelemetry's gen_ai.token.type, plus the cache and reasoning split Hermes reports. */
  token_type: ['input', 'cache_read', 'cache_write', 'output', 'reasoning'],
  turn_outcome: ['completed', 'failed', 'interrupted', 'incomplete'],
  tool_status: ['ok', 'error', 'blocked', 'cancelled', 'timeout'],
  /** The error types Hermes emits for tool calls (docs/contract.md). */
  tool_error_type: [
    'tool_error',
    'invalid_tool_arguments',
    'thread_missing_result',
    'plugin_block',
    'tool_scope_block',
    'guardrail_block',
    'keyboard_interrupt',
    'user_interrupt',
    'tool_interrupted',
    'tool_timeout',
  ],
  approval_surface: ['cli', 'gateway', 'smart'],
  approval_choice: [
    'once',
    'session',
    'always',
    'deny',
    'timeout',
    'cancelled',
    'notify_failed',
    'smart_approve',
    'smart_deny',
    /** A smart request followed by a person's request for the same operation (docs/metrics.md). */
    'escalated',
  ],
  /** How a call's cost was priced: Hermes' own pricing, the config price table, a subscription route. */
  pricing: ['hermes', 'config', 'included'],
  /** Why a successful call has no cost. */
  unpriced_reason: ['no_usage', 'no_price'],
  session_event: ['created', 'switched', 'reset', 'resumed'],
  subagent_status: ['completed', 'failed', 'interrupted', 'timeout', 'error'],
  /**
   * The hooks whose dropped callbacks the bridge plugin reports. Drops of envelope-only events
   * count as `other`: no Hermes release sends them, and series made for them would stay at 0 for
   * every user (docs/metrics.md, "fed by").
   */
  plugin_hook: MAPPED_HOOKS,
  /** Events only the envelope variant (register_observer_hook, in no Hermes release) sends. */
  envelope_event: ENVELOPE_EVENTS,
  /** Why the bridge plugin dropped a callback (its heartbeat's `dropped` reasons). */
  plugin_drop_reason: ['queue_full', 'serialize_error', 'callback_error', 'send_failed', 'shutdown'],
  plugin_state: ['live', 'stale'],
  /** Correlated start/end pairs, each with a span table. */
  span_kind: ['api', 'tool', 'turn', 'approval', 'subagent'],
  /** Which route and shape brought an event: a plugin line, an envelope, flat kwargs, a webhook delivery. */
  event_source: ['plugin', 'envelope', 'flat', 'webhook'],
  /** Every event name the sidecar knows; anything else is `other`. */
  event: [...MAPPED_HOOKS, ...ENVELOPE_EVENTS, 'plugin_heartbeat', ...IGNORED_EVENTS],
  /** Events accepted with no metric mapping. */
  ignored_event: IGNORED_EVENTS,
  /**
   * Why events (or whole requests) are refused at the edge: the `rejected` column of src/errors.ts
   * plus the per-line verdicts of src/contract/shapes.ts (both typed against this list).
   */
  rejection_reason: [
    'invalid_json',
    'invalid_event',
    'unknown_shape',
    'unauthorized',
    'bad_signature',
    'too_large',
    'unsupported_media_type',
    'memory_limit',
    'inflight_limit',
    'body_timeout',
    'line_too_large',
  ],
  /** Why accepted-looking events were not applied; the sender is told to retry the first two. */
  drop_reason: ['queue_full', 'shutdown', 'internal_error'],
  ingest_route: ['/v1/events', '/v1/hooks'],
  /** The status codes the ingest listener answers with: 202, and those of src/errors.ts. */
  ingest_code: [...new Set(['202', ...Object.values(ERRORS).map((error) => String(error.status))])],
  /** State tables that evict their oldest entry when full (in entries or in bytes). */
  state_table: [
    'plugin_instances',
    'sessions',
    'api_attempts',
    'tool_calls',
    'turns',
    'approvals',
    'subagents',
    /** Evicted plugin instances' tombstones (src/correlate/instances.ts). */
    'plugin_tombstones',
    /** An epoch's interval set full: its floor moved up past the lowest interval. */
    'plugin_intervals',
    /** Ranges of epochs pushed out of an instance's memory. */
    'plugin_epochs',
    /** What each plugin instance's heartbeat says about its host (recorders/plugins.ts). */
    'instance_reports',
  ],
  scrape_stage: ['collect', 'render'],
  /** Event values checked against a plausible bound (src/contract/bounds.ts). */
  bounded_field: [
    'tokens',
    'duration',
    'time_to_first_chunk',
    'size_bytes',
    'dropped_total',
    'retry_count',
    'status_code',
    'interval',
    'acked_seq',
    'observed_at',
    'boot',
    'cost_usd',
    // Ids longer than --ingest.max-id-bytes (contract/bounds.ts StringLimits), by wire name.
    'session_id',
    'turn_id',
    'api_request_id',
    'tool_call_id',
    'child_session_id',
    'session_key',
    'delivery_id',
    // Names longer than --ingest.max-label-value-bytes, by wire name.
    'provider',
    'model',
    'finish_reason',
    'reason',
    'error_type',
    'cost_status',
    'platform',
    'turn_exit_reason',
    'tool_name',
    'status',
    'surface',
    'pattern_key',
    'choice',
    'decided_by',
    'child_role',
    'child_status',
    'stop_reason',
    'memory_provider',
    'action',
    'event',
    'hermes_version',
    'plugin_version',
    'profile',
  ],
  /** The parts of a heartbeat drop key that fold into `other` when not known. */
  drop_key_part: ['hook', 'reason'],
  /** Why basic auth refused a web request. */
  auth_refusal: ['wrong', 'repeated', 'saturated'],
  /** OpenTelemetry's gen_ai.operation.name: Hermes' provider calls are chat completions. */
  gen_ai_operation: ['chat'],
  /** OpenTelemetry's gen_ai.token.type. */
  gen_ai_token_type: ['input', 'output'],
  /** Why a plugin sequence number started a new epoch: a far jump, or a new numbering (restart). */
  sequence_reset_reason: ['jump', 'restart'],
  /** Why a plugin event answered 202 was not applied, other than being a duplicate. */
  discard_reason: ['after_lost', 'beyond_memory'],
  /** Why a plugin heartbeat was ignored as stale. */
  stale_heartbeat_reason: ['boot', 'acked_seq', 'dropped'],
  /**
   * The turn exit reasons Hermes 0.21 emits (the leading identifiers of turn_exit_reason:
   * agent/turn_finalizer.py at 0107e039, agent/turn_failure_copy.py _EXIT_REASON_FAILURES at
   * 08008f36): always kept as exit_reason values; any other passes the exit_reason cap.
   */
  turn_exit_reason: [
    'text_response', 'max_iterations_reached', 'budget_exhausted', 'unknown', 'pending_tool_result',
    'session_persistence_failed', 'partial_stream_recovery', 'empty_response_exhausted',
    'all_retries_exhausted_no_response', 'interpreter_shutdown', 'local_processing_error',
    'repeated_outer_errors', 'error_near_max_iterations', 'context_compression_timeout',
    'context_compression_exhausted', 'ollama_runtime_context_too_small',
    'redirect_restart_limit_exceeded', 'rebuilt_restart_limit_exceeded',
  ],
  /**
   * The string fields the bridge plugin's boundary grammar checks (plugin contract.json; the
   * agreement test keeps this list equal to it), and the heartbeat's host fields.
   */
  refused_field: [
    'session_id', 'turn_id', 'api_request_id', 'tool_call_id', 'session_key', 'child_session_id',
    'platform', 'model', 'provider', 'tool_name', 'finish_reason', 'reason', 'turn_exit_reason',
    'error_type', 'status', 'surface', 'pattern_key', 'choice', 'decided_by', 'child_role',
    'child_status', 'stop_reason', 'memory_provider', 'action', 'event', 'hermes_version', 'profile',
  ],
  /** The sidecar's two listeners. */
  listener: ['web', 'ingest'],
  /**
   * Why a listener closed a connection itself: refused at the connection cap (every connection
   * mid-request), evicted at the cap to make room, its request head or whole request too slow,
   * its response not drained in time, too many pipelined requests waiting.
   */
  connection_close_reason: ['limit', 'evicted', 'headers_timeout', 'request_timeout', 'write_timeout', 'pipeline_limit'],
} as const satisfies Record<string, readonly string[]>;

type ValueSet = keyof typeof VALUES;
export type ValueOf<S extends ValueSet> = (typeof VALUES)[S][number];

/** A label whose values come from Hermes: sanitized and capped by the label guard. */
export const OPEN = 'open';
/** A label of an info metric: one value, known at start. */
export const INFO = 'info';
/** A closed set computed from the catalogue itself (the names of metrics). */
interface DerivedValues {
  readonly derived: () => readonly string[];
  /** What the values are, for docs/metrics.md. */
  readonly description: string;
}
/**
 * An open label under another name: it carries the guarded values of `sameAs` (the
 * OpenTelemetry names of provider, model and reason), capped and folded as that label is.
 */
interface SameValues {
  readonly sameAs: OpenLabel;
}
export type LabelValues = readonly string[] | typeof OPEN | typeof INFO | DerivedValues | SameValues;
type LabelDeclarations = Readonly<Record<string, LabelValues>>;

/**
 * `agent` metrics describe Hermes and count towards the global series figures;
 * `delivery` and `self` metrics describe the pipeline and are never capped.
 */
type MetricScope = 'agent' | 'delivery' | 'self';
type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricSpec {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly labels: LabelDeclarations;
  /** The label names in exposition order (the keys of `labels`). */
  readonly labelNames: readonly string[];
  readonly buckets?: BucketSetName;
  readonly scope: MetricScope;
  /** The module under src/ (no extension) that writes this metric, and no other does. */
  readonly owner: string;
  /**
   * Whether the series of every combination of closed values exist at 0 from the start, so
   * rate() sees the first increment. Only for pipeline metrics whose labels are all closed; agent
   * series appear with their first event, since they spend the series budget.
   */
  readonly preinit: boolean;
  /** Exported only when chosen: `semconv` families need --metrics.semconv. */
  readonly optIn?: 'semconv';
}

const isClosed = (values: LabelValues): values is readonly string[] | DerivedValues =>
  values !== OPEN && values !== INFO && !('sameAs' in values);

/** The guard label whose values a label carries: itself when open, its `sameAs` when declared so. */
export function guardedLabel(spec: MetricSpec, name: string): string | undefined {
  const declared = spec.labels[name];
  if (declared === OPEN) return name;
  return declared !== undefined && typeof declared === 'object' && 'sameAs' in declared ? declared.sameAs : undefined;
}

/** The closed values of a label (derived sets resolved); undefined for open and info labels. */
export function closedValues(values: LabelValues): readonly string[] | undefined {
  if (!isClosed(values)) return undefined;
  return 'derived' in values ? values.derived() : (values);
}

/** Replaces `{label}` in a HELP text with that label's closed values, so HELP cannot drift from them. */
function helpText(help: string, labels: LabelDeclarations): string {
  return help.replace(/\{(\w+)\}/g, (_match, label: string) => {
    const declared = labels[label];
    const values = declared === undefined || 'derived' in (declared as object) ? undefined : closedValues(declared);
    if (values === undefined) throw new Error(`HELP placeholder {${label}} names no closed label`);
    return values.join(', ');
  });
}

interface SpecOptions {
  /** Opt out of pre-initialisation (say why where it is used). */
  readonly preinit?: false;
}

/** Builders for the metrics one module owns. */
function ownedBy<const O extends string>(owner: O) {
  const spec = <const T extends MetricType, const L extends LabelDeclarations>(
    type: T,
    name: string,
    labels: L,
    scope: MetricScope,
    help: string,
    options: SpecOptions = {},
  ) => ({
    name,
    help: helpText(help, labels),
    type,
    labels,
    labelNames: Object.keys(labels) as (keyof L & string)[],
    scope,
    owner,
    preinit: scope !== 'agent' && options.preinit !== false && Object.values(labels).every(isClosed),
  });
  return {
    counter: <const L extends LabelDeclarations>(name: string, labels: L, scope: MetricScope, help: string, options?: SpecOptions) =>
      spec('counter', name, labels, scope, help, options),
    gauge: <const L extends LabelDeclarations>(name: string, labels: L, scope: MetricScope, help: string, options?: SpecOptions) =>
      spec('gauge', name, labels, scope, help, options),
    histogram: <const L extends LabelDeclarations, const B extends BucketSetName>(
      name: string,
      labels: L,
      buckets: B,
      scope: MetricScope,
      help: string,
    ) => ({ ...spec('histogram', name, labels, scope, help), buckets }),
  };
}

const api = ownedBy('correlate/recorders/api');
const turns = ownedBy('correlate/recorders/turns');
const tools = ownedBy('correlate/recorders/tools');
const approvals = ownedBy('correlate/recorders/approvals');
const sessions = ownedBy('correlate/recorders/sessions');
const subagents = ownedBy('correlate/recorders/subagents');
const runs = ownedBy('correlate/recorders/runs');
const delivery = ownedBy('correlate/recorders/delivery');
const interrupts = ownedBy('correlate/recorders/interrupts');
const plugins = ownedBy('correlate/recorders/plugins');
const spans = ownedBy('correlate/recorders/context');
const stateTables = ownedBy('correlate/assemble');
const dispatcher = ownedBy('correlate/dispatcher');
const ingestor = ownedBy('ingest/ingestor');
const ingestErrors = ownedBy('ingest/errors');
const admission = ownedBy('ingest/admission');
const ingestApp = ownedBy('ingest/app');
const labelGuard = ownedBy('metrics/labels');
const registry = ownedBy('metrics/registry');
const web = ownedBy('web/app');
const webServer = ownedBy('web/server');
const memory = ownedBy('ingest/memory');
const bodies = ownedBy('ingest/body');
const root = ownedBy('app');
const connections = ownedBy('net/connections');

const API = { kind: VALUES.api_kind, provider: OPEN, model: OPEN } as const;

/** The names of agent metrics: the values of `metric` on the series overflow counter. */
const agentMetricNames: DerivedValues = {
  description: 'the name of an agent metric',
  derived: (): readonly string[] =>
    Object.values(CATALOGUE as Record<string, MetricSpec>).filter((spec) => spec.scope === 'agent').map((spec) => spec.name),
};

export const CATALOGUE = {
  // Provider API calls
  apiRequests: api.counter('hermes_api_requests_total', { ...API, outcome: VALUES.api_outcome }, 'agent',
    'Finished provider API attempts by outcome (success on post_api_request, error on api_request_error).'),
  apiRequestDuration: api.histogram('hermes_api_request_duration_seconds', { ...API, outcome: VALUES.api_outcome }, 'api_seconds', 'agent',
    'Provider API call duration as Hermes reports it (from the start of the logical call, so it includes earlier failed attempts).'),
  apiTimeToFirstChunk: api.histogram('hermes_api_time_to_first_chunk_seconds', { ...API, outcome: VALUES.api_outcome }, 'api_seconds', 'agent',
    'Time from the start of a streamed provider call to its first chunk, by the attempt\'s outcome ({outcome}): a failed attempt that streamed before it failed counts under error.'),
  apiErrors: api.counter('hermes_api_errors_total', { ...API, reason: OPEN, error_class: OPEN, status_code: OPEN, retryable: VALUES.retryable }, 'agent',
    'Failed provider API attempts by failover reason, exception class (error_class), HTTP status code and retryability.'),
  apiRetries: api.counter('hermes_api_retries_total', { ...API, reason: OPEN }, 'agent',
    'Failed provider API attempts after which Hermes retries the call.'),
  apiRetriesExhausted: api.counter('hermes_api_retries_exhausted_total', { ...API, reason: OPEN }, 'agent',
    'Failed provider API attempts that end the logical call (not retryable, or out of retries).'),
  tokens: api.counter('hermes_tokens_total', { ...API, token_type: VALUES.token_type }, 'agent',
    'Tokens reported by providers by token type: {token_type} (input is uncached; reasoning is a subset of output).'),
  apiPromptTokens: api.histogram('hermes_api_request_prompt_tokens', API, 'tokens', 'agent',
    'Prompt size (input + cache_read + cache_write tokens) per successful provider call.'),
  apiFinishReasons: api.counter('hermes_api_finish_reasons_total', { ...API, finish_reason: OPEN }, 'agent',
    'Successful provider API attempts by finish reason.'),
  costUsd: api.counter('hermes_cost_usd_total', { ...API, pricing: VALUES.pricing }, 'agent',
    'Cost in USD of successful provider API calls, by how they were priced ({pricing}): hermes is Hermes\' own agent.usage_pricing, config the price table of the config file, included a subscription route (counts 0).'),
  costUnpriced: api.counter('hermes_cost_unpriced_requests_total', { ...API, reason: VALUES.unpriced_reason }, 'agent',
    'Successful provider API calls that could not be priced, never guessed ({reason}): no_usage when the call reported no usage, no_price when neither Hermes nor the price table knows the route or a token type has no price.'),
  apiContextUtilization: api.histogram('hermes_api_context_utilization_ratio', API, 'ratio', 'agent',
    'How full the context window was per successful provider call: prompt tokens (input + cache_read + cache_write) / the context engine\'s window; above 1 counts in +Inf.'),
  apiRequestsInFlight: api.gauge('hermes_api_requests_in_flight', { kind: VALUES.api_kind, provider: OPEN }, 'agent',
    'Provider API attempts started and not yet finished (counted at scrape time from the open spans).'),

  // Turns
  turnsStarted: turns.counter('hermes_turns_started_total', { platform: OPEN, model: OPEN }, 'agent',
    'User turns started (pre_llm_call).'),
  turnsFinished: turns.counter('hermes_turns_finished_total', { platform: OPEN, model: OPEN, outcome: VALUES.turn_outcome, exit_reason: OPEN }, 'agent',
    'User turns finished (on_session_end fires once per turn) by outcome ({outcome}) and exit reason.'),
  turnDuration: turns.histogram('hermes_turn_duration_seconds', { platform: OPEN, outcome: VALUES.turn_outcome }, 'turn_seconds', 'agent',
    'Turn duration from pre_llm_call to on_session_end (observed times), or turn_duration_ms of an envelope turn_end.'),
  turnApiCalls: turns.histogram('hermes_turn_api_calls', { platform: OPEN }, 'count', 'agent',
    'Provider API attempts per finished turn.'),
  turnToolCalls: turns.histogram('hermes_turn_tool_calls', { platform: OPEN }, 'count', 'agent',
    'Tool calls per finished turn.'),

  // Tools
  toolCalls: tools.counter('hermes_tool_calls_total', { tool: OPEN, status: VALUES.tool_status }, 'agent',
    'Finished tool calls by status ({status}, other).'),
  toolCallDuration: tools.histogram('hermes_tool_call_duration_seconds', { tool: OPEN, status: VALUES.tool_status }, 'tool_seconds', 'agent',
    'Tool call duration.'),
  toolErrors: tools.counter('hermes_tool_errors_total', { tool: OPEN, error_type: VALUES.tool_error_type }, 'agent',
    'Tool calls that did not finish ok, by error type.'),
  toolCallsInFlight: tools.gauge('hermes_tool_calls_in_flight', { tool: OPEN }, 'agent',
    'Tool calls started and not yet finished (counted at scrape time from the open spans).'),

  // Approvals
  approvalRequests: approvals.counter('hermes_approval_requests_total', { surface: VALUES.approval_surface, pattern_key: OPEN }, 'agent',
    'Approval requests by surface and dangerous-command pattern.'),
  approvalDecisions: approvals.counter('hermes_approval_decisions_total', { surface: VALUES.approval_surface, pattern_key: OPEN, choice: VALUES.approval_choice }, 'agent',
    'Approval decisions by surface, pattern and choice.'),
  approvalWait: approvals.histogram('hermes_approval_wait_seconds', { surface: VALUES.approval_surface, choice: VALUES.approval_choice }, 'tool_seconds', 'agent',
    'Observed time from approval request to response.'),
  approvalsPending: approvals.gauge('hermes_approvals_pending', { surface: VALUES.approval_surface }, 'agent',
    'Approval requests without a response yet (counted at scrape time from the open spans).'),

  // Sessions
  sessionsStarted: sessions.counter('hermes_sessions_started_total', { platform: OPEN }, 'agent',
    'Sessions started (on_session_start).'),
  sessionsFinalized: sessions.counter('hermes_sessions_finalized_total', { platform: OPEN }, 'agent',
    'Sessions finalized (on_session_finalize).'),
  sessionResets: sessions.counter('hermes_session_resets_total', { platform: OPEN }, 'agent',
    'Session resets (on_session_reset).'),
  sessionsActive: sessions.gauge('hermes_sessions_active', { platform: OPEN }, 'agent',
    'Sessions started and not yet finalized (idle sessions expire after the session TTL; counted at scrape time).'),
  sessionEvents: sessions.counter('hermes_session_events_total', { event: VALUES.session_event }, 'agent',
    'Envelope session_event lifecycle events ({event}).'),

  // Subagents
  subagentsStarted: subagents.counter('hermes_subagents_started_total', { role: OPEN }, 'agent',
    'Subagents started by role.'),
  subagentsFinished: subagents.counter('hermes_subagents_finished_total', { role: OPEN, status: VALUES.subagent_status }, 'agent',
    'Subagents finished by role and status.'),
  subagentDuration: subagents.histogram('hermes_subagent_duration_seconds', { role: OPEN, status: VALUES.subagent_status }, 'turn_seconds', 'agent',
    'Subagent run duration.'),
  subagentsActive: subagents.gauge('hermes_subagents_active', { role: OPEN }, 'agent',
    'Subagents started and not yet stopped (counted at scrape time from the open spans).'),

  // Interrupts
  agentInterrupts: interrupts.counter('hermes_agent_interrupts_total', { platform: OPEN, reason: { sameAs: 'interrupt_reason' } }, 'agent',
    'Running turns interrupted (agent_loop_stopped: /stop, or /new while a turn runs) by platform and interrupt reason.'),

  // Agent runs and memory (envelope events)
  agentRuns: runs.counter('hermes_agent_runs_total', { stop_reason: OPEN }, 'agent',
    'Agent runs finished (envelope agent_end) by stop reason.'),
  agentRunDuration: runs.histogram('hermes_agent_run_duration_seconds', { stop_reason: OPEN }, 'turn_seconds', 'agent',
    'Agent run duration (envelope agent_end run_duration_ms).'),
  memoryWrites: runs.counter('hermes_memory_writes_total', { memory_provider: OPEN, action: OPEN }, 'agent',
    'Memory writes (envelope memory_write).'),
  memoryWriteBytes: runs.counter('hermes_memory_write_bytes_total', { memory_provider: OPEN, action: OPEN }, 'agent',
    'Bytes written to memory (envelope memory_write size_bytes).'),

  // OpenTelemetry GenAI semantic conventions (opt-in, --metrics.semconv): the same provider calls
  // under the names OpenTelemetry dashboards expect. Provider, model and error type are the
  // guarded values of the provider, model and reason labels.
  genAiOperationDuration: {
    ...api.histogram('gen_ai_client_operation_duration_seconds',
      { gen_ai_operation_name: VALUES.gen_ai_operation, gen_ai_provider_name: { sameAs: 'provider' }, gen_ai_request_model: { sameAs: 'model' }, error_type: { sameAs: 'reason' } },
      'genai_seconds', 'agent',
      'GenAI operation duration (OpenTelemetry gen_ai.client.operation.duration; exported with --metrics.semconv): each provider API attempt as a chat operation; error_type is the failover reason, empty on success.'),
    optIn: 'semconv',
  },
  genAiTokenUsage: {
    ...api.histogram('gen_ai_client_token_usage',
      { gen_ai_operation_name: VALUES.gen_ai_operation, gen_ai_provider_name: { sameAs: 'provider' }, gen_ai_request_model: { sameAs: 'model' }, gen_ai_token_type: VALUES.gen_ai_token_type },
      'genai_tokens', 'agent',
      'Tokens per successful provider call (OpenTelemetry gen_ai.client.token.usage; exported with --metrics.semconv) by token type ({gen_ai_token_type}): input is the whole prompt, cached parts included.'),
    optIn: 'semconv',
  },

  // Delivery health
  pluginCallbacksDropped: delivery.counter('hermes_plugin_callbacks_dropped_total', { hook: VALUES.plugin_hook, reason: VALUES.plugin_drop_reason }, 'delivery',
    'Hook callbacks the bridge plugin dropped inside Hermes, from its heartbeats (sum of deltas across plugin instances), by reason ({reason}).'),
  pluginInstances: delivery.gauge('hermes_plugin_instances', { state: VALUES.plugin_state }, 'delivery',
    'Bridge plugin instances seen: live (heartbeat within 3 intervals) or stale.'),
  pluginInfo: plugins.gauge('hermes_plugin_info', { hermes_version: OPEN, plugin_version: OPEN, profile: OPEN }, 'delivery',
    'Live bridge plugin instances (heartbeat within 3 intervals) by the Hermes version of their host, their own version and their Hermes profile, from their heartbeats.'),
  pluginValuesRefused: plugins.counter('hermes_plugin_values_refused_total', { field: VALUES.refused_field }, 'delivery',
    'String values the bridge plugin kept inside Hermes because they did not match their field\'s grammar (an id or an identifier), from its heartbeats (sum of deltas across plugin instances), by field.'),
  pluginLastSeen: delivery.gauge('hermes_plugin_last_seen_timestamp_seconds', {}, 'delivery',
    'Time the newest heartbeat or event from any bridge plugin instance arrived.'),
  eventsLost: delivery.counter('hermes_sidecar_events_lost_total', {}, 'delivery',
    'Gaps in plugin sequence numbers: events that left Hermes but never arrived. A gap is counted once settled (see Sequence accounting below); an event arriving before that is applied and counted as late instead.'),
  eventsLate: delivery.counter('hermes_sidecar_events_late_total', {}, 'delivery',
    'Plugin events that arrived after a higher sequence number of their instance, inside a still-open gap: applied once, not counted as lost.'),
  eventsDuplicate: delivery.counter('hermes_sidecar_events_duplicate_total', {}, 'delivery',
    'Events already applied (a retried plugin batch, or a webhook delivery id applied before); not applied again.'),
  sequenceResets: delivery.counter('hermes_sidecar_sequence_resets_total', { reason: VALUES.sequence_reset_reason }, 'delivery',
    'New epochs of plugin sequence numbers ({reason}): jump, a number (or heartbeat acked_seq) more than --sequence.window away from every epoch of its instance (nothing is counted lost or duplicate for the jump); restart, a new numbering under the same instance (a new heartbeat boot, or acked_seq 0 without one).'),
  eventsDiscarded: delivery.counter('hermes_sidecar_events_discarded_total', { reason: VALUES.discard_reason }, 'delivery',
    'Plugin events answered 202 but not applied, by reason ({reason}): after_lost, its seq had already been counted lost, so applying it would make lost + applied disagree; beyond_memory, its seq is older than what the sidecar remembers of its instance (below an epoch floor, a forgotten range, or before an eviction), so it may have been applied already.'),
  heartbeatsStale: delivery.counter('hermes_sidecar_heartbeats_stale_total', { reason: VALUES.stale_heartbeat_reason }, 'delivery',
    'Plugin heartbeats ignored as stale (delayed or replayed), by reason ({reason}): boot, an earlier boot of the instance; acked_seq, lower than one already seen; dropped, a drop total lower than stored. They settle nothing; their lower totals are ignored.'),
  heartbeatKeysFolded: delivery.counter('hermes_sidecar_heartbeat_keys_folded_total', { key: VALUES.drop_key_part }, 'self',
    'Plugin heartbeat drop reports whose {key} is not a known one, folded into "other" before they are stored.'),
  orphanedSpans: spans.counter('hermes_sidecar_orphaned_spans_total', { kind: VALUES.span_kind }, 'delivery',
    'Started spans ({kind}) whose terminal event never came within the span TTL, or that were evicted from a full map.'),

  // Sidecar self-metrics
  eventsReceived: ingestor.counter('hermes_sidecar_events_received_total', { source: VALUES.event_source, event: VALUES.event }, 'self',
    'Events accepted for processing by source ({source}) and hook name.',
    // Sources × event names would be 200 zero series; a source appears with its first event.
    { preinit: false }),
  eventsRejected: ingestErrors.counter('hermes_sidecar_events_rejected_total', { reason: VALUES.rejection_reason }, 'self',
    'Events (or whole requests) refused at the edge, by reason ({reason}).'),
  eventsDropped: ingestor.counter('hermes_sidecar_events_dropped_total', { reason: VALUES.drop_reason }, 'self',
    'Events not applied, by reason ({reason}): the queue was full or the sidecar was shutting down (the sender is told to retry), or applying the event failed.'),
  eventsIgnored: dispatcher.counter('hermes_sidecar_events_ignored_total', { event: VALUES.ignored_event }, 'self',
    'Valid events that have no metric mapping.',
    // Ignored events are expected noise; a zero per known name would only lengthen the scrape.
    { preinit: false }),
  lastEvent: dispatcher.gauge('hermes_sidecar_last_event_timestamp_seconds', {}, 'self',
    'Time the newest event was applied.'),
  queueDepth: ingestor.gauge('hermes_sidecar_queue_depth', {}, 'self',
    'Batches waiting in the ingest queue or being applied.'),
  queueCapacity: ingestor.gauge('hermes_sidecar_queue_capacity', {}, 'self',
    'Configured bound of the ingest queue, in batches.'),
  queueEvents: ingestor.gauge('hermes_sidecar_queue_events', {}, 'self',
    'Events in the batches waiting in the ingest queue or being applied.'),
  queueEventsCapacity: ingestor.gauge('hermes_sidecar_queue_events_capacity', {}, 'self',
    'Configured bound of the ingest queue, in events (--ingest.queue-max-events).'),
  ingestInflightBytes: bodies.gauge('hermes_sidecar_ingest_inflight_bytes', {}, 'self',
    'Bytes of request bodies being read or held on the ingest listener (bounded by --ingest.max-inflight-bytes; a refusal counts in events_rejected_total as inflight_limit).'),
  memoryPressure: memory.gauge('hermes_sidecar_memory_pressure', {}, 'self',
    '1 while the memory guard refuses ingest (503) and /-/ready answers 503, else 0.'),
  memoryLiveBytes: memory.gauge('hermes_sidecar_memory_live_bytes', {}, 'self',
    'Live memory the guard measures: V8 heap in use plus memory held by Buffers and ArrayBuffers.'),
  valuesRejected: stateTables.counter('hermes_sidecar_values_rejected_total', { field: VALUES.bounded_field }, 'self',
    'Event values outside their bounds, treated as absent, by field: numbers past their plausible bound, ids and names longer than their byte limit (--ingest.max-id-bytes, --ingest.max-label-value-bytes); the event still counts (see Value bounds below).'),
  ingestRequests: ingestApp.counter('hermes_sidecar_ingest_requests_total', { route: VALUES.ingest_route, code: VALUES.ingest_code }, 'self',
    'HTTP ingest requests by route and status code.',
    // Not every code is possible on every route: a zero per combination would only mislead.
    { preinit: false }),
  ingestBatchEvents: admission.histogram('hermes_sidecar_ingest_batch_events', {}, 'batch_events', 'self',
    'Events (lines) per ingest request.'),
  labelOverflow: labelGuard.counter('hermes_sidecar_label_overflow_total', { label: OPEN_LABELS }, 'self',
    'Label values folded into "other" by the cardinality guard.'),
  labelValuesCut: labelGuard.counter('hermes_sidecar_label_values_cut_total', { label: OPEN_LABELS }, 'self',
    'Raw label values longer than --ingest.max-label-value-bytes that reached the label guard and were cut to it before sanitizing (the event readers already refuse such names, so this stays 0 unless a new caller skips them).'),
  labelCacheEvictions: labelGuard.counter('hermes_sidecar_label_cache_evictions_total', { label: OPEN_LABELS }, 'self',
    'Raw spellings dropped from the label guard\'s bounded cache of resolved values (least recently used first); an evicted spelling is resolved again, with the same result, when it returns.'),
  stateEvictions: stateTables.counter('hermes_sidecar_state_evictions_total', { table: VALUES.state_table }, 'self',
    'Entries evicted from a full state table (too many entries, or too many bytes) before they expired, by table ({table}).'),
  liveSeries: registry.gauge('hermes_sidecar_series', {}, 'self',
    'Live label sets across agent metrics (a histogram label set counts once).'),
  seriesLimit: registry.gauge('hermes_sidecar_series_limit', {}, 'self',
    'The global cap on live label sets across agent metrics.'),
  seriesOverflow: registry.counter('hermes_sidecar_series_overflow_total', { metric: agentMetricNames }, 'self',
    'New label sets folded into their overflow series (open labels as "other") because the global series cap was reached.'),
  invalidValues: registry.counter('hermes_sidecar_invalid_values_total', {}, 'self',
    'Values refused by the metric storage (not finite, or negative for a counter or histogram): a bug in the sidecar, never stored.'),
  webAuthFailures: webServer.counter('hermes_sidecar_web_auth_failures_total', { reason: VALUES.auth_refusal }, 'self',
    'Requests to the web listener refused by basic auth, by reason ({reason}): bcrypt said no, a recently failed credential refused without bcrypt, or too many verifications waiting (429).'),
  scrapeErrors: web.counter('hermes_sidecar_scrape_errors_total', { stage: VALUES.scrape_stage }, 'self',
    'Failures while rendering /metrics, by stage ({stage}): a collector that threw (collect) or a render that failed and answered 500 (render).'),
  buildInfo: root.gauge('hermes_sidecar_build_info', { version: INFO, revision: INFO, node_version: INFO }, 'self',
    'Build information: package version, git revision at build time and Node.js version; always 1.'),
  connectionsClosed: connections.counter('hermes_sidecar_connections_closed_total', { listener: VALUES.listener, reason: VALUES.connection_close_reason }, 'self',
    'Connections a listener closed itself, by listener and reason ({reason}): refused at --<listener>.max-connections with every connection mid-request (limit), the oldest idle or half-sent one closed to make room at the cap (evicted), request head or whole request too slow (headers_timeout, request_timeout), a response not drained within --<listener>.write-timeout (write_timeout), more pipelined requests waiting than allowed (pipeline_limit).'),
  connectionsOpen: connections.gauge('hermes_sidecar_connections_open', { listener: VALUES.listener }, 'self',
    'Connections open on each listener (bounded by --web.max-connections and --ingest.max-connections).'),
  scrapeAnswersDropped: web.counter('hermes_sidecar_scrape_answers_dropped_total', {}, 'self',
    'Scrape answers dropped with their connection before the peer had read them, to keep the bytes of unread answers under 32 MiB: those peers had not read an older render than everyone else.'),
  connectionsLimit: connections.gauge('hermes_sidecar_connections_limit', { listener: VALUES.listener }, 'self',
    'The configured cap on open connections of each listener.'),
  scrapeRenders: web.counter('hermes_sidecar_scrape_renders_total', {}, 'self',
    'Renders of the exposition made for /metrics. Every scrape that waited for a render shares it, so under a crowd of scrapers this grows far slower than the scrapes.'),
  scrapesPaced: web.counter('hermes_sidecar_scrapes_paced_total', {}, 'self',
    'Scrapes that waited for a later render because one had run too recently: renders start at most once per --web.min-render-interval and take at most half the time, however many scrapers come.'),
  connectionsStalled: connections.gauge('hermes_sidecar_connections_stalled', { listener: VALUES.listener }, 'self',
    'Connections of each listener whose peer has taken none of its answer for 200 ms, as of the last sweep (every 100 ms): the first to be evicted at the cap.'),
} as const satisfies Record<string, MetricSpec>;

export type Catalogue = typeof CATALOGUE;
export type MetricKey = keyof Catalogue;
/** The modules that own metrics (src/ paths without extension). */
export type MetricOwner = Catalogue[MetricKey]['owner'];
/** The metrics one module owns. */
export type OwnedKeys<O extends MetricOwner> = { [K in MetricKey]: Catalogue[K]['owner'] extends O ? K : never }[MetricKey];

/** The type of one label's value: a closed value, `unknown` or `other`; any string for the rest. */
type ValueType<V> = V extends readonly (infer T extends string)[] ? T | 'unknown' | 'other' : string;
export type LabelsOf<S extends MetricSpec> = { readonly [K in keyof S['labels']]: ValueType<S['labels'][K]> };

/** Every metric name the sidecar exports itself (prom-client default metrics aside). */
export const METRIC_NAMES: readonly string[] = Object.values(CATALOGUE).map((spec) => spec.name);

/** Prefixes of the prom-client default metrics (process and Node.js runtime). */
export const DEFAULT_METRIC_PREFIXES = ['process_', 'nodejs_'] as const;
