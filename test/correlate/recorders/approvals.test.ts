/**
 * The approval recorder: requests, decisions, waits matched to their request, pending, escalations.
 * Matching costs O(1) per event, with the same matches as the rules say: by tool_call_id, else per
 * session_key the oldest request of the same surface and pattern, else of the same surface, else
 * the oldest; a person's request escalates the session's oldest smart request of the same pattern.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { APPROVAL_FAMILIES, ApprovalRecorder } from '../../../src/correlate/recorders/approvals.js';
import { SpanTable } from '../../../src/correlate/spans.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness, START } from '../../support/recorders.js';
import { startTestSidecar } from '../../support/sidecar.js';

function setup() {
  const harness = recorderHarness();
  return { harness, approvals: new ApprovalRecorder(harness.context, familiesFor(harness.metrics, APPROVAL_FAMILIES)) };
}

const REQUEST = { type: 'approval_requested', surface: 'cli', patternKey: 'rm', sessionKey: 's1' } as const;
const RESPONSE = { ...REQUEST, type: 'approval_responded', choice: 'once' } as const;

describe('ApprovalRecorder', () => {
  it('counts requests and decisions, and observes the wait from the matched request', async () => {
    const { harness, approvals } = setup();
    approvals.requested(REQUEST, START);
    expect((await harness.samples()).get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(1);
    approvals.responded(RESPONSE, START + 7);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_requests_total', { surface: 'cli', pattern_key: 'rm' }))).toBe(1);
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'cli', pattern_key: 'rm', choice: 'once' }))).toBe(1);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'once' }))).toBe(7);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(0);
  });

  it('matches by tool_call_id before the session queue', async () => {
    const { harness, approvals } = setup();
    approvals.requested(REQUEST, START);
    approvals.requested({ ...REQUEST, toolCallId: 'c1' }, START + 5);
    approvals.responded({ ...RESPONSE, toolCallId: 'c1' }, START + 6);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'once' }))).toBe(1);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(1);
  });

  it('answers the oldest request of the same surface and pattern in the session first', async () => {
    const { harness, approvals } = setup();
    approvals.requested({ ...REQUEST, patternKey: 'sudo' }, START);
    approvals.requested(REQUEST, START + 2);
    approvals.requested(REQUEST, START + 4);
    approvals.responded(RESPONSE, START + 10);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'once' }))).toBe(8);
  });

  it("counts a person's request for an operation the auxiliary model was asked about as an escalation", async () => {
    const { harness, approvals } = setup();
    approvals.requested({ ...REQUEST, surface: 'smart' }, START);
    approvals.requested(REQUEST, START + 3);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm', choice: 'escalated' }))).toBe(1);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'smart', choice: 'escalated' }))).toBe(3);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'smart' }))).toBe(0);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(1);
  });

  it('takes a decision by the auxiliary model without a surface as smart, and folds an unlisted choice into other', async () => {
    const { harness, approvals } = setup();
    approvals.responded({ type: 'approval_responded', patternKey: 'rm', decidedBy: 'aux_llm', choice: 'maybe' }, START);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm', choice: 'other' }))).toBe(1);
    // No request was open: no wait.
    expect([...samples.keys()].filter((key) => key.startsWith('hermes_approval_wait_seconds_count'))).toEqual([]);
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

const POST_LINES = 10_000;

async function postAll(harness: ReturnType<typeof startTestSidecar>, lines: readonly object[]): Promise<void> {
  for (let from = 0; from < lines.length; from += POST_LINES) {
    const answer = await harness.postNdjson(lines.slice(from, from + POST_LINES));
    expect(answer.status).toBe(202);
  }
}

describe('a long pending queue', () => {
  it('60,000 pending smart approvals, then 2,000 cli requests and their answers: a bounded number of table reads per event, exact metrics', async () => {
    // The byte budget is raised so that all 60,000 stay pending: the subject is the work per event.
    const harness = startTestSidecar({ 'correlator.max-table-bytes': String(1024 * 1024 * 1024) });
    const smart = Array.from({ length: 60_000 }, (_, index) => ({
      event: 'pre_approval_request',
      surface: 'smart',
      pattern_key: 'rm',
      session_key: 'session',
      observed_at: 1_700_000_000 + index / 1000,
    }));
    const cli = { event: 'pre_approval_request', surface: 'cli', pattern_key: 'sudo', session_key: 'session', observed_at: 1_700_000_100 };
    const answer = { ...cli, event: 'post_approval_response', choice: 'once', observed_at: 1_700_000_110 };
    const events = smart.length + 2 * 2_000;
    // Matching reads the pending table; a scan of the session's queue would read it once per waiting request.
    const limit = 2 * events;
    let reads = 0;
    const read = Object.getOwnPropertyDescriptor(SpanTable.prototype, 'get')?.value as (this: SpanTable<unknown>, id: string) => unknown;
    vi.spyOn(SpanTable.prototype, 'get').mockImplementation(function (this: SpanTable<unknown>, id: string): unknown {
      reads += 1;
      if (reads > limit) throw new Error('more table reads than the bound');
      return read.call(this, id);
    });
    await postAll(harness, [...smart, ...Array.from({ length: 2_000 }, () => cli), ...Array.from({ length: 2_000 }, () => answer)]);
    expect(reads).toBeLessThanOrEqual(limit);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_dropped_total', { reason: 'internal_error' }))).toBe(0);
    expect(samples.get(series('hermes_approval_requests_total', { surface: 'smart', pattern_key: 'rm' }))).toBe(60_000);
    expect(samples.get(series('hermes_approval_requests_total', { surface: 'cli', pattern_key: 'sudo' }))).toBe(2_000);
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'cli', pattern_key: 'sudo', choice: 'once' }))).toBe(2_000);
    expect(samples.get(series('hermes_approval_wait_seconds_count', { surface: 'cli', choice: 'once' }))).toBe(2_000);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'once' }))).toBe(20_000);
    // No smart request of the pattern sudo: nothing escalated, the smart requests still wait.
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm', choice: 'escalated' }))).toBeUndefined();
    expect(samples.get(series('hermes_approvals_pending', { surface: 'smart' }))).toBe(60_000);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(0);
  });
});

// ------------------------------------------------------------------------ the rules, by scanning

type Surface = 'cli' | 'gateway' | 'smart';

interface Step {
  readonly kind: 'request' | 'response';
  readonly surface: Surface;
  readonly pattern: 'p' | 'q';
  readonly session: 'A' | 'B';
  readonly toolCallId: string | undefined;
}

interface Waiting {
  readonly surface: Surface;
  readonly pattern: string;
  readonly at: number;
}

/** What the rules give, found by scanning arrays (the simplest reading of them), as metric values. */
function expected(steps: readonly Step[]): Map<string, number> {
  const byId = new Map<string, Waiting>();
  const queues = new Map<string, Waiting[]>();
  const values = new Map<string, number>();
  const add = (key: string, value: number) => values.set(key, (values.get(key) ?? 0) + value);
  const decided = (surface: Surface, pattern: string, choice: string, request: Waiting | undefined, at: number) => {
    add(series('hermes_approval_decisions_total', { surface, pattern_key: pattern, choice }), 1);
    if (request === undefined) return;
    add(series('hermes_approval_wait_seconds_count', { surface, choice }), 1);
    add(series('hermes_approval_wait_seconds_sum', { surface, choice }), at - request.at);
  };
  const takeFromQueue = (session: string, found: Waiting | undefined) => {
    const queue = queues.get(session) ?? [];
    if (found !== undefined) queue.splice(queue.indexOf(found), 1);
    return found;
  };
  steps.forEach((step, at) => {
    const queue = queues.get(step.session) ?? [];
    queues.set(step.session, queue);
    if (step.kind === 'request') {
      if (step.surface !== 'smart') {
        const smart =
          step.toolCallId === undefined
            ? takeFromQueue(step.session, queue.find((waiting) => waiting.surface === 'smart' && waiting.pattern === step.pattern))
            : byId.get(step.toolCallId)?.surface === 'smart'
              ? byId.get(step.toolCallId)
              : undefined;
        if (smart !== undefined && step.toolCallId !== undefined) byId.delete(step.toolCallId);
        if (smart !== undefined) decided('smart', smart.pattern, 'escalated', smart, at);
      }
      const waiting = { surface: step.surface, pattern: step.pattern, at };
      if (step.toolCallId === undefined) queue.push(waiting);
      else byId.set(step.toolCallId, waiting);
      return;
    }
    let request: Waiting | undefined;
    if (step.toolCallId !== undefined) {
      request = byId.get(step.toolCallId);
      byId.delete(step.toolCallId);
    } else {
      request = takeFromQueue(
        step.session,
        queue.find((waiting) => waiting.surface === step.surface && waiting.pattern === step.pattern) ??
          queue.find((waiting) => waiting.surface === step.surface) ??
          queue[0],
      );
    }
    decided(step.surface, step.pattern, 'once', request, at);
  });
  for (const surface of ['cli', 'gateway', 'smart'] as const) {
    const waiting = [...byId.values(), ...[...queues.values()].flat()].filter((request) => request.surface === surface).length;
    values.set(series('hermes_approvals_pending', { surface }), waiting);
  }
  return values;
}

