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
  bool,
  count,
  id,
  isRecord,
  millisAsSeconds,
  quantity,
  record,
  str,
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
function idOf(fields: Fields, key: BoundedField, check: BoundCheck): string | undefined {
  return check.id(id(fields, key), key);
}

/** A name that becomes a label value, within its byte limit; a longer one is absent and counted. */
function nameOf(fields: Fields, key: BoundedField, check: BoundCheck): string | undefined {
  return check.text(str(fields, key), key);
}

function apiCall(fields: Fields, kind: ApiKind, check: BoundCheck): ApiCall {
  return {
    kind,
    provider: nameOf(fields, 'provider', check),
    model: nameOf(fields, 'model', check),
    requestId: idOf(fields, 'api_request_id', check),
    turnId: idOf(fields, 'turn_id', check),
  };
}

/**
 * A usage count, or undefined when Hermes says the provider did not report it: its
 * CanonicalUsage holds 0 for an absent count as for a reported zero, and reported_usage_fields
 * (Hermes 0.21) tells them apart, so an unreported count is no measured 0.
 */
function reportedCount(usage: Fields, reported: Fields | undefined, key: string): number | undefined {
  return reported !== undefined && reported[key] === false ? undefined : count(usage, key);
}

function readUsage(fields: Fields, check: BoundCheck): Usage | undefined {
  const usage = record(fields, 'usage');
  if (usage === undefined) return undefined;
  const reported = record(usage, 'reported_usage_fields');
  const cacheRead = reportedCount(usage, reported, 'cache_read_tokens');
  const cacheWrite = reportedCount(usage, reported, 'cache_write_tokens');
  const prompt = reportedCount(usage, reported, 'prompt_tokens');
  // input_tokens is the uncached input; OpenAI-shaped usage only has the prompt total.
  const derivedInput =
    prompt === undefined ? undefined : Math.max(0, prompt - (cacheRead ?? 0) - (cacheWrite ?? 0));
  const inputUnreported = reported !== undefined && reported.input_tokens === false;
  // Bounded after the derivation, as each reported value is.
  return {
    input: check.tokens(inputUnreported ? undefined : (count(usage, 'input_tokens') ?? derivedInput)),
    cacheRead: check.tokens(cacheRead),
    cacheWrite: check.tokens(cacheWrite),
    output: check.tokens(reportedCount(usage, reported, 'output_tokens') ?? count(usage, 'completion_tokens')),
    reasoning: check.tokens(reportedCount(usage, reported, 'reasoning_tokens')),
    prompt: check.tokens(prompt),
  };
}

/** The envelope variant names the duration duration_ms; the Hermes name wins when both are present. */
function apiDuration(fields: Fields, kind: ApiKind): number | undefined {
  const hermes = quantity(fields, 'api_duration');
  return kind === 'auxiliary' ? hermes : (hermes ?? millisAsSeconds(fields, 'duration_ms'));
}

function hermesCost(fields: Fields, check: BoundCheck): HermesCost | undefined {
  const usd = check.cost(quantity(fields, 'cost_usd'));
  const status = nameOf(fields, 'cost_status', check);
  return usd === undefined && status === undefined ? undefined : { usd, status };
}

/** first_chunk_at − started_at; undefined when either is missing or the chunk came first. */
function timeToFirstChunk(fields: Fields): number | undefined {
  const startedAt = quantity(fields, 'started_at');
  const firstChunkAt = quantity(fields, 'first_chunk_at');
  if (startedAt === undefined || firstChunkAt === undefined || firstChunkAt < startedAt) return undefined;
  return firstChunkAt - startedAt;
}

function apiSucceeded(fields: Fields, kind: ApiKind, check: BoundCheck): EventData {
  return {
    type: 'api_attempt_succeeded',
    call: apiCall(fields, kind, check),
    durationSeconds: check.duration(apiDuration(fields, kind)),
    timeToFirstChunkSeconds: check.keep(timeToFirstChunk(fields), 'time_to_first_chunk', BOUNDS.durationSeconds),
    finishReason: nameOf(fields, 'finish_reason', check),
    usage: readUsage(fields, check),
    // Only post_api_request is priced by the plugin.
    cost: kind === 'main' ? hermesCost(fields, check) : undefined,
    // Only post_api_request carries the context window.
    contextLength: kind === 'main' ? check.tokens(count(fields, 'context_length')) : undefined,
  };
}

