/**
 * The event contract's vocabulary: every closed set of values an event or heartbeat field takes
 * that a metric label carries (hook and event names, outcomes, statuses, rejection reasons, the
 * bounded and refused fields), declared once. A closed label takes one of its values, `unknown`
 * when the value is absent, or `other` when it is not listed (closedLabel in
 * src/metrics/labels.ts). The value sets of the pipeline's own state (state tables, span kinds,
 * listeners, ...) are declared by the component that has them, beside its families.
 */

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

/** The closed value sets of the event contract. */
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
    'missing_signature',
    'too_large',
    'unsupported_media_type',
    'memory_limit',
    'inflight_limit',
    'body_timeout',
    'line_too_large',
  ],
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
} as const satisfies Record<string, readonly string[]>;

type ValueSet = keyof typeof VALUES;
export type ValueOf<S extends ValueSet> = (typeof VALUES)[S][number];
