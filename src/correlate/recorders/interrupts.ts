/**
 * Interrupts: agent_loop_stopped fires when a running turn is interrupted (/stop, or /new while
 * the turn runs; gateway/run_agent_cache.py _interrupt_and_clear_session, and the TUI's
 * _interrupt_session_turn). It carries no turn_id: the turn itself still ends through its own
 * on_session_end (interrupted), so this counts the interruption, not the turn.
 */
import type { EventData } from '../../contract/events.js';
import type { OwnedMetrics } from '../../metrics/registry.js';
import type { RecorderContext } from './context.js';

type Interrupted = Extract<EventData, { type: 'agent_interrupted' }>;

export class InterruptRecorder {
  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: OwnedMetrics<'correlate/recorders/interrupts'>,
  ) {}

  interrupted(event: Interrupted): void {
    this.metrics.agentInterrupts.inc({
      platform: this.context.labels.value('platform', event.platform),
      reason: this.context.labels.value('interrupt_reason', event.reason),
    });
  }
}
