/**
 * Applies normalized events in order: sequence check first (each `seq` once; see instances.ts
 * for gaps, late events and epochs), then a closed switch on the event type calls one recorder per family.
 */
import type { BoundedField } from '../contract/bounds.js';
import type { EventData, ObserverEvent } from '../contract/events.js';
import { ignoredEventLabel } from '../contract/hooks.js';
import type { Recorders } from './recorders/index.js';
import type { Families } from '../metrics/registry.js';
import type { PluginInstances } from './instances.js';
import type { HeldClock } from './heldClock.js';
import { VALUES } from '../contract/vocabulary.js';
import { counter, gauge, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';

/** The families this module writes (and all it is handed). */
export const DISPATCHER_FAMILIES = {
  eventsIgnored: fed(counter('hermes_sidecar_events_ignored_total', { event: VALUES.ignored_event }, 'self',
    'Valid events that have no metric mapping.',
    // Ignored events are expected noise; a zero per known name would only lengthen the scrape.
    { preinit: false }),
    'sidecar', 'ingest: hooks with no metric mapping'),
  lastEvent: fed(gauge('hermes_sidecar_last_event_timestamp_seconds', {}, 'self',
    'Time the newest event was applied.'),
    'sidecar', 'ingest'),
} as const satisfies Declarations;

export class Dispatcher {
  /** Hook events applied so far (duplicates and plugin heartbeats excluded): reported in the shutdown log. */
  applied = 0;
  /** Plugin heartbeats applied so far. */
  heartbeats = 0;

  constructor(
    private readonly recorders: Recorders,
    private readonly instances: PluginInstances,
    private readonly metrics: Families<typeof DISPATCHER_FAMILIES>,
    /** Held for each batch: its events share one arrival time (heldClock.ts). */
    private readonly clock: HeldClock,
    private readonly onApplyError: (error: unknown) => void,
    /** Counts a value dropped for being out of its bound (contract/bounds.ts). */
    private readonly valueRejected: (field: BoundedField) => void = () => undefined,
  ) {}

  /** Applies a batch; returns how many events failed to apply (the caller counts them as dropped). */
  applyBatch(events: readonly ObserverEvent[]): number {
    if (events.length === 0) return 0;
    const now = this.clock.hold();
    let fromPlugin = false;
    let failed = 0;
    try {
      for (const event of events) {
        fromPlugin ||= event.instance !== undefined;
        try {
          this.apply(event);
        } catch (error) {
          // A recorder bug must cost one event, counted, never the batch or the queue.
          failed += 1;
          this.onApplyError(error);
        }
      }
    } finally {
      this.clock.release();
    }
    this.metrics.lastEvent.set({}, now);
    if (fromPlugin) this.recorders.delivery.pluginSeen(now);
    return failed;
  }

  apply(event: ObserverEvent): void {
    if (event.rejectedValues.length > 0) for (const field of event.rejectedValues) this.valueRejected(field);
    if (event.instance !== undefined && !this.admit(event.instance, event.seq)) return;
    if (event.data.type === 'plugin_heartbeat') this.heartbeats += 1;
    else this.applied += 1;
    this.record(event.data, event);
  }

  /** Sequence tracking for plugin lines; false for an event that must not be applied (counted why). */
  private admit(instance: string, seq: number | undefined): boolean {
    if (seq === undefined) {
      this.instances.seen(instance);
      return true;
    }
    const verdict = this.instances.sequence(instance, seq);
    switch (verdict) {
      case 'apply':
        return true;
      case 'late':
        this.recorders.delivery.late();
        return true;
      case 'reset':
        // Counted by the instances table (onReset), which also counts acked_seq resets.
        return true;
      case 'duplicate':
        this.recorders.delivery.duplicate();
        return false;
      case 'after_lost':
      case 'beyond_memory':
        this.recorders.delivery.discarded(verdict);
        return false;
    }
  }

  private record(data: EventData, event: ObserverEvent): void {
    const { api, turns, tools, approvals, sessions, subagents, runs, delivery, interrupts, plugins } = this.recorders;
    switch (data.type) {
      case 'api_attempt_started':
        return api.started(data.call);
      case 'api_attempt_succeeded': {
        const cost = api.succeeded(data, event.observedAt);
        if (data.call.kind !== 'main') return;
        // A session adds up its main-loop calls only: Hermes prices those itself, never the
        // auxiliary ones (titles, compression, MoA, vision), which would leave most sessions
        // unpriced; their cost stays in hermes_cost_usd_total{kind="auxiliary"}.
        return sessions.callSucceeded(turns.countApiAttempt(data.call.turnId), cost, data.usage);
      }
      case 'api_attempt_failed':
        if (data.call.kind === 'main') turns.countApiAttempt(data.call.turnId);
        return api.failed(data, event.observedAt);
      case 'turn_started':
        sessions.turnStarted(data.sessionId, data.platform, event.observedAt);
        return turns.started(data, event.observedAt);
      case 'turn_finished':
        sessions.touch(data.sessionId);
        return turns.finished(data, event.observedAt);
      case 'turn_ended':
        return turns.ended(data, event.observedAt);
      case 'tool_started':
        return tools.started(data);
      case 'tool_finished':
        turns.countToolCall(data.turnId);
        return tools.finished(data, event.observedAt);
      case 'approval_requested':
        return approvals.requested(data, event.observedAt);
      case 'approval_responded':
        return approvals.responded(data, event.observedAt);
      case 'session_started':
        return sessions.started(data, event.observedAt);
      case 'session_finalized':
        return sessions.finalized(data, event.observedAt);
      case 'session_reset':
        return sessions.reset(data);
      case 'session_event':
        return sessions.lifecycleEvent(data.event);
      case 'subagent_started':
        return subagents.started(data);
      case 'subagent_stopped':
        sessions.subagentStopped(data.childSessionId);
        return subagents.stopped(data);
      case 'agent_run_finished':
        return runs.runFinished(data);
      case 'memory_written':
        return runs.memoryWritten(data);
      case 'agent_interrupted':
        return interrupts.interrupted(data);
      case 'plugin_heartbeat': {
        if (event.instance === undefined) return;
        delivery.dropReports(data.dropped);
        // The table judges the heartbeat (a stale one changes nothing and returns no deltas).
        const deltas = this.instances.heartbeat(event.instance, { ...data, host: plugins.hostLabels(data) });
        delivery.dropped(deltas);
        return plugins.refused(deltas);
      }
      case 'ignored':
        this.metrics.eventsIgnored.inc({ event: ignoredEventLabel(event.name) });
        return;
    }
  }
}
