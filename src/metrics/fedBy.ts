/**
 * Which hook and field feed each catalogue metric, and since which Hermes behaviour: the
 * "fed by" column of docs/metrics.md. The catalogue (src/catalogue.ts) checks its keys are
 * exactly the catalogue's, so a new metric cannot ship without saying what feeds it.
 *
 * `feed` says what a user of the tested Hermes release (NousResearch/hermes-agent 306e2d2, July
 * 2026, through the bridge plugin) sees:
 *  - `hermes`: fed by hooks that release calls;
 *  - `partial`: some of its labels or series need a newer Hermes or a particular path;
 *  - `envelope`: fed only by the envelope variant (register_observer_hook), which no Hermes
 *    release has: the dashboards and rules do not show these;
 *  - `plugin` / `sidecar`: delivery and self metrics of this project.
 */

export type Feed = 'hermes' | 'partial' | 'envelope' | 'plugin' | 'sidecar';

export interface FedBy {
  readonly feed: Feed;
  /** Hooks and fields (Markdown). */
  readonly by: string;
}

const TESTED = 'Hermes 306e2d2 (July 2026)';
const AUXILIARY = '`kind="auxiliary"` needs `pre/post_auxiliary_call` (newer Hermes; not in VALID_HOOKS of ' + TESTED + ')';

