/** Subagents: subagent_start opens, subagent_stop closes, matched by child_session_id. */
import type { EventData } from '../../contract/events.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Families } from '../../metrics/registry.js';
import { spanTable, type RecorderContext } from './context.js';
import { VALUES } from '../../contract/vocabulary.js';
import { OPEN, counter, gauge, histogram, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';

/** The families this module writes (and all it is handed). */
export const SUBAGENT_FAMILIES = {
  subagentsStarted: fed(counter('hermes_subagents_started_total', { role: OPEN }, 'agent',
    'Subagents started by role.'),
    'hermes', '`subagent_start` `child_role`'),
  subagentsFinished: fed(counter('hermes_subagents_finished_total', { role: OPEN, status: VALUES.subagent_status }, 'agent',
    'Subagents finished by role and status.'),
    'hermes', '`subagent_stop`: `child_role`, `child_status`'),
  subagentDuration: fed(histogram('hermes_subagent_duration_seconds', { role: OPEN, status: VALUES.subagent_status }, 'turn_seconds', 'agent',
    'Subagent run duration.'),
    'hermes', '`subagent_stop` `duration_ms`'),
  subagentsActive: fed(gauge('hermes_subagents_active', { role: OPEN }, 'agent',
    'Subagents started and not yet stopped (moved as subagents start and stop; at 0 for the series TTL, the series expires).', { computed: true }),
    'hermes', '`subagent_start` → `subagent_stop` by `child_session_id`'),
} as const satisfies Declarations;

type Started = Extract<EventData, { type: 'subagent_started' }>;
type Stopped = Extract<EventData, { type: 'subagent_stopped' }>;

const STATUSES = new Set(VALUES.subagent_status);

export class SubagentRecorder {
  private readonly active;

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof SUBAGENT_FAMILIES>,
  ) {
    this.active = spanTable<{ role: string }>(context, 'subagent', undefined, (labels) => this.metrics.subagentsActive.dec(labels));
  }

  started(event: Started): void {
    const labels = { role: this.context.labels.value('role', event.role) };
    this.metrics.subagentsStarted.inc(labels);
    if (event.childSessionId === undefined) return;
    this.metrics.subagentsActive.inc(labels);
    this.active.open(event.childSessionId, labels);
  }

  stopped(event: Stopped): void {
    if (event.childSessionId !== undefined) this.active.close(event.childSessionId);
    const labels = {
      role: this.context.labels.value('role', event.role),
      status: closedLabel(STATUSES, event.status),
    };
    this.metrics.subagentsFinished.inc(labels);
    if (event.durationSeconds !== undefined) this.metrics.subagentDuration.observe(labels, event.durationSeconds);
  }
}
