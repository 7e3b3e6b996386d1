/**
 * The per-hook readers that build the one typed event union every shape normalizes into
 * (eventData.ts declares it).
 *
 * Readers pick only the content-free fields a metric needs; content (prompts, messages, args,
 * results, commands, goals, error text) is never read. Aliases of the envelope variant are
 * accepted, and the Hermes name wins when both are present. docs/contract.md lists every field
 * read here with its Hermes call site; test/contract/agreement.test.ts checks these readers
 * against the plugin's table (plugin/hermes_prometheus_bridge/contract.json).
 */
import {
  asBool,
  asCount,
  asId,
  asQuantity,
  asRecord,
  asSecondsFromMillis,
  asString,
  isRecord,
  type Fields,
} from './fields.js';
import { BOUNDS, BoundCheck, type BoundedField } from './bounds.js';
import { fitsBytes, OTHER } from '../wireText.js';
import type { ApiCall, ApiKind, DropReport, EventData, HermesCost, RefusedReport, Usage } from './eventData.js';

export type { ApiCall, ApiKind, EventData, HermesCost, ObserverEvent, Usage } from './eventData.js';

// Hermes' turn_exit_reason is free text after its leading identifier (text_response(...),
// local_processing_error(<error text>)); the plugin sends only the identifier, raw senders
// (flat kwargs, webhooks) the whole text: only the identifier may become a label.
const EXIT_REASON = /^([a-z][a-z0-9_]{0,63})(?:\(|$)/;
// The plugin's `identifier` grammar (contract.json grammars).
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/;

/** The leading identifier of turn_exit_reason; `other` for text without one; absent when empty. */
function exitReasonOf(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  return EXIT_REASON.exec(raw)?.[1] ?? OTHER;
}

/** A string that must be an identifier to become a label: itself, else `other`; absent when empty. */
function identifierOf(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  return IDENTIFIER.test(raw) ? raw : OTHER;
}

/** Anything present and non-empty: the envelope's `error` means failure whatever its type. */
function isPresent(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '') return false;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return true;
}

/** A non-empty id within its byte limit; a longer one is absent and counted under its wire name. */
function idOf(value: unknown, field: BoundedField, check: BoundCheck): string | undefined {
  return check.id(asId(value), field);
}

/** A name that becomes a label value, within its byte limit; a longer one is absent and counted. */
function nameOf(value: unknown, field: BoundedField, check: BoundCheck): string | undefined {
  return check.text(asString(value), field);
}

// Each reader loads its hook's fields itself (`fields.provider`), and shared helpers take the
// values: a load in a helper serving every hook would see all their object shapes (fields.ts).

/** The four fields every API hook names its call by. */
function apiCall(kind: ApiKind, provider: unknown, model: unknown, requestId: unknown, turnId: unknown, check: BoundCheck): ApiCall {
  return {
    kind,
    provider: nameOf(provider, 'provider', check),
    model: nameOf(model, 'model', check),
    requestId: idOf(requestId, 'api_request_id', check),
    turnId: idOf(turnId, 'turn_id', check),
  };
}

const callOf = (fields: Fields, kind: ApiKind, check: BoundCheck): ApiCall =>
  apiCall(kind, fields.provider, fields.model, fields.api_request_id, fields.turn_id, check);

/**
 * A usage count, or undefined when Hermes says the provider did not report it (its flag in
 * reported_usage_fields is false): its CanonicalUsage holds 0 for an absent count as for a
 * reported zero, and reported_usage_fields (Hermes 0.21) tells them apart, so an unreported count
 * is no measured 0.
 */
function reportedCount(value: unknown, reportedFlag: unknown): number | undefined {
  return reportedFlag === false ? undefined : asCount(value);
}

function readUsage(value: unknown, check: BoundCheck): Usage | undefined {
  const usage = asRecord(value);
  if (usage === undefined) return undefined;
  const reported = asRecord(usage.reported_usage_fields);
  const cacheRead = reportedCount(usage.cache_read_tokens, reported?.cache_read_tokens);
  const cacheWrite = reportedCount(usage.cache_write_tokens, reported?.cache_write_tokens);
  const prompt = reportedCount(usage.prompt_tokens, reported?.prompt_tokens);
  // input_tokens is the uncached input; OpenAI-shaped usage only has the prompt total.
  const derivedInput =
    prompt === undefined ? undefined : Math.max(0, prompt - (cacheRead ?? 0) - (cacheWrite ?? 0));
  const inputUnreported = reported?.input_tokens === false;
  // Bounded after the derivation, as each reported value is.
  return {
    input: check.tokens(inputUnreported ? undefined : (asCount(usage.input_tokens) ?? derivedInput)),
    cacheRead: check.tokens(cacheRead),
    cacheWrite: check.tokens(cacheWrite),
    output: check.tokens(reportedCount(usage.output_tokens, reported?.output_tokens) ?? asCount(usage.completion_tokens)),
    reasoning: check.tokens(reportedCount(usage.reasoning_tokens, reported?.reasoning_tokens)),
    prompt: check.tokens(prompt),
  };
}