function apiFailed(fields: Fields, kind: ApiKind, check: BoundCheck): EventData {
  return {
    type: 'api_attempt_failed',
    call: apiCall(fields, kind, check),
    durationSeconds: check.duration(apiDuration(fields, kind)),
    reason: nameOf(fields, 'reason', check),
    errorType: nameOf(fields, 'error_type', check),
    statusCode: check.keep(count(fields, 'status_code'), 'status_code', BOUNDS.statusCode.max, BOUNDS.statusCode.min),
    retryable: bool(fields, 'retryable'),
    retryCount: check.keep(count(fields, 'retry_count'), 'retry_count', BOUNDS.retryCount),
    maxRetries: check.keep(count(fields, 'max_retries'), 'retry_count', BOUNDS.retryCount),
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
  const status = nameOf(fields, 'status', check);
  if (status !== undefined) return status;
  // Envelope variant: no status, an `error` field that is non-empty when the call failed.
  if (fields.error !== undefined) return isPresent(fields.error) ? 'error' : 'ok';
  return undefined;
}

function turnDuration(fields: Fields): number | undefined {
  const explicit = millisAsSeconds(fields, 'turn_duration_ms');
  if (explicit !== undefined) return explicit;
  const start = quantity(fields, 'turn_start_time_ms');
  const end = quantity(fields, 'turn_end_time_ms');
  return start !== undefined && end !== undefined && end >= start ? (end - start) / 1000 : undefined;
}

/** Not a hook or reason the plugin reports: folded into `other` and counted where drop keys are stored. */
const UNKNOWN_DROP_KEY = 'other';

/** A heartbeat boot: a short token (the plugin sends 32 hex digits); anything else is absent. */
const BOOT_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

function boot(fields: Fields, check: BoundCheck): string | undefined {
  const value = str(fields, 'boot');
  if (value === undefined) return undefined;
  // Checked as a length, so a token outside the grammar counts as out of bounds like any value.
  return check.keep(value.length <= 64 && BOOT_PATTERN.test(value) ? value.length : Infinity, 'boot', 64) === undefined ? undefined : value;
}

function refusedReports(fields: Fields, check: BoundCheck): RefusedReport[] {
  const refused = record(fields, 'refused_fields');
  if (refused === undefined) return [];
  const reports: RefusedReport[] = [];
  for (const field of Object.keys(refused)) {
    const total = check.keep(count(refused, field), 'dropped_total', BOUNDS.droppedTotal);
    if (total !== undefined) reports.push({ field: dropKey(field, check), total });
  }
  return reports;
}

function dropReports(fields: Fields, check: BoundCheck): DropReport[] {
  const dropped = record(fields, 'dropped');
  if (dropped === undefined) return [];
  const reports: DropReport[] = [];
  for (const [hook, reasons] of Object.entries(dropped)) {
    if (!isRecord(reasons)) continue;
    for (const reason of Object.keys(reasons)) {
      const total = check.keep(count(reasons, reason), 'dropped_total', BOUNDS.droppedTotal);
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

const turnIdOf = (fields: Fields, check: BoundCheck) => idOf(fields, 'turn_id', check);
const sessionIdOf = (fields: Fields, check: BoundCheck) => idOf(fields, 'session_id', check);
const platformOf = (fields: Fields, check: BoundCheck) => nameOf(fields, 'platform', check);

const approval =
  (type: 'approval_requested' | 'approval_responded'): Reader =>
  (fields, check) => ({
    type,
    surface: nameOf(fields, 'surface', check),
    patternKey: nameOf(fields, 'pattern_key', check),
    toolCallId: idOf(fields, 'tool_call_id', check),
    // Keys the queue of a session's approvals: an id, never a label.
    sessionKey: idOf(fields, 'session_key', check),
    turnId: idOf(fields, 'turn_id', check),
    // Only a response carries a decision.
    choice: type === 'approval_responded' ? nameOf(fields, 'choice', check) : undefined,
    decidedBy: type === 'approval_responded' ? nameOf(fields, 'decided_by', check) : undefined,
  });

const session =
  (type: 'session_started' | 'session_finalized' | 'session_reset'): Reader =>
  (fields, check) => ({ type, sessionId: sessionIdOf(fields, check), platform: platformOf(fields, check) });

// A Map, not an object: a client-sent name such as `constructor` must not find a prototype member.
const READERS: ReadonlyMap<string, Reader> = new Map(Object.entries({
  pre_api_request: (fields, check) => ({ type: 'api_attempt_started', call: apiCall(fields, 'main', check) }),
  post_api_request: (fields, check) => apiSucceeded(fields, 'main', check),
  api_request_error: (fields, check) => apiFailed(fields, 'main', check),
  pre_auxiliary_call: (fields, check) => ({ type: 'api_attempt_started', call: apiCall(fields, 'auxiliary', check) }),
  post_auxiliary_call: auxiliaryFinished,
  pre_llm_call: (fields, check) => ({
    type: 'turn_started',
    turnId: turnIdOf(fields, check),
    sessionId: sessionIdOf(fields, check),
    platform: platformOf(fields, check),
    model: nameOf(fields, 'model', check),
  }),
  on_session_end: (fields, check) => ({
    type: 'turn_finished',
    turnId: turnIdOf(fields, check),
    sessionId: sessionIdOf(fields, check),
    platform: platformOf(fields, check),
    model: nameOf(fields, 'model', check),
    completed: bool(fields, 'completed'),
    failed: bool(fields, 'failed'),
    interrupted: bool(fields, 'interrupted'),
    exitReason: exitReasonOf(nameOf(fields, 'turn_exit_reason', check)),
    sessionExitReason: nameOf(fields, 'reason', check),
  }),
  turn_end: (fields, check) => ({ type: 'turn_ended', turnId: turnIdOf(fields, check), durationSeconds: check.duration(turnDuration(fields)) }),
  pre_tool_call: (fields, check) => ({
    type: 'tool_started',
    toolCallId: idOf(fields, 'tool_call_id', check),
    tool: nameOf(fields, 'tool_name', check),
    turnId: turnIdOf(fields, check),
  }),
  post_tool_call: (fields, check) => ({
    type: 'tool_finished',
    toolCallId: idOf(fields, 'tool_call_id', check),
    tool: nameOf(fields, 'tool_name', check),
    turnId: turnIdOf(fields, check),
    status: toolStatus(fields, check),
    errorType: nameOf(fields, 'error_type', check),
    durationSeconds: check.duration(millisAsSeconds(fields, 'duration_ms')),
  }),
  agent_loop_stopped: (fields, check) => ({ type: 'agent_interrupted', platform: platformOf(fields, check), reason: identifierOf(nameOf(fields, 'reason', check)) }),
  pre_approval_request: approval('approval_requested'),
  post_approval_response: approval('approval_responded'),
  on_session_start: session('session_started'),
  on_session_finalize: session('session_finalized'),
  on_session_reset: session('session_reset'),
  session_event: (fields, check) => ({ type: 'session_event', event: nameOf(fields, 'event', check) }),
  subagent_start: (fields, check) => ({
    type: 'subagent_started',
    childSessionId: idOf(fields, 'child_session_id', check),
    role: nameOf(fields, 'child_role', check),
  }),
  subagent_stop: (fields, check) => ({
    type: 'subagent_stopped',
    childSessionId: idOf(fields, 'child_session_id', check),
    role: nameOf(fields, 'child_role', check),
    status: nameOf(fields, 'child_status', check),
    durationSeconds: check.duration(millisAsSeconds(fields, 'duration_ms')),
  }),
  agent_end: (fields, check) => ({
    type: 'agent_run_finished',
    stopReason: nameOf(fields, 'stop_reason', check),
    durationSeconds: check.duration(millisAsSeconds(fields, 'run_duration_ms')),
  }),
  memory_write: (fields, check) => ({
    type: 'memory_written',
    memoryProvider: nameOf(fields, 'memory_provider', check),
    action: nameOf(fields, 'action', check),
    sizeBytes: check.keep(count(fields, 'size_bytes'), 'size_bytes', BOUNDS.sizeBytes),
  }),
  plugin_heartbeat: (fields, check) => ({
    type: 'plugin_heartbeat',
    intervalSeconds: check.keep(quantity(fields, 'interval_seconds'), 'interval', BOUNDS.intervalSeconds),
    ackedSeq: check.keep(count(fields, 'acked_seq'), 'acked_seq', BOUNDS.ackedSeq),
    boot: boot(fields, check),
    dropped: dropReports(fields, check),
    hermesVersion: nameOf(fields, 'hermes_version', check),
    pluginVersion: nameOf(fields, 'plugin_version', check),
    profile: nameOf(fields, 'profile', check),
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
