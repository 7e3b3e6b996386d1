/**
 * The metric catalogue: the product's public contract (docs/metrics.md is generated from it).
 *
 * Every metric the sidecar exports is declared here and nowhere else; input never creates a
 * metric name. Dashboards, rules and their tests import this list to check that every name
 * they use exists.
 */

/** Bucket sets from METRICS.md; each can be overridden in the config file (`buckets:`). */
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
} as const satisfies Record<string, readonly number[]>;

export type BucketSetName = keyof typeof DEFAULT_BUCKETS;
export type BucketSets = Record<BucketSetName, readonly number[]>;

/**
 * `agent` metrics describe Hermes and count towards the global series figures;
 * `delivery` and `self` metrics describe the pipeline and are never capped.
 */
export type MetricScope = 'agent' | 'delivery' | 'self';

export interface MetricSpec {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly labelNames: readonly string[];
  readonly buckets?: BucketSetName;
  readonly scope: MetricScope;
}

function counter<const L extends readonly string[]>(
  name: string,
  labelNames: L,
  scope: MetricScope,
  help: string,
) {
  return { name, help, type: 'counter', labelNames, scope } as const;
}

function gauge<const L extends readonly string[]>(
  name: string,
  labelNames: L,
  scope: MetricScope,
  help: string,
) {
  return { name, help, type: 'gauge', labelNames, scope } as const;
}

function histogram<const L extends readonly string[], const B extends BucketSetName>(
  name: string,
  labelNames: L,
  buckets: B,
  scope: MetricScope,
  help: string,
) {
  return { name, help, type: 'histogram', labelNames, buckets, scope } as const;
}

const API = ['kind', 'provider', 'model'] as const;

