/**
 * Sessions: on_session_start / on_session_finalize / on_session_reset, and the envelope
 * session_event. Sessions are not spans: an idle one simply expires after the session TTL
 * (a full table evicts the least recently active and counts it).
 *
 * Each open session adds up what it spent as its events arrive: its turns (pre_llm_call naming
 * it), and the cost and tokens of its successful main-loop provider calls (found through their
 * turn_id, as the API hooks carry no session_id; the dispatcher leaves auxiliary calls out). on_session_finalize observes the totals, so the
 * histograms show what a session costs without a series per session. A session that leaves
 * without its finalization is counted, never observed: its totals stop short of its end.
 *
 * A subagent runs as a session of its own (its child_session_id), whose calls name its own
 * turns, so the parent's totals never include them. Hermes never finalizes a subagent's session:
 * it ends with subagent_stop, uncounted in the histograms (the plugin does not forward
 * parent_session_id, so it cannot be added to its parent).
 */
import type { EventData, Usage } from '../../contract/events.js';
import { SpanTable, type OrphanCause } from '../spans.js';
import { closedLabel } from '../../metrics/labels.js';
import { exemplarOf } from '../../metrics/exemplars.js';
import type { Families } from '../../metrics/registry.js';
import { durationBetween } from '../../contract/bounds.js';
import type { RecorderContext } from './context.js';
import { promptTokens } from './usage.js';
import type { CallCost } from './pricing.js';
import { VALUES } from '../../contract/vocabulary.js';
import { OPEN, counter, gauge, histogram, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';

/** The closed value sets of this module's labels. */
export const SESSION_VALUES = {
  /**
   * Why a session is not in the per-session histograms: expired (idle past the session TTL) or
   * evicted (from the full session table) before its finalization; a subagent's session (ended
   * by subagent_stop); unstarted, a finalization of a session whose start the sidecar never saw
   * (a restart in between), whose totals would be partial; unpriced, a finalized session left
   * out of the cost histogram only, as one of its calls could not be priced.
   */
  session_unobserved_reason: ['expired', 'evicted', 'subagent', 'unstarted', 'unpriced'],
} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const SESSION_FAMILIES = {
  sessionsStarted: fed(counter('hermes_sessions_started_total', { platform: OPEN }, 'agent',
    'Sessions started (on_session_start).'),
    'hermes', '`on_session_start` `platform`'),
  sessionsFinalized: fed(counter('hermes_sessions_finalized_total', { platform: OPEN }, 'agent',
    'Sessions finalized (on_session_finalize).'),
    'hermes', '`on_session_finalize` `platform`'),
  sessionResets: fed(counter('hermes_session_resets_total', { platform: OPEN }, 'agent',
    'Session resets (on_session_reset).'),
    'hermes', '`on_session_reset` `platform`'),
  sessionsActive: fed(gauge('hermes_sessions_active', { platform: OPEN }, 'agent',
    'Sessions started and not yet finalized (idle sessions expire after the session TTL, a subagent\'s session ends with its subagent_stop; at 0 for the series TTL, the series expires).', { computed: true }),
    'hermes', '`on_session_start` (or the first `pre_llm_call` of a session whose start Hermes skipped) → `on_session_finalize` by `session_id`, expiring after the session TTL'),
  sessionEvents: fed(counter('hermes_session_events_total', { event: VALUES.session_event }, 'agent',
    'Envelope session_event lifecycle events ({event}).'),
    'envelope', 'envelope `session_event` `event`'),
  sessionCost: fed(histogram('hermes_session_cost_usd', { platform: OPEN }, 'session_usd', 'agent',
    'Cost in USD per finalized session: its successful main-loop provider calls (kind main), priced as in hermes_cost_usd_total; a session with an unpriced call is left out, counted as unpriced in hermes_sidecar_sessions_unobserved_total.'),
    'hermes', '`on_session_start` → `on_session_finalize` by `session_id`: the cost of its successful `post_api_request` calls (as `hermes_cost_usd_total`; auxiliary calls are not added), each found through its `turn_id` and the `session_id` of that turn\'s `pre_llm_call`'),
  sessionTokens: fed(histogram('hermes_session_tokens', { platform: OPEN }, 'session_tokens', 'agent',
    'Tokens per finalized session: prompt (input + cache_read + cache_write) and output tokens its successful main-loop provider calls (kind main) reported.'),
    'hermes', '`on_session_start` → `on_session_finalize` by `session_id`: `usage` of its successful `post_api_request` calls, each found through its `turn_id` and the `session_id` of that turn\'s `pre_llm_call`'),
  sessionTurns: fed(histogram('hermes_session_turns', { platform: OPEN }, 'count', 'agent',
    'User turns (pre_llm_call) per finalized session.'),
    'hermes', '`pre_llm_call` `session_id` between `on_session_start` and `on_session_finalize`'),
  sessionDuration: fed(histogram('hermes_session_duration_seconds', { platform: OPEN }, 'session_seconds', 'agent',
    'Session duration from on_session_start to on_session_finalize (observed times).'),
    'hermes', '`on_session_start` → `on_session_finalize` by `session_id` (observed times)'),
  sessionsInferred: fed(counter('hermes_sidecar_sessions_inferred_total', { platform: OPEN }, 'delivery',
    'Sessions counted as started from their first pre_llm_call, as no on_session_start was seen: Hermes skips an on_session_start that overlaps another one (its hook gate keys on tool_call_id or turn_id, which that hook lacks), and a session already open when the sidecar started is first seen this way too.'),
    'hermes', '`pre_llm_call` `session_id`, `platform` of a session with no `on_session_start` seen'),
  sessionsUnobserved: fed(counter('hermes_sidecar_sessions_unobserved_total', { reason: SESSION_VALUES.session_unobserved_reason }, 'delivery',
    'Sessions left out of the per-session histograms, by why ({reason}): unpriced ones only out of hermes_session_cost_usd.'),
    'sidecar', 'the session table (TTL and size bound), `subagent_stop` `child_session_id`, `on_session_finalize` without a seen start, unpriced calls'),
} as const satisfies Declarations;

type Lifecycle = Extract<EventData, { type: 'session_started' | 'session_finalized' | 'session_reset' }>;

type SessionLabels = { readonly platform: string };

/** An open session: its labels, when it started, and what it has spent so far. */
interface SessionState {
  readonly labels: SessionLabels;
  /** Observed time of on_session_start. */
  readonly startedAt: number;
  turns: number;
  tokens: number;
  usd: number;
  /** A successful call of the session could not be priced: its cost is unknown. */
  unpriced: boolean;
}

/**
 * Bytes charged to a session besides the table's entry overhead: its running totals (four
 * numbers, a flag and the labels object) took the live heap of a session from 193 B to 265 B
 * (bench/tables.ts, "heap per entry", ids of 22 characters included), so the charge grows by as
 * much and the overhead's margin stays what it was.
 */
export const SESSION_TOTALS_BYTES = 72;

const SESSION_EVENTS = new Set(VALUES.session_event);

export class SessionRecorder {
  private readonly active: SpanTable<SessionState>;

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof SESSION_FAMILIES>,
  ) {
    this.active = new SpanTable({
      clock: context.clock,
      ttlSeconds: context.sessionTtlSeconds,
      maxEntries: context.spans.maxEntries,
      maxBytes: context.sessionMaxBytes,
      onRemove: (state) => this.metrics.sessionsActive.dec(state.labels),
      onOrphan: (_state, cause) => this.orphaned(cause),
    });
    context.track(this.active);
  }

  /**
   * Hermes fires on_session_start again for an open session when it rebuilds the session's
   * system prompt (agent/conversation_loop.py): the session goes on, with what it spent so far.
   */
  started(event: Lifecycle, observedAt: number): void {
    const labels = { platform: this.context.labels.value('platform', event.platform) };
    this.metrics.sessionsStarted.inc(labels);
    if (event.sessionId === undefined) return;
    if (this.active.touch(event.sessionId) !== undefined) return;
    this.metrics.sessionsActive.inc(labels);
    const state: SessionState = { labels, startedAt: observedAt, turns: 0, tokens: 0, usd: 0, unpriced: false };
    this.active.open(event.sessionId, state, SESSION_TOTALS_BYTES);
  }

  finalized(event: Lifecycle, observedAt: number): void {
    const platform = this.context.labels.value('platform', event.platform);
    this.metrics.sessionsFinalized.inc({ platform });
    const state = event.sessionId === undefined ? undefined : this.active.close(event.sessionId);
    if (state === undefined) {
      this.metrics.sessionsUnobserved.inc({ reason: 'unstarted' });
      return;
    }
    this.observe(event.platform === undefined ? state.labels.platform : platform, state, event.sessionId, observedAt);
  }

  reset(event: Lifecycle): void {
    this.metrics.sessionResets.inc({ platform: this.context.labels.value('platform', event.platform) });
  }

  /** Activity in a session keeps it from expiring. */
  touch(sessionId: string | undefined): void {
    if (sessionId !== undefined) this.active.touch(sessionId);
  }

  /**
   * A turn of the session started (pre_llm_call): activity, and one more turn. A session the
   * table does not hold starts here: Hermes 0.21 skips an on_session_start whose call overlaps
   * another (hermes_cli/plugins_dispatch.py gates the timeout-bounded hooks by tool_call_id or
   * turn_id, and agent/conversation_loop.py's on_session_start carries neither), while
   * pre_llm_call (agent/turn_context.py) carries the session_id, its platform and a turn_id, so
   * it is never skipped. The session is counted
   * started once, here, and in hermes_sidecar_sessions_inferred_total; its duration runs from
   * this first turn.
   */
  turnStarted(sessionId: string | undefined, platform: string | undefined, observedAt: number): void {
    if (sessionId === undefined) return;
    // An inferred session is opened as the newest entry: touching it again would change nothing.
    const state = this.active.touch(sessionId) ?? this.inferStart(sessionId, platform, observedAt);
    state.turns += 1;
  }

  private inferStart(sessionId: string, platform: string | undefined, observedAt: number): SessionState {
    const labels = { platform: this.context.labels.value('platform', platform) };
    this.metrics.sessionsStarted.inc(labels);
    this.metrics.sessionsInferred.inc(labels);
    this.metrics.sessionsActive.inc(labels);
    const state: SessionState = { labels, startedAt: observedAt, turns: 0, tokens: 0, usd: 0, unpriced: false };
    this.active.open(sessionId, state, SESSION_TOTALS_BYTES);
    return state;
  }

  /** A successful provider call of the session (found through its turn): its cost and tokens. */
  callSucceeded(sessionId: string | undefined, cost: CallCost, usage: Usage | undefined): void {
    const state = sessionId === undefined ? undefined : this.active.get(sessionId);
    if (state === undefined) return;
    if (cost.priced) state.usd += cost.usd;
    else state.unpriced = true;
    if (usage !== undefined) state.tokens += (promptTokens(usage) ?? 0) + (usage.output ?? 0);
  }

  /** A subagent stopped: its session ends with it, and Hermes never finalizes it. */
  subagentStopped(childSessionId: string | undefined): void {
    if (childSessionId === undefined) return;
    if (this.active.close(childSessionId) !== undefined) this.metrics.sessionsUnobserved.inc({ reason: 'subagent' });
  }

  lifecycleEvent(event: string | undefined): void {
    this.metrics.sessionEvents.inc({ event: closedLabel(SESSION_EVENTS, event) });
  }

  private observe(platform: string, state: SessionState, sessionId: string | undefined, observedAt: number): void {
    const labels = { platform };
    this.metrics.sessionTurns.observe(labels, state.turns);
    this.metrics.sessionTokens.observe(labels, state.tokens);
    if (state.unpriced) this.metrics.sessionsUnobserved.inc({ reason: 'unpriced' });
    else this.metrics.sessionCost.observe(labels, state.usd, exemplarOf([['session_id', sessionId]], state.usd, observedAt));
    const seconds = durationBetween(state.startedAt, observedAt);
    if (seconds === undefined) this.context.valueRejected('duration');
    else this.metrics.sessionDuration.observe(labels, seconds, exemplarOf([['session_id', sessionId]], seconds, observedAt));
  }

  /** A session that left without its finalization: counted, as its totals stop short of its end. */
  private orphaned(cause: OrphanCause): void {
    if (cause === 'evicted') this.context.evicted('sessions');
    // `replaced` cannot happen: a repeated start keeps the open session (started).
    if (cause !== 'replaced') this.metrics.sessionsUnobserved.inc({ reason: cause });
  }
}