/** The envelope variant names the duration duration_ms; the Hermes name wins when both are present. */
function apiDuration(fields: Fields, kind: ApiKind): number | undefined {
  const hermes = asQuantity(fields.api_duration);
  return kind === 'auxiliary' ? hermes : (hermes ?? asSecondsFromMillis(fields.duration_ms));
}

function hermesCost(fields: Fields, check: BoundCheck): HermesCost | undefined {
  const usd = check.cost(asQuantity(fields.cost_usd));
  const status = nameOf(fields.cost_status, 'cost_status', check);
  return usd === undefined && status === undefined ? undefined : { usd, status };
}

/** first_chunk_at − started_at; undefined when either is missing or the chunk came first. */
function timeToFirstChunk(fields: Fields): number | undefined {
  const startedAt = asQuantity(fields.started_at);
  const firstChunkAt = asQuantity(fields.first_chunk_at);
  if (startedAt === undefined || firstChunkAt === undefined || firstChunkAt < startedAt) return undefined;
  return firstChunkAt - startedAt;
}

function apiSucceeded(fields: Fields, kind: ApiKind, check: BoundCheck): EventData {
  return {
    type: 'api_attempt_succeeded',
    call: callOf(fields, kind, check),
    durationSeconds: check.duration(apiDuration(fields, kind)),
    timeToFirstChunkSeconds: check.keep(timeToFirstChunk(fields), 'time_to_first_chunk', BOUNDS.durationSeconds),
    finishReason: nameOf(fields.finish_reason, 'finish_reason', check),
    usage: readUsage(fields.usage, check),
    // Only post_api_request is priced by the plugin.
    cost: kind === 'main' ? hermesCost(fields, check) : undefined,
    // Only post_api_request carries the context window.
    contextLength: kind === 'main' ? check.tokens(asCount(fields.context_length)) : undefined,
  };
}

function apiFailed(fields: Fields, kind: ApiKind, check: BoundCheck): EventData {
  return {
    type: 'api_attempt_failed',
    call: callOf(fields, kind, check),
    durationSeconds: check.duration(apiDuration(fields, kind)),
    reason: nameOf(fields.reason, 'reason', check),
    errorType: nameOf(fields.error_type, 'error_type', check),
    statusCode: check.keep(asCount(fields.status_code), 'status_code', BOUNDS.statusCode.max, BOUNDS.statusCode.min),
    retryable: asBool(fields.retryable),
    retryCount: check.keep(asCount(fields.retry_count), 'retry_count', BOUNDS.retryCount),
    maxRetries: check.keep(asCount(fields.max_retries), 'retry_count', BOUNDS.retryCount),
    // Only api_request_error carries first_chunk_at for a failed attempt.
    timeToFirstChunkSeconds:
      kind === 'main' ? check.keep(timeToFirstChunk(fields), 'time_to_first_chunk', BOUNDS.durationSeconds) : undefined,
  };
}

/** post_auxiliary_call reports success and failure in one hook: `error`/`error_type` tell which. */
function auxiliaryFinished(fields: Fields, check: BoundCheck): EventData {
  const failed = isPresent(fields.error) || isPresent(fields.error_type);
  return failed ? apiFailed(fields, 'auxiliary', check) : apiSucceeded(fields, 'auxiliary', check);
}

function toolStatus(fields: Fields, check: BoundCheck): string | undefined {
  const status = nameOf(fields.status, 'status', check);
  if (status !== undefined) return status;
  // Envelope variant: no status, an `error` field that is non-empty when the call failed.
  if (fields.error !== undefined) return isPresent(fields.error) ? 'error' : 'ok';
  return undefined;
}

function turnDuration(fields: Fields): number | undefined {
  const explicit = asSecondsFromMillis(fields.turn_duration_ms);
  if (explicit !== undefined) return explicit;
  const start = asQuantity(fields.turn_start_time_ms);
  const end = asQuantity(fields.turn_end_time_ms);
  return start !== undefined && end !== undefined && end >= start ? (end - start) / 1000 : undefined;
}

