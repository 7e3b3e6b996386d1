/**
 * Sessions: on_session_start / on_session_finalize / on_session_reset, and the envelope
 * session_event. Sessions are not spans: an idle one simply expires after the session TTL
 * (a full table evicts the least recently active and counts it).
 */
import type { EventData } from '../../contract/events.js';
import { SpanTable } from '../spans.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Metrics } from '../../metrics/registry.js';
import type { RecorderContext } from './context.js';

type Lifecycle = Extract<EventData, { type: 'session_started' | 'session_finalized' | 'session_reset' }>;

const SESSION_EVENTS: ReadonlySet<string> = new Set(['created', 'switched', 'reset', 'resumed']);

export class SessionRecorder {
  private readonly metrics: Metrics;
  private readonly active: SpanTable<{ platform: string }>;

  constructor(private readonly context: RecorderContext) {
    this.metrics = context.metrics;
    this.active = new SpanTable({
      clock: context.clock,
      ttlSeconds: context.sessionTtlSeconds,
      maxEntries: context.spans.maxEntries,
      onOrphan: (labels, cause) => {
        this.metrics.sessionsActive.dec(labels);
        if (cause === 'evicted') this.metrics.stateEvictions.inc({ table: 'sessions' });
      },
    });
    context.track(this.active);
  }

  started(event: Lifecycle): void {
    const labels = { platform: this.context.labels.value('platform', event.platform) };
    this.metrics.sessionsStarted.inc(labels);
    if (event.sessionId === undefined) return;
    this.metrics.sessionsActive.inc(labels);
    this.active.open(event.sessionId, labels);
  }

  finalized(event: Lifecycle): void {
    this.metrics.sessionsFinalized.inc({ platform: this.context.labels.value('platform', event.platform) });
    if (event.sessionId === undefined) return;
    const open = this.active.close(event.sessionId);
    if (open !== undefined) this.metrics.sessionsActive.dec(open.value);
  }

  reset(event: Lifecycle): void {
    this.metrics.sessionResets.inc({ platform: this.context.labels.value('platform', event.platform) });
  }

  /** Activity in a session keeps it from expiring. */
  touch(sessionId: string | undefined): void {
    if (sessionId !== undefined) this.active.touch(sessionId);
  }

  lifecycleEvent(event: string | undefined): void {
    this.metrics.sessionEvents.inc({ event: closedLabel(SESSION_EVENTS, event) });
  }
}