export const CATALOGUE = {
  // Provider API calls
  apiRequests: counter('hermes_api_requests_total', [...API, 'outcome'], 'agent',
    'Finished provider API attempts by outcome (success on post_api_request, error on api_request_error).'),
  apiRequestDuration: histogram('hermes_api_request_duration_seconds', [...API, 'outcome'], 'api_seconds', 'agent',
    'Provider API call duration as Hermes reports it (from the start of the logical call, so it includes earlier failed attempts).'),
  apiTimeToFirstChunk: histogram('hermes_api_time_to_first_chunk_seconds', API, 'api_seconds', 'agent',
    'Time from the start of a streamed provider call to its first chunk.'),
  apiErrors: counter('hermes_api_errors_total', [...API, 'reason', 'status_code', 'retryable'], 'agent',
    'Failed provider API attempts by failover reason, HTTP status code and retryability.'),
  apiRetries: counter('hermes_api_retries_total', [...API, 'reason'], 'agent',
    'Failed provider API attempts after which Hermes retries the call.'),
  apiRetriesExhausted: counter('hermes_api_retries_exhausted_total', [...API, 'reason'], 'agent',
    'Failed provider API attempts that end the logical call (not retryable, or out of retries).'),
  tokens: counter('hermes_tokens_total', [...API, 'type'], 'agent',
    'Tokens reported by providers by type: input (uncached), cache_read, cache_write, output, reasoning (a subset of output).'),
  apiPromptTokens: histogram('hermes_api_request_prompt_tokens', API, 'tokens', 'agent',
    'Prompt size (input + cache_read + cache_write tokens) per successful provider call.'),
  apiFinishReasons: counter('hermes_api_finish_reasons_total', [...API, 'finish_reason'], 'agent',
    'Successful provider API attempts by finish reason.'),
  apiRequestsInFlight: gauge('hermes_api_requests_in_flight', ['kind', 'provider'], 'agent',
    'Provider API attempts started and not yet finished.'),

  // Turns
  turnsStarted: counter('hermes_turns_started_total', ['platform', 'model'], 'agent',
    'User turns started (pre_llm_call).'),
  turnsFinished: counter('hermes_turns_finished_total', ['platform', 'model', 'outcome', 'exit_reason'], 'agent',
    'User turns finished (on_session_end fires once per turn) by outcome and exit reason.'),
  turnDuration: histogram('hermes_turn_duration_seconds', ['platform', 'outcome'], 'turn_seconds', 'agent',
    'Turn duration from pre_llm_call to on_session_end (observed times), or turn_duration_ms of an envelope turn_end.'),
  turnApiCalls: histogram('hermes_turn_api_calls', ['platform'], 'count', 'agent',
    'Provider API attempts per finished turn.'),
  turnToolCalls: histogram('hermes_turn_tool_calls', ['platform'], 'count', 'agent',
    'Tool calls per finished turn.'),

  // Tools
  toolCalls: counter('hermes_tool_calls_total', ['tool', 'status'], 'agent',
    'Finished tool calls by status (ok, error, blocked, cancelled, timeout, other).'),
  toolCallDuration: histogram('hermes_tool_call_duration_seconds', ['tool', 'status'], 'tool_seconds', 'agent',
    'Tool call duration.'),
  toolErrors: counter('hermes_tool_errors_total', ['tool', 'error_type'], 'agent',
    'Tool calls that did not finish ok, by error type.'),
  toolCallsInFlight: gauge('hermes_tool_calls_in_flight', ['tool'], 'agent',
    'Tool calls started and not yet finished.'),

  // Approvals
  approvalRequests: counter('hermes_approval_requests_total', ['surface', 'pattern_key'], 'agent',
    'Approval requests by surface and dangerous-command pattern.'),
  approvalDecisions: counter('hermes_approval_decisions_total', ['surface', 'pattern_key', 'choice'], 'agent',
    'Approval decisions by surface, pattern and choice.'),
  approvalWait: histogram('hermes_approval_wait_seconds', ['surface', 'choice'], 'tool_seconds', 'agent',
    'Observed time from approval request to response.'),
  approvalsPending: gauge('hermes_approvals_pending', ['surface'], 'agent',
    'Approval requests without a response yet.'),

  // Sessions
  sessionsStarted: counter('hermes_sessions_started_total', ['platform'], 'agent',
    'Sessions started (on_session_start).'),
  sessionsFinalized: counter('hermes_sessions_finalized_total', ['platform'], 'agent',
    'Sessions finalized (on_session_finalize).'),
  sessionResets: counter('hermes_session_resets_total', ['platform'], 'agent',
    'Session resets (on_session_reset).'),
  sessionsActive: gauge('hermes_sessions_active', ['platform'], 'agent',
    'Sessions started and not yet finalized (idle sessions expire after the session TTL).'),
  sessionEvents: counter('hermes_session_events_total', ['event'], 'agent',
    'Envelope session_event lifecycle events (created, switched, reset, resumed).'),

  // Subagents
  subagentsStarted: counter('hermes_subagents_started_total', ['role'], 'agent',
    'Subagents started by role.'),
  subagentsFinished: counter('hermes_subagents_finished_total', ['role', 'status'], 'agent',
    'Subagents finished by role and status.'),
  subagentDuration: histogram('hermes_subagent_duration_seconds', ['role', 'status'], 'turn_seconds', 'agent',
    'Subagent run duration.'),
  subagentsActive: gauge('hermes_subagents_active', ['role'], 'agent',
    'Subagents started and not yet stopped.'),

  // Agent runs and memory (envelope events)
  agentRuns: counter('hermes_agent_runs_total', ['stop_reason'], 'agent',
    'Agent runs finished (envelope agent_end) by stop reason.'),
  agentRunDuration: histogram('hermes_agent_run_duration_seconds', ['stop_reason'], 'turn_seconds', 'agent',
    'Agent run duration (envelope agent_end run_duration_ms).'),
  memoryWrites: counter('hermes_memory_writes_total', ['memory_provider', 'action'], 'agent',
    'Memory writes (envelope memory_write).'),
  memoryWriteBytes: counter('hermes_memory_write_bytes_total', ['memory_provider', 'action'], 'agent',
    'Bytes written to memory (envelope memory_write size_bytes).'),

  // Delivery health
  pluginCallbacksDropped: counter('hermes_plugin_callbacks_dropped_total', ['hook', 'reason'], 'delivery',
    'Hook callbacks the bridge plugin dropped inside Hermes, from its heartbeats (sum of deltas across plugin instances).'),
  pluginInstances: gauge('hermes_plugin_instances', ['state'], 'delivery',
    'Bridge plugin instances seen: live (heartbeat within 3 intervals) or stale.'),
  pluginLastSeen: gauge('hermes_plugin_last_seen_timestamp_seconds', [], 'delivery',
    'Time the newest heartbeat or event from any bridge plugin instance arrived.'),
  eventsLost: counter('hermes_sidecar_events_lost_total', [], 'delivery',
    'Gaps in plugin sequence numbers: events that left Hermes but never arrived.'),
  eventsDuplicate: counter('hermes_sidecar_events_duplicate_total', [], 'delivery',
    'Events whose sequence number was already applied (retried batches); not counted twice.'),
  orphanedSpans: counter('hermes_sidecar_orphaned_spans_total', ['kind'], 'delivery',
    'Started spans whose terminal event never came within the span TTL, or that were evicted from a full map.'),

  // Sidecar self-metrics
  eventsReceived: counter('hermes_sidecar_events_received_total', ['source', 'event'], 'self',
    'Events accepted for processing by source and hook name.'),
  eventsRejected: counter('hermes_sidecar_events_rejected_total', ['reason'], 'self',
    'Events (or whole requests) refused at the edge, by reason.'),
  eventsDropped: counter('hermes_sidecar_events_dropped_total', ['reason'], 'self',
    'Events refused for lack of capacity (queue_full, memory) or because the sidecar was shutting down; the sender is told to retry.'),
  eventsIgnored: counter('hermes_sidecar_events_ignored_total', ['event'], 'self',
    'Valid events that have no metric mapping.'),
  lastEvent: gauge('hermes_sidecar_last_event_timestamp_seconds', [], 'self',
    'Time the newest event was applied.'),
  queueDepth: gauge('hermes_sidecar_queue_depth', [], 'self',
    'Batches waiting in the ingest queue.'),
  queueCapacity: gauge('hermes_sidecar_queue_capacity', [], 'self',
    'Configured bound of the ingest queue, in batches.'),
  ingestRequests: counter('hermes_sidecar_ingest_requests_total', ['route', 'code'], 'self',
    'HTTP ingest requests by route and status code.'),
  ingestBatchEvents: histogram('hermes_sidecar_ingest_batch_events', [], 'batch_events', 'self',
    'Events (lines) per ingest request.'),
  labelOverflow: counter('hermes_sidecar_label_overflow_total', ['label'], 'self',
    'Label values folded into "other" by the cardinality guard.'),
  stateEvictions: counter('hermes_sidecar_state_evictions_total', ['table'], 'self',
    'Entries evicted from a full state table before they expired: plugin_instances (sequence state) or sessions.'),
  series: gauge('hermes_sidecar_series', [], 'self',
    'Live label sets across agent metrics (a histogram label set counts once).'),
  seriesLimit: gauge('hermes_sidecar_series_limit', [], 'self',
    'The global cap on live label sets across agent metrics.'),
  seriesOverflow: counter('hermes_sidecar_series_overflow_total', ['metric'], 'self',
    'New label sets folded into their overflow series (open labels as "other") because the global series cap was reached.'),
  scrapeErrors: counter('hermes_sidecar_scrape_errors_total', ['stage'], 'self',
    'Failures while rendering /metrics: a collector that threw (collect) or a render that failed and answered 500 (render).'),
  buildInfo: gauge('hermes_sidecar_build_info', ['version', 'node_version'], 'self',
    'Build information; always 1.'),
} as const satisfies Record<string, MetricSpec>;

export type Catalogue = typeof CATALOGUE;
export type MetricKey = keyof Catalogue;

/** Every metric name the sidecar exports itself (prom-client default metrics aside). */
export const METRIC_NAMES: readonly string[] = Object.values(CATALOGUE).map((spec) => spec.name);

/** Prefixes of the prom-client default metrics (process and Node.js runtime). */
export const DEFAULT_METRIC_PREFIXES = ['process_', 'nodejs_'] as const;
