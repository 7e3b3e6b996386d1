/**
 * Turns: pre_llm_call opens a turn, on_session_end (which fires once per turn) or an envelope
 * turn_end closes it. API attempts and tool calls carrying the turn_id are counted into it.
 *
 * The CLI's exit paths also call on_session_end, with a `reason` and no turn_id, when the session
 * ends (cli.py). That is not a turn: it ends the session's turns still open (interrupted by the
 * exit, with the reason as their exit reason), and nothing when none is open.
 */
import type { EventData } from '../../contract/events.js';
import { exemplarOf } from '../../metrics/exemplars.js';
import { UNKNOWN } from '../../wireText.js';
import type { Families } from '../../metrics/registry.js';
import { spanTable, type RecorderContext } from './context.js';
import { durationBetween } from '../../contract/bounds.js';
import { IdMap, stringBytes } from '../idMap.js';
import { VALUES, type ValueOf } from '../../contract/vocabulary.js';
import { OPEN, counter, histogram, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';
import { TESTED_HERMES } from '../../contract/hooks.js';

/** The families this module writes (and all it is handed). */
export const TURN_FAMILIES = {
  turnsStarted: fed(counter('hermes_turns_started_total', { platform: OPEN, model: OPEN }, 'agent',
    'User turns started (pre_llm_call).'),
    'hermes', '`pre_llm_call`: `platform`, `model`'),
  turnsFinished: fed(counter('hermes_turns_finished_total', { platform: OPEN, model: OPEN, outcome: VALUES.turn_outcome, exit_reason: OPEN }, 'agent',
    'User turns finished (on_session_end fires once per turn) by outcome ({outcome}) and exit reason.'),
    'partial', `\`on_session_end\` by \`turn_id\`: outcome from \`failed\`/\`interrupted\`/\`completed\`, \`exit_reason\` the leading identifier of \`turn_exit_reason\` (the plugin sends nothing else of it; the reasons Hermes 0.21 emits are always kept, others pass the cap); both from Hermes 0.21 (agent/turn_finalizer.py finalize_turn), so on ${TESTED_HERMES} turns that end normally read \`exit_reason="unknown"\` and never \`outcome="failed"\`. A CLI exit (\`reason\`, no \`turn_id\`) ends the session's open turns with \`exit_reason\` = that reason`),
  turnDuration: fed(histogram('hermes_turn_duration_seconds', { platform: OPEN, outcome: VALUES.turn_outcome }, 'turn_seconds', 'agent',
    'Turn duration from pre_llm_call to on_session_end (observed times), or turn_duration_ms of an envelope turn_end.'),
    'hermes', '`pre_llm_call` → `on_session_end` by `turn_id` (observed times)'),
  turnApiCalls: fed(histogram('hermes_turn_api_calls', { platform: OPEN }, 'count', 'agent',
    'Provider API attempts per finished turn.'),
    'hermes', '`turn_id` of `pre_api_request`/`post_api_request`/`api_request_error` per turn'),
  turnToolCalls: fed(histogram('hermes_turn_tool_calls', { platform: OPEN }, 'count', 'agent',
    'Tool calls per finished turn.'),
    'hermes', '`turn_id` of `pre_tool_call` per turn'),
} as const satisfies Declarations;

type Started = Extract<EventData, { type: 'turn_started' }>;
type Finished = Extract<EventData, { type: 'turn_finished' }>;
type Ended = Extract<EventData, { type: 'turn_ended' }>;

interface TurnState {
  readonly turnId: string;
  /** Observed time of pre_llm_call; undefined when the turn was only seen through its calls. */
  startedAt: number | undefined;
  platform: string | undefined;
  sessionId: string | undefined;
  apiCalls: number;
  toolCalls: number;
}

/** Exit reasons Hermes is known to emit: never folded by the cap that bounds the others. */
const KNOWN_EXIT_REASONS: ReadonlySet<string> = new Set(VALUES.turn_exit_reason);

/** on_session_end's flags as one outcome; all flags absent is unknown. */
function turnOutcome(event: Finished): ValueOf<'turn_outcome'> | typeof UNKNOWN {
  const { completed, failed, interrupted } = event;
  if (completed === undefined && failed === undefined && interrupted === undefined) return UNKNOWN;
  if (failed === true) return 'failed';
  if (interrupted === true) return 'interrupted';
  if (completed === true) return 'completed';
  return 'incomplete';
}

/**
 * Bytes charged to a turn indexed by its session, besides the session id: its share of the
 * session's set (measured 455 B per turn, ids included, with one turn per session; bench/tables.ts).
 */
const SESSION_INDEX_BYTES = 128;

export class TurnRecorder {
  private readonly turns;
  // session_id → its open turns that pre_llm_call named the session of, for the CLI's exit. The
  // turns' states keep the ids, so each turn's entry is charged for them (stateOf, started).
  // A set of states, not of ids: a Set of long ids would hash them by length, as a Map would.
  private readonly bySession = new IdMap<Set<TurnState>>();

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof TURN_FAMILIES>,
  ) {
    // A turn that never ends is orphaned, whether it was opened by pre_llm_call or by its calls.
    this.turns = spanTable<TurnState>(context, 'turn', (state) => this.unindex(state));
  }

  started(event: Started, observedAt: number): void {
    this.metrics.turnsStarted.inc({
      platform: this.context.labels.value('platform', event.platform),
      model: this.context.labels.value('model', event.model),
    });
    if (event.turnId === undefined) return;
    const state = this.stateOf(event.turnId);
    state.startedAt = observedAt;
    state.platform = event.platform;
    if (event.sessionId !== undefined && state.sessionId === undefined) {
      state.sessionId = event.sessionId;
      this.turns.charge(event.turnId, stringBytes(event.sessionId) + SESSION_INDEX_BYTES);
      let open = this.bySession.get(event.sessionId);
      if (open === undefined) this.bySession.set(event.sessionId, (open = new Set()));
      open.add(state);
    }
  }

  /**
   * Counts an API attempt into its turn and returns the session pre_llm_call named for the turn:
   * API calls carry only their turn_id (one lookup for both).
   */
  countApiAttempt(turnId: string | undefined): string | undefined {
    if (turnId === undefined) return undefined;
    const state = this.stateOf(turnId);
    state.apiCalls += 1;
    return state.sessionId;
  }

  countToolCall(turnId: string | undefined): void {
    if (turnId !== undefined) this.stateOf(turnId).toolCalls += 1;
  }

  finished(event: Finished, observedAt: number): void {
    if (event.turnId === undefined && event.sessionExitReason !== undefined) {
      this.sessionExited(event, observedAt);
      return;
    }
    this.finish(event, this.close(event.turnId), observedAt);
  }

  /** A CLI exit: the session's open turns end with it. */
  private sessionExited(event: Finished, observedAt: number): void {
    const open = event.sessionId === undefined ? undefined : this.bySession.get(event.sessionId);
    for (const state of [...(open ?? [])]) this.finish(event, this.close(state.turnId), observedAt);
  }

  private finish(event: Finished, state: TurnState | undefined, observedAt: number): void {
    const outcome = turnOutcome(event);
    const platform = this.context.labels.value('platform', event.platform);
    // The reader kept only turn_exit_reason's leading identifier (contract/events.ts).
    const exitReason = event.exitReason ?? event.sessionExitReason;
    this.metrics.turnsFinished.inc({
      platform,
      model: this.context.labels.value('model', event.model),
      outcome,
      exit_reason: exitReason !== undefined && KNOWN_EXIT_REASONS.has(exitReason) ? exitReason : this.context.labels.value('exit_reason', exitReason),
    });
    if (state === undefined) return;
    const turnPlatform = event.platform === undefined ? this.context.labels.value('platform', state.platform) : platform;
    if (state.startedAt !== undefined) {
      const duration = durationBetween(state.startedAt, observedAt);
      if (duration === undefined) this.context.valueRejected('duration');
      else {
        const exemplar = exemplarOf([['turn_id', event.turnId], ['session_id', event.sessionId]], duration, observedAt);
        this.metrics.turnDuration.observe({ platform: turnPlatform, outcome }, duration, exemplar);
      }
    }
    this.observeCalls(turnPlatform, state);
  }

  /** Envelope turn_end: it carries its own duration, and neither platform, model nor outcome. */
  ended(event: Ended, observedAt: number): void {
    const platform = UNKNOWN;
    const outcome = UNKNOWN;
    this.metrics.turnsFinished.inc({ platform, model: UNKNOWN, outcome, exit_reason: UNKNOWN });
    const seconds = event.durationSeconds;
    if (seconds !== undefined) {
      this.metrics.turnDuration.observe({ platform, outcome }, seconds, exemplarOf([['turn_id', event.turnId]], seconds, observedAt));
    }
    const state = this.close(event.turnId);
    if (state !== undefined) this.observeCalls(platform, state);
  }

  private observeCalls(platform: string, state: TurnState): void {
    this.metrics.turnApiCalls.observe({ platform }, state.apiCalls);
    this.metrics.turnToolCalls.observe({ platform }, state.toolCalls);
  }

  private close(turnId: string | undefined): TurnState | undefined {
    const state = turnId === undefined ? undefined : this.turns.close(turnId);
    if (state !== undefined) this.unindex(state);
    return state;
  }

  private unindex(state: TurnState): void {
    if (state.sessionId === undefined) return;
    const open = this.bySession.get(state.sessionId);
    open?.delete(state);
    if (open?.size === 0) this.bySession.delete(state.sessionId);
  }

  private stateOf(turnId: string): TurnState {
    const existing = this.turns.get(turnId);
    if (existing !== undefined) return existing;
    const state: TurnState = { turnId, startedAt: undefined, platform: undefined, sessionId: undefined, apiCalls: 0, toolCalls: 0 };
    this.turns.open(turnId, state, stringBytes(turnId));
    return state;
  }
}
