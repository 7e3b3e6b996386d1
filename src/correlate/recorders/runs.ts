/** Agent runs and memory writes: the envelope events agent_end and memory_write. */
import type { EventData } from '../../contract/events.js';
import type { OwnedMetrics } from '../../metrics/registry.js';
import type { RecorderContext } from './context.js';

type RunFinished = Extract<EventData, { type: 'agent_run_finished' }>;
type MemoryWritten = Extract<EventData, { type: 'memory_written' }>;

export class RunRecorder {
  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: OwnedMetrics<'correlate/recorders/runs'>,
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