/** Not a hook or reason the plugin reports: folded into `other` and counted where drop keys are stored. */
const UNKNOWN_DROP_KEY = 'other';

/** A heartbeat boot: a short token (the plugin sends 32 hex digits); anything else is absent. */
const BOOT_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

function boot(fields: Fields, check: BoundCheck): string | undefined {
  const value = asString(fields.boot);
  if (value === undefined) return undefined;
  // Checked as a length, so a token outside the grammar counts as out of bounds like any value.
  return check.keep(value.length <= 64 && BOOT_PATTERN.test(value) ? value.length : Infinity, 'boot', 64) === undefined ? undefined : value;
}

function refusedReports(fields: Fields, check: BoundCheck): RefusedReport[] {
  const refused = asRecord(fields.refused_fields);
  if (refused === undefined) return [];
  const reports: RefusedReport[] = [];
  for (const field of Object.keys(refused)) {
    const total = check.keep(asCount(refused[field]), 'dropped_total', BOUNDS.droppedTotal);
    if (total !== undefined) reports.push({ field: dropKey(field, check), total });
  }
  return reports;
}

function dropReports(fields: Fields, check: BoundCheck): DropReport[] {
  const dropped = asRecord(fields.dropped);
  if (dropped === undefined) return [];
  const reports: DropReport[] = [];
  for (const [hook, reasons] of Object.entries(dropped)) {
    if (!isRecord(reasons)) continue;
    for (const reason of Object.keys(reasons)) {
      const total = check.keep(asCount(reasons[reason]), 'dropped_total', BOUNDS.droppedTotal);
      if (total !== undefined) reports.push({ hook: dropKey(hook, check), reason: dropKey(reason, check), total });
    }
  }
  return reports;
}

/** Drop keys are folded into known hooks and reasons downstream; an over-long one goes there as `other` unhashed. */
function dropKey(key: string, check: BoundCheck): string {
  return fitsBytes(key, check.maxIdBytes) ? key : UNKNOWN_DROP_KEY;
}

/** Reads one hook's fields, each value within its bound (the check records the ones that were not). */
type Reader = (fields: Fields, check: BoundCheck) => EventData;

const approval =
  (type: 'approval_requested' | 'approval_responded'): Reader =>
  (fields, check) => ({
    type,
    surface: nameOf(fields.surface, 'surface', check),
    patternKey: nameOf(fields.pattern_key, 'pattern_key', check),
    toolCallId: idOf(fields.tool_call_id, 'tool_call_id', check),
    // Keys the queue of a session's approvals: an id, never a label.
    sessionKey: idOf(fields.session_key, 'session_key', check),
    turnId: idOf(fields.turn_id, 'turn_id', check),
    // Only a response carries a decision.
    choice: type === 'approval_responded' ? nameOf(fields.choice, 'choice', check) : undefined,
    decidedBy: type === 'approval_responded' ? nameOf(fields.decided_by, 'decided_by', check) : undefined,
  });

const session =
  (type: 'session_started' | 'session_finalized' | 'session_reset'): Reader =>
  (fields, check) => ({ type, sessionId: idOf(fields.session_id, 'session_id', check), platform: nameOf(fields.platform, 'platform', check) });