const step = fc.record({
  kind: fc.constantFrom('request' as const, 'response' as const),
  surface: fc.constantFrom('cli' as const, 'gateway' as const, 'smart' as const),
  pattern: fc.constantFrom('p' as const, 'q' as const),
  session: fc.constantFrom('A' as const, 'B' as const),
  toolCallId: fc.option(fc.constantFrom('c1', 'c2', 'c3'), { nil: undefined, freq: 3 }),
});

describe('matching', () => {
  it('property: the lists give the same matches, escalations, waits and pending counts as scanning the queue', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const harness = startTestSidecar();
        const lines = steps.map((entry, at) => ({
          event: entry.kind === 'request' ? 'pre_approval_request' : 'post_approval_response',
          surface: entry.surface,
          pattern_key: entry.pattern,
          session_key: entry.session,
          ...(entry.toolCallId === undefined ? {} : { tool_call_id: entry.toolCallId }),
          ...(entry.kind === 'response' ? { choice: 'once' } : {}),
          observed_at: 1_700_000_000 + at,
        }));
        if (lines.length > 0) await harness.postNdjson(lines);
        const samples = await harness.samples();
        for (const [name, value] of expected(steps)) expect([name, samples.get(name) ?? 0]).toEqual([name, value]);
      }),
      { numRuns: 150 },
    );
  });
});
