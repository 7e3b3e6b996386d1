/**
 * Approvals: pre_approval_request opens, post_approval_response closes. Hermes sends no request
 * id, so a response matches its request by tool_call_id when set, else first-in-first-out per
 * session_key (the order Hermes answers a session's approvals in), within the turn when Hermes
 * names it (0.21 passes turn_id from tools/approval_context.py _fire_approval_hook).
 *
 * Smart mode (approvals.mode: smart) asks an auxiliary model first: Hermes fires
 * pre_approval_request(surface="smart") and, only on an APPROVE or DENY verdict, a smart
 * post_approval_response (tools/approval_smart.py, _smart_verdict). Any other verdict escalates
 * to a person, who is asked on the cli or gateway surface for the same operation
 * (tools/approval.py, _human_decision). The smart request then ends in the outcome `escalated`
 * when the person's request arrives; it is not an orphan.
 */
import { durationBetween } from '../../contract/bounds.js';
import type { EventData } from '../../contract/events.js';
import { VALUES, type ValueOf } from '../../metrics/catalogue.js';
import { closedLabel, type Fallback } from '../../metrics/labels.js';
import type { OwnedMetrics } from '../../metrics/registry.js';
import { compositeKey, GaugeTally, spanTable, type Collectable, type RecorderContext } from './context.js';

type Approval = Extract<EventData, { type: 'approval_requested' | 'approval_responded' }>;

const SURFACES = new Set(VALUES.approval_surface);
const CHOICES = new Set(VALUES.approval_choice);

type Surface = ValueOf<'approval_surface'> | Fallback;

const SMART = 'smart';
/** decided_by of a smart verdict (tools/approval_smart.py): its response is the smart surface's. */
const AUXILIARY_MODEL = 'aux_llm';

interface PendingApproval {
  readonly surface: Surface;
  readonly patternKey: string;
  readonly requestedAt: number;
  /** The session_key queue this request waits in, when it has no tool_call_id. */
  readonly fifo: string | undefined;
  readonly key: string;
}

/** The queue a request without tool_call_id waits in: its session's, its turn's when named. */
function fifoOf(event: Approval): string {
  const sessionKey = event.sessionKey ?? '';
  return event.turnId === undefined ? sessionKey : compositeKey(sessionKey, event.turnId);
}

function surfaceOf(event: Approval): Surface {
  if (event.surface === undefined && event.decidedBy === AUXILIARY_MODEL) return SMART;
  return closedLabel(SURFACES, event.surface);
}

export class ApprovalRecorder implements Collectable {
  private readonly pending;
  private readonly pendingTally = new GaugeTally<{ surface: Surface }>((labels) => labels.surface);
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
    for (const [labels, change] of this.pendingTally.changes(this.pending.values(), (approval) => ({ surface: approval.surface }))) {
      if (change < 0) this.metrics.approvalsPending.dec(labels, -change);
      else this.metrics.approvalsPending.inc(labels, change);
    }
  }

  requested(event: Approval, observedAt: number): void {
    const surface = surfaceOf(event);
    const patternKey = this.context.labels.value('pattern_key', event.patternKey);
    this.metrics.approvalRequests.inc({ surface, pattern_key: patternKey });
    if (surface !== SMART) this.escalateSmartRequest(event, patternKey, observedAt);
    const fifo = event.toolCallId === undefined ? fifoOf(event) : undefined;
    const key =
      fifo === undefined ? compositeKey('id', event.toolCallId ?? '') : compositeKey('fifo', String(this.nextFifoId++));
    if (fifo !== undefined) this.queueOf(fifo).push(key);
    this.pendingTally.opened({ surface });
    this.pending.open(key, { surface, patternKey, requestedAt: observedAt, fifo, key });
  }

  responded(event: Approval, observedAt: number): void {
    const surface = surfaceOf(event);
    const choice = closedLabel(CHOICES, event.choice);
    const patternKey = this.context.labels.value('pattern_key', event.patternKey);
    this.metrics.approvalDecisions.inc({ surface, pattern_key: patternKey, choice });
    const request = this.match(event, surface, patternKey);
    if (request === undefined) return;
    this.forget(request);
    const wait = durationBetween(request.requestedAt, observedAt);
    if (wait === undefined) this.context.valueRejected('duration');
    else this.metrics.approvalWait.observe({ surface, choice }, wait);
  }

  /**
   * A person is asked while the auxiliary model's request for the same operation is still open:
   * the model escalated. Same operation = same tool_call_id, or, without one, the oldest open
   * smart request of the session with the same pattern.
   */
  private escalateSmartRequest(event: Approval, patternKey: string, observedAt: number): void {
    const key =
      event.toolCallId === undefined
        ? this.fifos.get(fifoOf(event))?.find((candidate) => {
            const waiting = this.pending.get(candidate);
            return waiting?.surface === SMART && waiting.patternKey === patternKey;
          })
        : compositeKey('id', event.toolCallId);
    if (key === undefined || this.pending.get(key)?.surface !== SMART) return;
    const smart = this.pending.close(key);
    if (smart === undefined) return;
    this.forget(smart);
    this.metrics.approvalDecisions.inc({ surface: SMART, pattern_key: smart.patternKey, choice: 'escalated' });
    this.metrics.approvalWait.observe({ surface: SMART, choice: 'escalated' }, Math.max(0, observedAt - smart.requestedAt));
  }

  /**
   * By tool_call_id; else the session's oldest open request of the same surface and pattern, else
   * of the same surface, else its oldest (requests of one session can wait on several surfaces).
   */
  private match(event: Approval, surface: Surface, patternKey: string): PendingApproval | undefined {
    if (event.toolCallId !== undefined) return this.pending.close(compositeKey('id', event.toolCallId));
    const queue = this.fifos.get(fifoOf(event));
    if (queue === undefined) return undefined;
    const waiting = (key: string) => this.pending.get(key);
    const key =
      queue.find((candidate) => waiting(candidate)?.surface === surface && waiting(candidate)?.patternKey === patternKey) ??
      queue.find((candidate) => waiting(candidate)?.surface === surface) ??
      queue[0];
    return key === undefined ? undefined : this.pending.close(key);
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
