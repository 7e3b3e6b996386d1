/**
 * Approvals: pre_approval_request opens, post_approval_response closes. Hermes sends no request
 * id, so a response matches its request by tool_call_id when set, else first-in-first-out per
 * session_key (the order Hermes answers a session's approvals in).
 */
import type { EventData } from '../../contract/events.js';
import { VALUES, type ValueOf } from '../../metrics/catalogue.js';
import { closedLabel, type Fallback } from '../../metrics/labels.js';
import type { OwnedMetrics } from '../../metrics/registry.js';
import { compositeKey, GaugeTally, spanTable, type Collectable, type RecorderContext } from './context.js';

type Approval = Extract<EventData, { type: 'approval_requested' | 'approval_responded' }>;

const SURFACES = new Set(VALUES.approval_surface);
const CHOICES = new Set(VALUES.approval_choice);

type Surface = ValueOf<'approval_surface'> | Fallback;

interface PendingApproval {
  readonly surface: Surface;
  readonly requestedAt: number;
  /** The session_key queue this request waits in, when it has no tool_call_id. */
  readonly fifo: string | undefined;
  readonly key: string;
}

export class ApprovalRecorder implements Collectable {
  private readonly pending;
  private readonly pendingTally = new GaugeTally<{ surface: Surface }>();
  // session_key → keys of its requests without tool_call_id, oldest first.
  private readonly fifos = new Map<string, string[]>();
  private nextFifoId = 0;

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: OwnedMetrics<'correlate/recorders/approvals'>,
  ) {
    this.pending = spanTable<PendingApproval>(context, 'approval', (approval) => this.forget(approval));
  }

  /** Approvals pending, counted from the open spans. */
  collect(): void {
    const tally = this.pendingTally.tally(this.pending.values(), (approval) => ({ surface: approval.surface }));
    for (const [labels, count] of tally) this.metrics.approvalsPending.set(labels, count);
  }

  requested(event: Approval, observedAt: number): void {
    const surface = closedLabel(SURFACES, event.surface);
    this.metrics.approvalRequests.inc({
      surface,
      pattern_key: this.context.labels.value('pattern_key', event.patternKey),
    });
    const fifo = event.toolCallId === undefined ? (event.sessionKey ?? '') : undefined;
    const key =
      fifo === undefined ? compositeKey('id', event.toolCallId ?? '') : compositeKey('fifo', String(this.nextFifoId++));
    if (fifo !== undefined) this.queueOf(fifo).push(key);
    this.pendingTally.opened({ surface });
    this.pending.open(key, { surface, requestedAt: observedAt, fifo, key });
  }

  responded(event: Approval, observedAt: number): void {
    const surface = closedLabel(SURFACES, event.surface);
    const choice = closedLabel(CHOICES, event.choice);
    this.metrics.approvalDecisions.inc({
      surface,
      pattern_key: this.context.labels.value('pattern_key', event.patternKey),
      choice,
    });
    const request = this.match(event);
    if (request === undefined) return;
    this.forget(request);
    this.metrics.approvalWait.observe({ surface, choice }, Math.max(0, observedAt - request.requestedAt));
  }

  private match(event: Approval): PendingApproval | undefined {
    if (event.toolCallId !== undefined) return this.pending.close(compositeKey('id', event.toolCallId))?.value;
    const key = this.fifos.get(event.sessionKey ?? '')?.[0];
    return key === undefined ? undefined : this.pending.close(key)?.value;
  }

  /** Removes a request from its session's queue. */
  private forget(approval: PendingApproval): void {
    if (approval.fifo === undefined) return;
    const queue = this.fifos.get(approval.fifo);
    if (queue === undefined) return;
    const index = queue.indexOf(approval.key);
    if (index !== -1) queue.splice(index, 1);
    if (queue.length === 0) this.fifos.delete(approval.fifo);
  }

  private queueOf(sessionKey: string): string[] {
    let queue = this.fifos.get(sessionKey);
    if (queue === undefined) {
      queue = [];
      this.fifos.set(sessionKey, queue);
    }
    return queue;
  }
}
