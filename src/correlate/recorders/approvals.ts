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
 *
 * Every event costs O(1), however many requests wait: a session's requests without tool_call_id
 * wait in three first-in-first-out lists at once (all of them; by surface; by surface and
 * pattern), so each matching rule reads the head of one list, and a request that leaves (answered,
 * escalated, expired or evicted) unlinks itself from all three (fifo.ts).
 */
import { durationBetween } from '../../contract/bounds.js';
import type { EventData } from '../../contract/events.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Fallback } from '../../wireText.js';
import type { Families } from '../../metrics/registry.js';
import { compositeKey, spanTable, type RecorderContext } from './context.js';
import { Fifo, type FifoNode } from '../fifo.js';
import { IdMap, stringBytes } from '../idMap.js';
import { VALUES, type ValueOf } from '../../contract/vocabulary.js';
import { OPEN, counter, gauge, histogram, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';

/** The families this module writes (and all it is handed). */
export const APPROVAL_FAMILIES = {
  approvalRequests: fed(counter('hermes_approval_requests_total', { surface: VALUES.approval_surface, pattern_key: OPEN }, 'agent',
    'Approval requests by surface and dangerous-command pattern.'),
    'hermes', '`pre_approval_request`: `surface`, `pattern_key`'),
  approvalDecisions: fed(counter('hermes_approval_decisions_total', { surface: VALUES.approval_surface, pattern_key: OPEN, choice: VALUES.approval_choice }, 'agent',
    'Approval decisions by surface, pattern and choice.'),
    'hermes', '`post_approval_response`: `surface`, `pattern_key`, `choice` (`decided_by="aux_llm"` means smart); `choice="escalated"` when a smart request is followed by a cli/gateway request for the same operation'),
  approvalWait: fed(histogram('hermes_approval_wait_seconds', { surface: VALUES.approval_surface, choice: VALUES.approval_choice }, 'tool_seconds', 'agent',
    'Observed time from approval request to response.'),
    'hermes', 'observed time from `pre_approval_request` to `post_approval_response` (by `tool_call_id`, else `session_key` and `turn_id` when Hermes 0.21 sets it, else `session_key`), or to the escalation'),
  approvalsPending: fed(gauge('hermes_approvals_pending', { surface: VALUES.approval_surface }, 'agent',
    'Approval requests without a response yet (moved as requests open and close; at 0 for the series TTL, the series expires).', { computed: true }),
    'hermes', '`pre_approval_request` without its response yet'),
} as const satisfies Declarations;

type Approval = Extract<EventData, { type: 'approval_requested' | 'approval_responded' }>;

const SURFACES = new Set(VALUES.approval_surface);
const CHOICES = new Set(VALUES.approval_choice);

type Surface = ValueOf<'approval_surface'> | Fallback;

const SMART = 'smart';
/** decided_by of a smart verdict (tools/approval_smart.py): its response is the smart surface's. */
const AUXILIARY_MODEL = 'aux_llm';

/** A session's requests without tool_call_id, oldest first: all of them, by surface, by surface and pattern. */
interface SessionQueue {
  readonly sessionKey: string;
  /** The request charged for the session's lists and its key (QUEUE_BYTES); another takes it over when it leaves. */
  carrier: PendingApproval;
  readonly all: Fifo<PendingApproval>;
  readonly bySurface: Map<Surface, Fifo<PendingApproval>>;
  /** Keyed by surface and pattern: guarded labels, so bounded by the pattern_key cap. */
  readonly byPattern: Map<string, Fifo<PendingApproval>>;
}

/** A request's places in its session's three lists. */
interface QueueNodes {
  readonly queue: SessionQueue;
  readonly all: FifoNode<PendingApproval>;
  readonly surface: FifoNode<PendingApproval>;
  readonly pattern: FifoNode<PendingApproval>;
}

interface PendingApproval {
  readonly surface: Surface;
  readonly patternKey: string;
  readonly requestedAt: number;
  readonly key: string;
  /** Set when the request has no tool_call_id and waits in its session's lists. */
  nodes: QueueNodes | undefined;
}

/**
 * Bytes charged on top of the table's own per-entry charge (bench/tables.ts, "heap per entry",
 * measured 1,112 B per request, ids included, with one request per session): each queued request
 * for its three list nodes; one request of each session for the session's lists, besides the
 * session key's bytes.
 */
const QUEUED_REQUEST_BYTES = 256;
const QUEUE_BYTES = 1024;

/** The queue a request without tool_call_id waits in: its session's, its turn's when named. */
function fifoOf(event: Approval): string {
  const sessionKey = event.sessionKey ?? '';
  return event.turnId === undefined ? sessionKey : compositeKey(sessionKey, event.turnId);
}

function surfaceOf(event: Approval): Surface {
  if (event.surface === undefined && event.decidedBy === AUXILIARY_MODEL) return SMART;
  return closedLabel(SURFACES, event.surface);
}

// Guarded label values hold no control characters, so NUL separates them unambiguously.
const patternListKey = (surface: Surface, patternKey: string): string => `${surface}\u0000${patternKey}`;

function listOf<K>(lists: Map<K, Fifo<PendingApproval>>, key: K): Fifo<PendingApproval> {
  let list = lists.get(key);
  if (list === undefined) lists.set(key, (list = new Fifo()));
  return list;
}

/** Removes a node from its list, and the list from its map once empty. */
function unlinkFrom<K>(lists: Map<K, Fifo<PendingApproval>>, key: K, node: FifoNode<PendingApproval>): void {
  const list = node.list;
  if (list === undefined) return;
  list.remove(node);
  if (list.size === 0) lists.delete(key);
}

export class ApprovalRecorder {
  private readonly pending;
  // session_key → its requests without tool_call_id.
  private readonly queues = new IdMap<SessionQueue>();
  private nextFifoId = 0;

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof APPROVAL_FAMILIES>,
  ) {
    this.pending = spanTable<PendingApproval>(
      context,
      'approval',
      (approval) => this.forget(approval),
      (approval) => this.metrics.approvalsPending.dec({ surface: approval.surface }),
    );
  }

  requested(event: Approval, observedAt: number): void {
    const surface = surfaceOf(event);
    const patternKey = this.context.labels.value('pattern_key', event.patternKey);
    this.metrics.approvalRequests.inc({ surface, pattern_key: patternKey });
    if (surface !== SMART) this.escalateSmartRequest(event, patternKey, observedAt);
    this.metrics.approvalsPending.inc({ surface });
    if (event.toolCallId !== undefined) {
      const key = compositeKey('id', event.toolCallId);
      this.pending.open(key, { surface, patternKey, requestedAt: observedAt, key, nodes: undefined });
      return;
    }
    const queueKey = fifoOf(event);
    const key = compositeKey('fifo', String(this.nextFifoId++));
    const approval: PendingApproval = { surface, patternKey, requestedAt: observedAt, key, nodes: undefined };
    // Opened before it is queued: a full table evicts older requests first, never this one.
    const queued = this.queues.get(queueKey) === undefined ? QUEUED_REQUEST_BYTES + QUEUE_BYTES + stringBytes(queueKey) : QUEUED_REQUEST_BYTES;
    this.pending.open(key, approval, queued);
    this.enqueue(approval, queueKey);
  }

  responded(event: Approval, observedAt: number): void {
    const surface = surfaceOf(event);
    const choice = closedLabel(CHOICES, event.choice);
    const patternKey = this.context.labels.value('pattern_key', event.patternKey);
    this.metrics.approvalDecisions.inc({ surface, pattern_key: patternKey, choice });
    const request = this.match(event, surface, patternKey);
    if (request === undefined) return;
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
        ? this.queues.get(fifoOf(event))?.byPattern.get(patternListKey(SMART, patternKey))?.first?.key
        : compositeKey('id', event.toolCallId);
    if (key === undefined || this.pending.get(key)?.surface !== SMART) return;
    const smart = this.take(key);
    if (smart === undefined) return;
    this.metrics.approvalDecisions.inc({ surface: SMART, pattern_key: smart.patternKey, choice: 'escalated' });
    this.metrics.approvalWait.observe({ surface: SMART, choice: 'escalated' }, Math.max(0, observedAt - smart.requestedAt));
  }

  /**
   * By tool_call_id; else the session's oldest open request of the same surface and pattern, else
   * of the same surface, else its oldest (requests of one session can wait on several surfaces).
   */
  private match(event: Approval, surface: Surface, patternKey: string): PendingApproval | undefined {
    if (event.toolCallId !== undefined) return this.take(compositeKey('id', event.toolCallId));
    const queue = this.queues.get(fifoOf(event));
    if (queue === undefined) return undefined;
    const oldest =
      queue.byPattern.get(patternListKey(surface, patternKey))?.first ?? queue.bySurface.get(surface)?.first ?? queue.all.first;
    return oldest === undefined ? undefined : this.take(oldest.key);
  }

  /** Closes a pending request and takes it out of its session's lists. */
  private take(key: string): PendingApproval | undefined {
    const approval = this.pending.close(key);
    if (approval !== undefined) this.forget(approval);
    return approval;
  }

  private enqueue(approval: PendingApproval, sessionKey: string): void {
    let queue = this.queues.get(sessionKey);
    if (queue === undefined) {
      queue = { sessionKey, carrier: approval, all: new Fifo(), bySurface: new Map(), byPattern: new Map() };
      this.queues.set(sessionKey, queue);
    }
    approval.nodes = {
      queue,
      all: queue.all.push(approval),
      surface: listOf(queue.bySurface, approval.surface).push(approval),
      pattern: listOf(queue.byPattern, patternListKey(approval.surface, approval.patternKey)).push(approval),
    };
  }

  /**
   * Removes a request from its session's lists, and the session once it has none; the session's
   * charge passes to its oldest request left.
   */
  private forget(approval: PendingApproval): void {
    const nodes = approval.nodes;
    if (nodes === undefined) return;
    approval.nodes = undefined;
    const { queue } = nodes;
    queue.all.remove(nodes.all);
    unlinkFrom(queue.bySurface, approval.surface, nodes.surface);
    unlinkFrom(queue.byPattern, patternListKey(approval.surface, approval.patternKey), nodes.pattern);
    const next = queue.all.first;
    if (next === undefined) this.queues.delete(queue.sessionKey);
    else if (queue.carrier === approval) {
      queue.carrier = next;
      this.pending.charge(next.key, QUEUE_BYTES + stringBytes(queue.sessionKey));
    }
  }
}
