/** Tool calls: pre_tool_call opens, the one terminal post_tool_call per call closes. */
import type { EventData } from '../../contract/events.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Metrics } from '../../metrics/registry.js';
import { spanTable, type RecorderContext } from './context.js';

type Started = Extract<EventData, { type: 'tool_started' }>;
type Finished = Extract<EventData, { type: 'tool_finished' }>;

const STATUSES: ReadonlySet<string> = new Set(['ok', 'error', 'blocked', 'cancelled', 'timeout']);

/** CONTRACT.md §3.4: the error types Hermes emits. */
const ERROR_TYPES: ReadonlySet<string> = new Set([
  'tool_error',
  'invalid_tool_arguments',
  'thread_missing_result',
  'plugin_block',
  'tool_scope_block',
  'guardrail_block',
  'keyboard_interrupt',
  'user_interrupt',
  'tool_interrupted',
  'tool_timeout',
]);

/** Statuses that are not a failure: ok, and a status that was never sent. */
const NOT_FAILED: ReadonlySet<string> = new Set(['ok', 'unknown']);

export class ToolRecorder {
  private readonly metrics: Metrics;
  private readonly inFlight;

  constructor(private readonly context: RecorderContext) {
    this.metrics = context.metrics;
    this.inFlight = spanTable<{ tool: string }>(context, 'tool', (labels) => this.metrics.toolCallsInFlight.dec(labels));
  }

  started(event: Started): void {
    // Without a tool_call_id the terminal event cannot be matched, so the gauge would leak.
    if (event.toolCallId === undefined) return;
    const labels = { tool: this.context.labels.value('tool', event.tool) };
    this.metrics.toolCallsInFlight.inc(labels);
    this.inFlight.open(event.toolCallId, labels);
  }

  finished(event: Finished): void {
    if (event.toolCallId !== undefined) {
      const open = this.inFlight.close(event.toolCallId);
      if (open !== undefined) this.metrics.toolCallsInFlight.dec(open.value);
    }
    const tool = this.context.labels.value('tool', event.tool);
    const status = closedLabel(STATUSES, event.status);
    this.metrics.toolCalls.inc({ tool, status });
    if (event.durationSeconds !== undefined) this.metrics.toolCallDuration.observe({ tool, status }, event.durationSeconds);
    if (!NOT_FAILED.has(status)) {
      this.metrics.toolErrors.inc({ tool, error_type: closedLabel(ERROR_TYPES, event.errorType) });
    }
  }
}
