/** Agent runs and memory writes: the envelope events agent_end and memory_write. */
import type { EventData } from '../../contract/events.js';
import type { Families } from '../../metrics/registry.js';
import type { RecorderContext } from './context.js';
import { OPEN, counter, histogram, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';

/** The families this module writes (and all it is handed). */
export const RUN_FAMILIES = {
  agentRuns: fed(counter('hermes_agent_runs_total', { stop_reason: OPEN }, 'agent',
    'Agent runs finished (envelope agent_end) by stop reason.'),
    'envelope', 'envelope `agent_end` `stop_reason`'),
  agentRunDuration: fed(histogram('hermes_agent_run_duration_seconds', { stop_reason: OPEN }, 'turn_seconds', 'agent',
    'Agent run duration (envelope agent_end run_duration_ms).'),
    'envelope', 'envelope `agent_end` `run_duration_ms`'),
  memoryWrites: fed(counter('hermes_memory_writes_total', { memory_provider: OPEN, action: OPEN }, 'agent',
    'Memory writes (envelope memory_write).'),
    'envelope', 'envelope `memory_write`: `memory_provider`, `action`'),
  memoryWriteBytes: fed(counter('hermes_memory_write_bytes_total', { memory_provider: OPEN, action: OPEN }, 'agent',
    'Bytes written to memory (envelope memory_write size_bytes).'),
    'envelope', 'envelope `memory_write` `size_bytes`'),
} as const satisfies Declarations;

type RunFinished = Extract<EventData, { type: 'agent_run_finished' }>;
type MemoryWritten = Extract<EventData, { type: 'memory_written' }>;

export class RunRecorder {
  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof RUN_FAMILIES>,
  ) {}

  runFinished(event: RunFinished): void {
    const labels = { stop_reason: this.context.labels.value('stop_reason', event.stopReason) };
    this.metrics.agentRuns.inc(labels);
    if (event.durationSeconds !== undefined) this.metrics.agentRunDuration.observe(labels, event.durationSeconds);
  }

  memoryWritten(event: MemoryWritten): void {
    const labels = {
      memory_provider: this.context.labels.value('memory_provider', event.memoryProvider),
      action: this.context.labels.value('action', event.action),
    };
    this.metrics.memoryWrites.inc(labels);
    if (event.sizeBytes !== undefined) this.metrics.memoryWriteBytes.inc(labels, event.sizeBytes);
  }
}