export const FED_BY = {
  apiRequests: { feed: 'hermes', by: `\`post_api_request\` (success), \`api_request_error\` (error); ${AUXILIARY}` },
  apiRequestDuration: { feed: 'hermes', by: '`api_duration` (s) of `post_api_request` / `api_request_error`' },
  apiTimeToFirstChunk: { feed: 'partial', by: '`first_chunk_at` − `started_at` of `post_api_request` (`outcome="success"`); `outcome="error"` from `api_request_error`\'s `first_chunk_at`, which Hermes 0.21 passes (agent/api_request_hooks.py); streamed calls only, and only the first attempt of a call to end (later ones count in hermes_sidecar_time_to_first_chunk_unmeasured_total)' },
  apiErrors: { feed: 'hermes', by: '`api_request_error`: `reason`, `error_type` (the plugin forwards `error["type"]`) as `error_class`, `status_code`, `retryable`' },
  apiRetries: { feed: 'hermes', by: '`api_request_error`: `retryable`, `retry_count`, `max_retries`' },
  apiRetriesExhausted: { feed: 'hermes', by: '`api_request_error`: `retryable`, `retry_count`, `max_retries`' },
  tokens: { feed: 'hermes', by: '`post_api_request` `usage` (`_usage_summary_for_api_request_hook`): `input_tokens`, `cache_read_tokens`, `cache_write_tokens`, `output_tokens`, `reasoning_tokens`; a type whose `usage.reported_usage_fields` flag is false (Hermes 0.21) is not counted, not counted as 0' },
  apiPromptTokens: { feed: 'hermes', by: '`post_api_request` `usage.prompt_tokens`' },
  apiFinishReasons: { feed: 'hermes', by: '`post_api_request` `finish_reason`' },
  costUsd: { feed: 'hermes', by: '`post_api_request`: `cost_usd`/`cost_status` (the plugin\'s sender thread, Hermes\' `agent.usage_pricing.estimate_usage_cost`), else `usage` × the config file\'s `prices:`' },
  costUnpriced: { feed: 'hermes', by: '`post_api_request` without `cost_usd` and without a `prices:` entry, or without `usage`' },
  apiContextUtilization: { feed: 'partial', by: '`post_api_request`: prompt tokens of `usage` / `context_length`, which only Hermes after 0.21.3 passes (agent/turn_response_intake.py on main)' },
  apiOutputTokensPerSecond: { feed: 'hermes', by: '`post_api_request`: `usage.output_tokens` / (`api_duration` − (`first_chunk_at` − `started_at`)); streamed calls only' },
  apiRequestsInFlight: { feed: 'hermes', by: '`pre_api_request` → `post_api_request` / `api_request_error` by `api_request_id`' },
  genAiOperationDuration: { feed: 'hermes', by: '`api_duration` (s) of `post_api_request` / `api_request_error` (`reason` as `error_type`); with `--metrics.semconv`' },
  genAiTokenUsage: { feed: 'hermes', by: '`post_api_request` `usage`: `prompt_tokens` (else input + cache read + cache write) as input, `output_tokens` as output; with `--metrics.semconv`' },

  turnsStarted: { feed: 'hermes', by: '`pre_llm_call`: `platform`, `model`' },
  turnsFinished: { feed: 'partial', by: `\`on_session_end\` by \`turn_id\`: outcome from \`failed\`/\`interrupted\`/\`completed\`, \`exit_reason\` the leading identifier of \`turn_exit_reason\` (the plugin sends nothing else of it; the reasons Hermes 0.21 emits are always kept, others pass the cap); both from Hermes 0.21 (agent/turn_finalizer.py finalize_turn), so on ${TESTED} turns that end normally read \`exit_reason="unknown"\` and never \`outcome="failed"\`. A CLI exit (\`reason\`, no \`turn_id\`) ends the session's open turns with \`exit_reason\` = that reason` },
  turnDuration: { feed: 'hermes', by: '`pre_llm_call` → `on_session_end` by `turn_id` (observed times)' },
  turnApiCalls: { feed: 'hermes', by: '`turn_id` of `pre_api_request`/`post_api_request`/`api_request_error` per turn' },
  turnToolCalls: { feed: 'hermes', by: '`turn_id` of `pre_tool_call` per turn' },

  toolCalls: { feed: 'hermes', by: '`post_tool_call`: `tool_name`, `status`' },
  toolCallDuration: { feed: 'hermes', by: '`post_tool_call` `duration_ms`' },
  toolErrors: { feed: 'hermes', by: '`post_tool_call`: `status` not ok, `error_type`' },
  toolCallsInFlight: { feed: 'hermes', by: '`pre_tool_call` → `post_tool_call` by `tool_call_id`' },

  approvalRequests: { feed: 'hermes', by: '`pre_approval_request`: `surface`, `pattern_key`' },
  approvalDecisions: { feed: 'hermes', by: '`post_approval_response`: `surface`, `pattern_key`, `choice` (`decided_by="aux_llm"` means smart); `choice="escalated"` when a smart request is followed by a cli/gateway request for the same operation' },
  approvalWait: { feed: 'hermes', by: 'observed time from `pre_approval_request` to `post_approval_response` (by `tool_call_id`, else `session_key` and `turn_id` when Hermes 0.21 sets it, else `session_key`), or to the escalation' },
  approvalsPending: { feed: 'hermes', by: '`pre_approval_request` without its response yet' },

  sessionsStarted: { feed: 'hermes', by: '`on_session_start` `platform`' },
  sessionsFinalized: { feed: 'hermes', by: '`on_session_finalize` `platform`' },
  sessionResets: { feed: 'hermes', by: '`on_session_reset` `platform`' },
  sessionsActive: { feed: 'hermes', by: '`on_session_start` → `on_session_finalize` by `session_id`, expiring after the session TTL' },
  sessionEvents: { feed: 'envelope', by: 'envelope `session_event` `event`' },
  sessionCost: { feed: 'hermes', by: '`on_session_start` → `on_session_finalize` by `session_id`: the cost of its successful `post_api_request` calls (as `hermes_cost_usd_total`; auxiliary calls are not added), each found through its `turn_id` and the `session_id` of that turn\'s `pre_llm_call`' },
  sessionTokens: { feed: 'hermes', by: '`on_session_start` → `on_session_finalize` by `session_id`: `usage` of its successful `post_api_request` calls, each found through its `turn_id` and the `session_id` of that turn\'s `pre_llm_call`' },
  sessionTurns: { feed: 'hermes', by: '`pre_llm_call` `session_id` between `on_session_start` and `on_session_finalize`' },
  sessionDuration: { feed: 'hermes', by: '`on_session_start` → `on_session_finalize` by `session_id` (observed times)' },

  subagentsStarted: { feed: 'hermes', by: '`subagent_start` `child_role`' },
  subagentsFinished: { feed: 'hermes', by: '`subagent_stop`: `child_role`, `child_status`' },
  subagentDuration: { feed: 'hermes', by: '`subagent_stop` `duration_ms`' },
  subagentsActive: { feed: 'hermes', by: '`subagent_start` → `subagent_stop` by `child_session_id`' },

  agentInterrupts: { feed: 'partial', by: '`agent_loop_stopped` (Hermes 0.21: gateway/run_agent_cache.py `_interrupt_and_clear_session`, the TUI\'s `_interrupt_session_turn`): `platform`, `reason`' },

  agentRuns: { feed: 'envelope', by: 'envelope `agent_end` `stop_reason`' },
  agentRunDuration: { feed: 'envelope', by: 'envelope `agent_end` `run_duration_ms`' },
  memoryWrites: { feed: 'envelope', by: 'envelope `memory_write`: `memory_provider`, `action`' },
  memoryWriteBytes: { feed: 'envelope', by: 'envelope `memory_write` `size_bytes`' },

  pluginCallbacksDropped: { feed: 'plugin', by: '`plugin_heartbeat` `dropped` (deltas per plugin instance)' },
  pluginInstances: { feed: 'plugin', by: '`plugin_heartbeat` arrival and `interval_seconds`' },
  pluginInfo: { feed: 'plugin', by: '`plugin_heartbeat`: `hermes_version`, `plugin_version`, `profile` (Hermes 0.21 `ctx.profile_name`) of the instances whose heartbeat is live' },
  pluginValuesRefused: { feed: 'plugin', by: '`plugin_heartbeat` `refused_fields` (deltas per plugin instance)' },
  pluginLastSeen: { feed: 'plugin', by: 'any plugin line or heartbeat' },
  eventsLost: { feed: 'plugin', by: 'gaps in the plugin lines\' `instance`/`seq`, and heartbeats\' `acked_seq`' },
  eventsLate: { feed: 'plugin', by: 'an `instance`/`seq` inside an open gap' },
  eventsDuplicate: { feed: 'plugin', by: 'repeated `instance`/`seq`' },
  sequenceResets: { feed: 'plugin', by: '`seq` or heartbeat `acked_seq` further than `--sequence.window` from every epoch; heartbeat `boot`' },
  eventsDiscarded: { feed: 'plugin', by: '`instance`/`seq` settled lost or beyond memory' },
  heartbeatsStale: { feed: 'plugin', by: 'heartbeat `boot`, `acked_seq` and `dropped` totals' },
  heartbeatKeysFolded: { feed: 'plugin', by: 'heartbeat `dropped` keys with an unknown hook or reason' },
  orphanedSpans: { feed: 'sidecar', by: 'span tables (TTL and size bound)' },
  sessionsInferred: { feed: 'hermes', by: '`pre_llm_call` `session_id`, `platform` of a session with no `on_session_start` seen' },
  sessionsUnobserved: { feed: 'sidecar', by: 'the session table (TTL and size bound), `subagent_stop` `child_session_id`, `on_session_finalize` without a seen start, unpriced calls' },
  firstChunkUnmeasured: { feed: 'sidecar', by: '`api_request_error` or `post_api_request` with `first_chunk_at` whose `api_request_id` had a failed attempt before' },
  outputSpeedUnmeasured: { feed: 'sidecar', by: '`post_api_request` with `first_chunk_at` but no positive time after it, or no `usage.output_tokens`' },

  eventsReceived: { feed: 'sidecar', by: 'ingest' },
  eventsRejected: { feed: 'sidecar', by: 'ingest' },
  eventsDropped: { feed: 'sidecar', by: 'ingest' },
  eventsIgnored: { feed: 'sidecar', by: 'ingest: hooks with no metric mapping' },
  lastEvent: { feed: 'sidecar', by: 'ingest' },
  queueDepth: { feed: 'sidecar', by: 'ingest queue' },
  queueCapacity: { feed: 'sidecar', by: 'configuration' },
  queueEvents: { feed: 'sidecar', by: 'ingest queue' },
  queueEventsCapacity: { feed: 'sidecar', by: 'configuration' },
  ingestInflightBytes: { feed: 'sidecar', by: 'ingest body reader' },
  memoryPressure: { feed: 'sidecar', by: 'memory guard' },
  memoryLiveBytes: { feed: 'sidecar', by: 'memory guard' },
  valuesRejected: { feed: 'sidecar', by: 'numeric fields of any event, durations between two `observed_at`, and ids and names of any event or webhook delivery' },
  webAuthFailures: { feed: 'sidecar', by: 'web listener basic auth' },
  ingestRequests: { feed: 'sidecar', by: 'ingest' },
  ingestBatchEvents: { feed: 'sidecar', by: 'ingest' },
  labelOverflow: { feed: 'sidecar', by: 'label guard' },
  labelValuesCut: { feed: 'sidecar', by: 'label guard' },
  labelCacheEvictions: { feed: 'sidecar', by: 'label guard' },
  stateEvictions: { feed: 'sidecar', by: 'state tables' },
  liveSeries: { feed: 'sidecar', by: 'series storage' },
  invalidValues: { feed: 'sidecar', by: 'series storage: values refused as not finite or negative' },
  nativeHalvings: { feed: 'sidecar', by: 'series storage: native histogram buckets past --metrics.native-histogram-max-buckets' },
  seriesLimit: { feed: 'sidecar', by: 'configuration' },
  seriesOverflow: { feed: 'sidecar', by: 'series storage' },
  seriesExpired: { feed: 'sidecar', by: 'the expiry sweep (`--metrics.series-ttl`, every `--correlator.sweep-interval`)' },
  scrapeErrors: { feed: 'sidecar', by: '/metrics' },
  buildInfo: { feed: 'sidecar', by: 'build' },
  connectionsClosed: { feed: 'sidecar', by: 'web and ingest listeners' },
  connectionsOpen: { feed: 'sidecar', by: 'web and ingest listeners' },
  connectionsLimit: { feed: 'sidecar', by: 'configuration' },
  scrapeAnswersDropped: { feed: 'sidecar', by: '/metrics' },
  scrapeRenders: { feed: 'sidecar', by: '/metrics' },
  scrapesPaced: { feed: 'sidecar', by: '/metrics' },
  connectionsStalled: { feed: 'sidecar', by: 'web and ingest listeners' },
} as const satisfies Record<string, FedBy>;

/** Metrics no Hermes release feeds (envelope variant only): not on the dashboards, not in rules. */
export const ENVELOPE_ONLY_METRICS: readonly (keyof typeof FED_BY)[] = (Object.keys(FED_BY) as (keyof typeof FED_BY)[]).filter(
  (key) => FED_BY[key].feed === 'envelope',
);
