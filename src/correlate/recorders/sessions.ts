/**
 * Sessions: on_session_start / on_session_finalize / on_session_reset, and the envelope
 * session_event. Sessions are not spans: an idle one simply expires after the session TTL
 * (a full table evicts the least recently active and counts it).
 */
import type { EventData } from '../../contract/events.js';
import { SpanTable } from '../spans.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Families } from '../../metrics/registry.js';
import { GaugeTally, type Collectable, type RecorderContext } from './context.js';
import { VALUES } from '../../contract/vocabulary.js';
import { OPEN, counter, gauge, type Declarations } from '../../metrics/declare.js';

/** The families this module writes (and all it is handed). */
export const SESSION_FAMILIES = {
  sessionsStarted: counter('hermes_sessions_started_total', { platform: OPEN }, 'agent',
    'Sessions started (on_session_start).'),
  sessionsFinalized: counter('hermes_sessions_finalized_total', { platform: OPEN }, 'agent',
    'Sessions finalized (on_session_finalize).'),
  sessionResets: counter('hermes_session_resets_total', { platform: OPEN }, 'agent',
    'Session resets (on_session_reset).'),
  sessionsActive: gauge('hermes_sessions_active', { platform: OPEN }, 'agent',
    'Sessions started and not yet finalized (idle sessions expire after the session TTL; counted at scrape time).', { computed: true }),
  sessionEvents: counter('hermes_session_events_total', { event: VALUES.session_event }, 'agent',
    'Envelope session_event lifecycle events ({event}).'),
} as const satisfies Declarations;

type Lifecycle = Extract<EventData, { type: 'session_started' | 'session_finalized' | 'session_reset' }>;

const SESSION_EVENTS = new Set(VALUES.session_event);

export class SessionRecorder implements Collectable {
  private readonly active: SpanTable<{ platform: string }>;
  private readonly activeTally = new GaugeTally<{ platform: string }>((labels) => labels.platform);

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof SESSION_FAMILIES>,
  ) {
    this.active = new SpanTable({
      clock: context.clock,
      ttlSeconds: context.sessionTtlSeconds,
      maxEntries: context.spans.maxEntries,
      maxBytes: context.sessionMaxBytes,
      onRemove: (labels) => this.activeTally.closed(labels),
      onOrphan: (_labels, cause) => {
        if (cause === 'evicted') context.evicted('sessions');
      },
    });
    context.track(this.active);
  }

  started(event: Lifecycle): void {
    const labels = { platform: this.context.labels.value('platform', event.platform) };
    this.metrics.sessionsStarted.inc(labels);
    if (event.sessionId === undefined) return;
    this.activeTally.opened(labels);
    this.active.open(event.sessionId, labels);
  }

  /** Sessions active, counted as sessions start, end and expire. */
  collect(): void {
    this.activeTally.report(this.metrics.sessionsActive);
  }

  finalized(event: Lifecycle): void {
    this.metrics.sessionsFinalized.inc({ platform: this.context.labels.value('platform', event.platform) });
    if (event.sessionId !== undefined) this.active.close(event.sessionId);
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
