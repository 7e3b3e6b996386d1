/**
 * Hook and event names the sidecar knows (CONTRACT.md §1.4, the envelope variant, and the
 * plugin's own heartbeat). The `event` label of the self-metrics only ever takes these values
 * or `other`.
 */

/** Events that move agent or delivery metrics. */
export const MAPPED_EVENTS = [
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
  // envelope variant (register_observer_hook)
  'agent_end',
  'memory_write',
  'turn_end',
  'session_event',
  // the bridge plugin's delivery report
  'plugin_heartbeat',
] as const;

/** Valid Hermes events with no metric mapping: accepted and counted as ignored. */
export const IGNORED_EVENTS = [
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
  'agent_loop_stopped',
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

export type MappedEvent = (typeof MAPPED_EVENTS)[number];

export const KNOWN_EVENTS: ReadonlySet<string> = new Set<string>([...MAPPED_EVENTS, ...IGNORED_EVENTS]);

/** The `event` / `hook` label value for a name sent by a client. */
export function eventLabel(name: string): string {
  return KNOWN_EVENTS.has(name) ? name : 'other';
}
