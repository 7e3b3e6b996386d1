/**
 * The one typed event union every shape normalizes into (contract/events.ts reads each hook's
 * fields into it; the recorders consume it): content-free fields only, each within its bound.
 */
import type { BoundedField } from './bounds.js';
import type { ValueOf } from './vocabulary.js';

export type ApiKind = 'main' | 'auxiliary';
/** Which route and shape brought an event: a plugin line, an envelope, flat kwargs, a webhook delivery. */
type EventSource = ValueOf<'event_source'>;

export interface ApiCall {
  readonly kind: ApiKind;
  readonly provider: string | undefined;
  readonly model: string | undefined;
  /** Logical call id: retries of one call share it. */
  readonly requestId: string | undefined;
  readonly turnId: string | undefined;
}

export interface Usage {
  readonly input?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  readonly output?: number;
  readonly reasoning?: number;
  readonly prompt?: number;
}

/** cost_usd / cost_status as the plugin priced a call with Hermes' agent.usage_pricing. */
export interface HermesCost {
  /** Finite and zero or more; absent when Hermes could not price the call. */
  readonly usd?: number;
  /** CostResult.status: actual | estimated | included | unknown. */
  readonly status?: string;
}

export interface RefusedReport {
  readonly field: string;
  /** Cumulative count since the plugin instance started. */
  readonly total: number;
}

export interface DropReport {
  readonly hook: string;
  readonly reason: string;
  /** Cumulative count since the plugin instance started. */
  readonly total: number;
}

export type EventData =
  | { readonly type: 'api_attempt_started'; readonly call: ApiCall }
  | {
      readonly type: 'api_attempt_succeeded';
      readonly call: ApiCall;
      readonly durationSeconds?: number;
      readonly timeToFirstChunkSeconds?: number;
      readonly finishReason?: string;
      readonly usage?: Usage;
      /** Hermes' own price of the call (agent.usage_pricing), added by the plugin's sender thread. */
      readonly cost?: HermesCost;
      /** The context engine's window in tokens (post_api_request context_length). */
      readonly contextLength?: number;
    }
  | {
      readonly type: 'api_attempt_failed';
      readonly call: ApiCall;
      readonly durationSeconds?: number;
      readonly reason?: string;
      /** The exception class name (error["type"] of api_request_error). */
      readonly errorType?: string;
      readonly statusCode?: number;
      readonly retryable?: boolean;
      readonly retryCount?: number;
      readonly maxRetries?: number;
      /** First stream chunk of the failed attempt after the call's start (Hermes 0.21). */
      readonly timeToFirstChunkSeconds?: number;
    }
  | {
      readonly type: 'turn_started';
      readonly turnId?: string;
      readonly sessionId?: string;
      readonly platform?: string;
      readonly model?: string;
    }
  | {
      readonly type: 'turn_finished';
      readonly turnId?: string;
      readonly sessionId?: string;
      readonly platform?: string;
      readonly model?: string;
      readonly completed?: boolean;
      readonly failed?: boolean;
      readonly interrupted?: boolean;
      /** The leading identifier of turn_exit_reason (Hermes 0.21), `other` when it has none. */
      readonly exitReason?: string;
      /** reason: the CLI's exit paths call on_session_end with it when the session ends, not per turn. */
      readonly sessionExitReason?: string;
    }
  | { readonly type: 'turn_ended'; readonly turnId?: string; readonly durationSeconds?: number }
  | { readonly type: 'tool_started'; readonly toolCallId?: string; readonly tool?: string; readonly turnId?: string }
  | {
      readonly type: 'tool_finished';
      readonly toolCallId?: string;
      readonly tool?: string;
      readonly turnId?: string;
      readonly status?: string;
      readonly errorType?: string;
      readonly durationSeconds?: number;
    }
  | {
      readonly type: 'approval_requested' | 'approval_responded';
      readonly surface?: string;
      readonly patternKey?: string;
      readonly toolCallId?: string;
      readonly sessionKey?: string;
      /** The turn the approval belongs to (Hermes 0.21 sets it with tool_call_id). */
      readonly turnId?: string;
      readonly choice?: string;
      readonly decidedBy?: string;
    }
  | { readonly type: 'session_started' | 'session_finalized' | 'session_reset'; readonly sessionId?: string; readonly platform?: string }
  | { readonly type: 'session_event'; readonly event?: string }
  | { readonly type: 'subagent_started'; readonly childSessionId?: string; readonly role?: string }
  | {
      readonly type: 'subagent_stopped';
      readonly childSessionId?: string;
      readonly role?: string;
      readonly status?: string;
      readonly durationSeconds?: number;
    }
  | { readonly type: 'agent_run_finished'; readonly stopReason?: string; readonly durationSeconds?: number }
  /** agent_loop_stopped: a running turn interrupted (/stop, or /new while it runs). */
  | { readonly type: 'agent_interrupted'; readonly platform?: string; readonly reason?: string }
  | { readonly type: 'memory_written'; readonly memoryProvider?: string; readonly action?: string; readonly sizeBytes?: number }
  | {
      readonly type: 'plugin_heartbeat';
      readonly intervalSeconds?: number;
      readonly dropped: readonly DropReport[];
      /** Highest sequence number a sidecar acknowledged to this plugin instance. */
      readonly ackedSeq?: number;
      /** The instance's numbering run (chosen when its seq starts at 1): a new one is a restart. */
      readonly boot?: string;
      /** The host's Hermes version, the plugin's version and the Hermes profile, as sent. */
      readonly hermesVersion?: string;
      readonly pluginVersion?: string;
      readonly profile?: string;
      /** Values the plugin's boundary grammar refused, by wire field (cumulative). */
      readonly refused: readonly RefusedReport[];
    }
  | { readonly type: 'ignored' };

export interface ObserverEvent {
  /** Hook name as sent (label value via eventLabel). */
  readonly name: string;
  readonly source: EventSource;
  /** Epoch seconds: the plugin's observed_at, else the arrival time. */
  readonly observedAt: number;
  /** Bridge plugin instance and its per-instance sequence number, when sent. */
  readonly instance?: string | undefined;
  readonly seq?: number | undefined;
  readonly data: EventData;
  /** Values dropped for being outside their bounds (bounds.ts), by field; counted at ingest. */
  readonly rejectedValues: readonly BoundedField[];
}