// A Map, not an object: a client-sent name such as `constructor` must not find a prototype member.
const READERS: ReadonlyMap<string, Reader> = new Map(Object.entries({
  pre_api_request: (fields, check) => ({
    type: 'api_attempt_started',
    call: apiCall('main', fields.provider, fields.model, fields.api_request_id, fields.turn_id, check),
  }),
  post_api_request: (fields, check) => apiSucceeded(fields, 'main', check),
  api_request_error: (fields, check) => apiFailed(fields, 'main', check),
  pre_auxiliary_call: (fields, check) => ({
    type: 'api_attempt_started',
    call: apiCall('auxiliary', fields.provider, fields.model, fields.api_request_id, fields.turn_id, check),
  }),
  post_auxiliary_call: auxiliaryFinished,
  pre_llm_call: (fields, check) => ({
    type: 'turn_started',
    turnId: idOf(fields.turn_id, 'turn_id', check),
    sessionId: idOf(fields.session_id, 'session_id', check),
    platform: nameOf(fields.platform, 'platform', check),
    model: nameOf(fields.model, 'model', check),
  }),
  on_session_end: (fields, check) => ({
    type: 'turn_finished',
    turnId: idOf(fields.turn_id, 'turn_id', check),
    sessionId: idOf(fields.session_id, 'session_id', check),
    platform: nameOf(fields.platform, 'platform', check),
    model: nameOf(fields.model, 'model', check),
    completed: asBool(fields.completed),
    failed: asBool(fields.failed),
    interrupted: asBool(fields.interrupted),
    exitReason: exitReasonOf(nameOf(fields.turn_exit_reason, 'turn_exit_reason', check)),
    sessionExitReason: nameOf(fields.reason, 'reason', check),
  }),
  turn_end: (fields, check) => ({
    type: 'turn_ended',
    turnId: idOf(fields.turn_id, 'turn_id', check),
    durationSeconds: check.duration(turnDuration(fields)),
  }),
  pre_tool_call: (fields, check) => ({
    type: 'tool_started',
    toolCallId: idOf(fields.tool_call_id, 'tool_call_id', check),
    tool: nameOf(fields.tool_name, 'tool_name', check),
    turnId: idOf(fields.turn_id, 'turn_id', check),
  }),
  post_tool_call: (fields, check) => ({
    type: 'tool_finished',
    toolCallId: idOf(fields.tool_call_id, 'tool_call_id', check),
    tool: nameOf(fields.tool_name, 'tool_name', check),
    turnId: idOf(fields.turn_id, 'turn_id', check),
    status: toolStatus(fields, check),
    errorType: nameOf(fields.error_type, 'error_type', check),
    durationSeconds: check.duration(asSecondsFromMillis(fields.duration_ms)),
  }),
  agent_loop_stopped: (fields, check) => ({
    type: 'agent_interrupted',
    platform: nameOf(fields.platform, 'platform', check),
    reason: identifierOf(nameOf(fields.reason, 'reason', check)),
  }),
  pre_approval_request: approval('approval_requested'),
  post_approval_response: approval('approval_responded'),
  on_session_start: session('session_started'),
  on_session_finalize: session('session_finalized'),
  on_session_reset: session('session_reset'),
  session_event: (fields, check) => ({ type: 'session_event', event: nameOf(fields.event, 'event', check) }),
  subagent_start: (fields, check) => ({
    type: 'subagent_started',
    childSessionId: idOf(fields.child_session_id, 'child_session_id', check),
    role: nameOf(fields.child_role, 'child_role', check),
  }),
  subagent_stop: (fields, check) => ({
    type: 'subagent_stopped',
    childSessionId: idOf(fields.child_session_id, 'child_session_id', check),
    role: nameOf(fields.child_role, 'child_role', check),
    status: nameOf(fields.child_status, 'child_status', check),
    durationSeconds: check.duration(asSecondsFromMillis(fields.duration_ms)),
  }),
  agent_end: (fields, check) => ({
    type: 'agent_run_finished',
    stopReason: nameOf(fields.stop_reason, 'stop_reason', check),
    durationSeconds: check.duration(asSecondsFromMillis(fields.run_duration_ms)),
  }),
  memory_write: (fields, check) => ({
    type: 'memory_written',
    memoryProvider: nameOf(fields.memory_provider, 'memory_provider', check),
    action: nameOf(fields.action, 'action', check),
    sizeBytes: check.keep(asCount(fields.size_bytes), 'size_bytes', BOUNDS.sizeBytes),
  }),
  plugin_heartbeat: (fields, check) => ({
    type: 'plugin_heartbeat',
    intervalSeconds: check.keep(asQuantity(fields.interval_seconds), 'interval', BOUNDS.intervalSeconds),
    ackedSeq: check.keep(asCount(fields.acked_seq), 'acked_seq', BOUNDS.ackedSeq),
    boot: boot(fields, check),
    dropped: dropReports(fields, check),
    hermesVersion: nameOf(fields.hermes_version, 'hermes_version', check),
    pluginVersion: nameOf(fields.plugin_version, 'plugin_version', check),
    profile: nameOf(fields.profile, 'profile', check),
    refused: refusedReports(fields, check),
  }),
} satisfies Record<string, Reader>));

const IGNORED: EventData = { type: 'ignored' };

/**
 * The typed data of one event, every value within its bound (contract/bounds.ts; `check`
 * records the fields whose values were not); unknown and unmapped hooks read as `ignored`.
 */
export function readEventData(name: string, fields: Fields, check: BoundCheck): EventData {
  const reader = READERS.get(name);
  return reader === undefined ? IGNORED : reader(fields, check);
}
