/** Subagents: subagent_start opens, subagent_stop closes, matched by child_session_id. */
import type { EventData } from '../../contract/events.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Metrics } from '../../metrics/registry.js';
import { spanTable, type RecorderContext } from './context.js';

type Started = Extract<EventData, { type: 'subagent_started' }>;
type Stopped = Extract<EventData, { type: 'subagent_stopped' }>;

const STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'interrupted', 'timeout', 'error']);

export class SubagentRecorder {
  private readonly metrics: Metrics;
  private readonly active;

  constructor(private readonly context: RecorderContext) {
    this.metrics = context.metrics;
    this.active = spanTable<{ role: string }>(context, 'subagent', (labels) => this.metrics.subagentsActive.dec(labels));
  }

  started(event: Started): void {
    const labels = { role: this.context.labels.value('role', event.role) };
    this.metrics.subagentsStarted.inc(labels);
    if (event.childSessionId === undefined) return;
    this.metrics.subagentsActive.inc(labels);
    this.active.open(event.childSessionId, labels);
  }

  stopped(event: Stopped): void {
    if (event.childSessionId !== undefined) {
      const open = this.active.close(event.childSessionId);
      if (open !== undefined) this.metrics.subagentsActive.dec(open.value);
    }
    const labels = {
      role: this.context.labels.value('role', event.role),
      status: closedLabel(STATUSES, event.status),
    };
    this.metrics.subagentsFinished.inc(labels);
    if (event.durationSeconds !== undefined) this.metrics.subagentDuration.observe(labels, event.durationSeconds);
  }
}
