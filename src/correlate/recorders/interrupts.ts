/**
 * Interrupts: agent_loop_stopped fires when a running turn is interrupted (/stop, or /new while
 * the turn runs; gateway/run_agent_cache.py _interrupt_and_clear_session, and the TUI's
 * _interrupt_session_turn). It carries no turn_id: the turn itself still ends through its own
 * on_session_end (interrupted), so this counts the interruption, not the turn.
 */
import type { EventData } from '../../contract/events.js';
import type { Families } from '../../metrics/registry.js';
import type { RecorderContext } from './context.js';
import { OPEN, counter, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';

/** The families this module writes (and all it is handed). */
export const INTERRUPT_FAMILIES = {
  agentInterrupts: fed(counter('hermes_agent_interrupts_total', { platform: OPEN, reason: { sameAs: 'interrupt_reason' } }, 'agent',
    'Running turns interrupted (agent_loop_stopped: /stop, or /new while a turn runs) by platform and interrupt reason.'),
    'partial', '`agent_loop_stopped` (Hermes 0.21: gateway/run_agent_cache.py `_interrupt_and_clear_session`, the TUI\'s `_interrupt_session_turn`): `platform`, `reason`'),
} as const satisfies Declarations;

type Interrupted = Extract<EventData, { type: 'agent_interrupted' }>;

export class InterruptRecorder {
  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof INTERRUPT_FAMILIES>,
  ) {}

  interrupted(event: Interrupted): void {
    this.metrics.agentInterrupts.inc({
      platform: this.context.labels.value('platform', event.platform),
      reason: this.context.labels.value('interrupt_reason', event.reason),
    });
  }
}
