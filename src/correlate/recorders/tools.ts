/** Tool calls: pre_tool_call opens, the one terminal post_tool_call per call closes. */
import type { EventData } from '../../contract/events.js';
import { exemplarOf } from '../../metrics/exemplars.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Families } from '../../metrics/registry.js';
import { spanTable, type RecorderContext } from './context.js';
import { VALUES } from '../../contract/vocabulary.js';
import { OPEN, counter, gauge, histogram, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';

/** The families this module writes (and all it is handed). */
export const TOOL_FAMILIES = {
  toolCalls: fed(counter('hermes_tool_calls_total', { tool: OPEN, status: VALUES.tool_status }, 'agent',
    'Finished tool calls by status ({status}, other).'),
    'hermes', '`post_tool_call`: `tool_name`, `status`'),
  toolCallDuration: fed(histogram('hermes_tool_call_duration_seconds', { tool: OPEN, status: VALUES.tool_status }, 'tool_seconds', 'agent',
    'Tool call duration.'),
    'hermes', '`post_tool_call` `duration_ms`'),
  toolErrors: fed(counter('hermes_tool_errors_total', { tool: OPEN, error_type: VALUES.tool_error_type }, 'agent',
    'Tool calls that did not finish ok, by error type.'),
    'hermes', '`post_tool_call`: `status` not ok, `error_type`'),
  toolCallsInFlight: fed(gauge('hermes_tool_calls_in_flight', { tool: OPEN }, 'agent',
    'Tool calls started and not yet finished (moved as calls start and finish; at 0 for the series TTL, the series expires).', { computed: true }),
    'hermes', '`pre_tool_call` → `post_tool_call` by `tool_call_id`'),
} as const satisfies Declarations;

type Started = Extract<EventData, { type: 'tool_started' }>;
type Finished = Extract<EventData, { type: 'tool_finished' }>;

const STATUSES = new Set(VALUES.tool_status);
const ERROR_TYPES = new Set(VALUES.tool_error_type);

/** Statuses that are not a failure: ok, and a status that was never sent. */
const NOT_FAILED: ReadonlySet<string> = new Set(['ok', 'unknown']);

export class ToolRecorder {
  private readonly inFlight;

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof TOOL_FAMILIES>,
  ) {
    this.inFlight = spanTable<{ tool: string }>(context, 'tool', undefined, (labels) => this.metrics.toolCallsInFlight.dec(labels));
  }

  started(event: Started): void {
    // Without a tool_call_id the terminal event cannot be matched, so the span would only expire.
    if (event.toolCallId === undefined) return;
    const labels = { tool: this.context.labels.value('tool', event.tool) };
    this.metrics.toolCallsInFlight.inc(labels);
    this.inFlight.open(event.toolCallId, labels);
  }

  finished(event: Finished, observedAt: number): void {
    if (event.toolCallId !== undefined) this.inFlight.close(event.toolCallId);
    const tool = this.context.labels.value('tool', event.tool);
    const status = closedLabel(STATUSES, event.status);
    this.metrics.toolCalls.inc({ tool, status });
    const seconds = event.durationSeconds;
    if (seconds !== undefined) {
      // The tool hooks carry no session_id; the call and its turn identify it.
      const exemplar = exemplarOf([['tool_call_id', event.toolCallId], ['turn_id', event.turnId]], seconds, observedAt);
      this.metrics.toolCallDuration.observe({ tool, status }, seconds, exemplar);
    }
    if (!NOT_FAILED.has(status)) {
      this.metrics.toolErrors.inc({ tool, error_type: closedLabel(ERROR_TYPES, event.errorType) });
    }
  }
}
