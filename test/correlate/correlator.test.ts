/** The correlator's TTL sweep and bounds, on the injected clock, through the whole pipeline. */
import { describe, expect, it } from 'vitest';
import { SpanTable } from '../../src/correlate/spans.js';
import { series, type Samples } from '../support/exposition.js';
import { FakeClock, startTestSidecar } from '../support/sidecar.js';

describe('SpanTable', () => {
  const build = (maxEntries = 10) => {
    const clock = new FakeClock(0);
    const orphans: [string, string][] = [];
    const table = new SpanTable<string>({ clock: clock.read, ttlSeconds: 60, maxEntries, maxBytes: Number.MAX_SAFE_INTEGER, onOrphan: (value, cause) => orphans.push([value, cause]) });
    return { clock, table, orphans };
  };

  it('closes a span and returns its value', () => {
    const { clock, table } = build();
    table.open('k', 'v');
    clock.advance(2.5);
    expect(table.close('k')).toBe('v');
    expect(table.close('k')).toBeUndefined();
  });

  it('orphans spans older than the TTL on sweep, and only those', () => {
    const { clock, table, orphans } = build();
    table.open('old', 'a');
    clock.advance(30);
    table.open('young', 'b');
    clock.advance(30);
    table.sweep();
    expect(orphans).toEqual([['a', 'expired']]);
    expect(table.size).toBe(1);
  });

  it('evicts the oldest span when full, and orphans a span reopened under its key', () => {
    const { table, orphans } = build(2);
    table.open('1', 'a');
    table.open('2', 'b');
    table.open('3', 'c');
    table.open('3', 'd');
    expect(orphans).toEqual([
      ['a', 'evicted'],
      ['c', 'replaced'],
    ]);
    expect(table.size).toBe(2);
  });

  it('restarts the TTL of a touched span', () => {
    const { clock, table, orphans } = build();
    table.open('s', 'a');
    clock.advance(50);
    table.touch('s');
    clock.advance(50);
    table.sweep();
    expect(orphans).toEqual([]);
  });
});

describe('orphaned spans through the pipeline', () => {
  it('counts every kind of unfinished span after the TTL and undoes its gauge', async () => {
    const harness = startTestSidecar({ 'correlator.span-ttl': '60' });
    await harness.postNdjson([
      { event: 'pre_api_request', api_request_id: 'r1', turn_id: 't1', provider: 'openrouter', model: 'm' },
      { event: 'pre_tool_call', tool_call_id: 'c1', tool_name: 'terminal', turn_id: 't1' },
      { event: 'pre_llm_call', turn_id: 't1', platform: 'cli', model: 'm' },
      { event: 'pre_approval_request', surface: 'cli', pattern_key: 'sudo', session_key: 'k' },
      { event: 'subagent_start', child_session_id: 'c', child_role: 'leaf' },
    ]);
    let samples = await harness.samples();
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'main', provider: 'openrouter' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_in_flight', { tool: 'terminal' }))).toBe(1);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(1);
    expect(samples.get(series('hermes_subagents_active', { role: 'leaf' }))).toBe(1);

    harness.clock.advance(59);
    await harness.sidecar.sweep();
    samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind: 'api' }))).toBe(0);

    harness.clock.advance(1);
    await harness.sidecar.sweep();
    samples = await harness.samples();
    for (const kind of ['api', 'tool', 'turn', 'approval', 'subagent']) {
      expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind }))).toBe(1);
    }
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'main', provider: 'openrouter' }))).toBe(0);
    expect(samples.get(series('hermes_tool_calls_in_flight', { tool: 'terminal' }))).toBe(0);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(0);
    expect(samples.get(series('hermes_subagents_active', { role: 'leaf' }))).toBe(0);

    // A late terminal event still counts, but cannot drive a gauge negative.
    await harness.postNdjson([{ event: 'post_tool_call', tool_call_id: 'c1', tool_name: 'terminal', status: 'ok' }]);
    samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_in_flight', { tool: 'terminal' }))).toBe(0);
  });

  it('orphans an API attempt restarted without an error (a core recovery path)', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      { event: 'pre_api_request', api_request_id: 'r1', provider: 'p', model: 'm' },
      { event: 'pre_api_request', api_request_id: 'r1', provider: 'p', model: 'm' },
      { event: 'post_api_request', api_request_id: 'r1', provider: 'p', model: 'm', api_duration: 1 },
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind: 'api' }))).toBe(1);
    expect(samples.get(series('hermes_api_requests_in_flight', { kind: 'main', provider: 'p' }))).toBe(0);
  });

  it('bounds every table: the oldest span is evicted and counted', async () => {
    const harness = startTestSidecar({ 'correlator.max-spans': '3' });
    await harness.postNdjson(
      Array.from({ length: 5 }, (_, index) => ({ event: 'pre_tool_call', tool_call_id: `c${index}`, tool_name: 'terminal' })),
    );
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind: 'tool' }))).toBe(2);
    expect(samples.get(series('hermes_tool_calls_in_flight', { tool: 'terminal' }))).toBe(3);
  });

  it('matches approvals without tool_call_id first-in-first-out per session_key', async () => {
    const harness = startTestSidecar();
    const request = (key: string, at: number) => ({ event: 'pre_approval_request', surface: 'gateway', pattern_key: 'sudo', session_key: key, tool_call_id: '', observed_at: at });
    const response = (key: string, at: number, choice: string) => ({ ...request(key, at), event: 'post_approval_response', choice });
    await harness.postNdjson([request('A', 100), request('B', 101), request('A', 102), response('A', 110, 'once'), response('A', 120, 'deny'), response('B', 131, 'always')]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'gateway', choice: 'once' }))).toBe(10);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'gateway', choice: 'deny' }))).toBe(18);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'gateway', choice: 'always' }))).toBe(30);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'gateway' }))).toBe(0);
  });

  it('matches approvals without tool_call_id within their turn when Hermes names it (turn_id)', async () => {
    const harness = startTestSidecar();
    const request = (turn: string, at: number) => ({ event: 'pre_approval_request', surface: 'gateway', pattern_key: 'sudo', session_key: 'k', tool_call_id: '', turn_id: turn, observed_at: at });
    const response = (turn: string, at: number, choice: string) => ({ ...request(turn, at), event: 'post_approval_response', choice });
    // The later turn's request is answered first: first-in-first-out alone would pair it with the earlier one.
    await harness.postNdjson([request('t1', 100), request('t2', 110), response('t2', 111, 'deny'), response('t1', 120, 'once')]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'gateway', choice: 'deny' }))).toBe(1);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'gateway', choice: 'once' }))).toBe(20);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'gateway' }))).toBe(0);
  });

  it('expires idle sessions after the session TTL; activity keeps them', async () => {
    const harness = startTestSidecar({ 'correlator.session-ttl': '100' });
    await harness.postNdjson([
      { event: 'on_session_start', session_id: 's1', platform: 'cli' },
      { event: 'on_session_start', session_id: 's2', platform: 'cli' },
    ]);
    harness.clock.advance(90);
    await harness.postNdjson([{ event: 'pre_llm_call', session_id: 's1', turn_id: 't', platform: 'cli' }]);
    harness.clock.advance(20);
    await harness.sidecar.sweep();
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(1);
  });
});

describe('per-session totals through the pipeline', () => {
  it("adds a session's main-loop calls through their turns: not its auxiliary calls, not a subagent's calls", async () => {
    const harness = startTestSidecar();
    const call = (turn: string, id: string, extra: Record<string, unknown>) => ({
      provider: 'anthropic', model: 'm', api_request_id: id, turn_id: turn, usage: { input_tokens: 100, output_tokens: 10 }, ...extra,
    });
    await harness.postNdjson([
      { event: 'on_session_start', session_id: 'parent', platform: 'cli', observed_at: 1000 },
      { event: 'pre_llm_call', session_id: 'parent', turn_id: 't1', platform: 'cli', observed_at: 1001 },
      { event: 'post_api_request', ...call('t1', 'a1', { cost_usd: 0.25, cost_status: 'actual' }), observed_at: 1002 },
      // An auxiliary call of the turn (compression, say): unpriced, and not the session's.
      { event: 'post_auxiliary_call', ...call('t1', 'x1', {}), observed_at: 1003 },
      { event: 'subagent_start', child_session_id: 'child', child_role: 'leaf', observed_at: 1004 },
      { event: 'on_session_start', session_id: 'child', platform: 'cli', observed_at: 1004 },
      { event: 'pre_llm_call', session_id: 'child', turn_id: 'c1', platform: 'cli', observed_at: 1005 },
      { event: 'post_api_request', ...call('c1', 'a2', { cost_usd: 4, cost_status: 'actual' }), observed_at: 1006 },
      { event: 'subagent_stop', child_session_id: 'child', child_role: 'leaf', child_status: 'completed', duration_ms: 2000, observed_at: 1007 },
      { event: 'on_session_end', session_id: 'parent', turn_id: 't1', platform: 'cli', completed: true, observed_at: 1008 },
      { event: 'pre_llm_call', session_id: 'parent', turn_id: 't2', platform: 'cli', observed_at: 1009 },
      { event: 'post_api_request', ...call('t2', 'a3', { cost_usd: 0.5, cost_status: 'actual' }), observed_at: 1010 },
      { event: 'on_session_end', session_id: 'parent', turn_id: 't2', platform: 'cli', completed: true, observed_at: 1011 },
      { event: 'on_session_finalize', session_id: 'parent', platform: 'cli', observed_at: 1040 },
    ]);
    const samples = await harness.samples();
    const get = (name: string, labels: Record<string, string> = { platform: 'cli' }) => samples.get(series(name, labels));
    expect(get('hermes_session_cost_usd_sum')).toBe(0.25 + 0.5);
    expect(get('hermes_session_cost_usd_count')).toBe(1);
    expect(get('hermes_session_tokens_sum')).toBe(2 * (100 + 10));
    expect(get('hermes_session_turns_sum')).toBe(2);
    expect(get('hermes_session_duration_seconds_sum')).toBe(1040 - 1000);
    expect(get('hermes_sidecar_sessions_unobserved_total', { reason: 'subagent' })).toBe(1);
    expect(get('hermes_sidecar_sessions_unobserved_total', { reason: 'unpriced' })).toBe(0);
    // The auxiliary call still counts where calls are counted.
    expect(get('hermes_cost_unpriced_requests_total', { kind: 'auxiliary', provider: 'anthropic', model: 'm', reason: 'no_price' })).toBe(1);
    expect(get('hermes_sessions_active')).toBe(0);
  });
});

describe('delivery health through the pipeline', () => {
  const line = (seq: number, extra: Record<string, unknown> = {}) => ({
    event: 'post_tool_call',
    instance: 'inst',
    seq,
    observed_at: 1000 + seq,
    data: { tool_name: 'terminal', status: 'ok', tool_call_id: `c${seq}` },
    ...extra,
  });

  it('applies each seq once and counts gaps and duplicates', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([line(1), line(2), line(3)]);
    await harness.postNdjson([line(2), line(3), line(4)]); // a retried batch overlapping the last one
    await harness.postNdjson([line(8), line(9)]); // 5, 6, 7 not (yet) arrived
    expect((await harness.samples()).get('hermes_sidecar_events_lost_total')).toBe(0);
    await harness.postNdjson([line(6)]); // late: applied once, not lost
    await harness.postNdjson([{ event: 'plugin_heartbeat', instance: 'inst', data: { interval_seconds: 5, dropped: {} } }]);
    await harness.postNdjson([line(5)]); // after the heartbeat settled the gap as lost: discarded, not a duplicate
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(7);
    expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(2);
    expect(samples.get(series('hermes_sidecar_events_discarded_total', { reason: 'after_lost' }))).toBe(1);
    expect(samples.get('hermes_sidecar_events_late_total')).toBe(1);
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(2);
    expect(samples.get('hermes_plugin_last_seen_timestamp_seconds')).toBe(harness.clock.now);
    expect(samples.get(series('hermes_plugin_instances', { state: 'live' }))).toBe(1);
  });

  it('one poisoned line (seq 2^53-1, then acked_seq 1e15) costs a reset each, not 9e15 lost events nor the later real events', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([line(1), line(2)]);
    await harness.postNdjson([line(Number.MAX_SAFE_INTEGER)]);
    await harness.postNdjson([line(3), line(4)]);
    await harness.postNdjson([{ event: 'plugin_heartbeat', instance: 'inst', data: { interval_seconds: 5, acked_seq: 1e15, dropped: {} } }]);
    await harness.postNdjson([line(5), line(6)]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(7);
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
    expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(0);
    // The real numbers return to their own epoch, the nearest within the window: no reset for them.
    expect(samples.get(series('hermes_sidecar_sequence_resets_total', { reason: 'jump' }))).toBe(2);
    expect(samples.get(series('hermes_sidecar_sequence_resets_total', { reason: 'restart' }))).toBe(0);
  });

  it('adds heartbeat drop deltas across instances and restarts (a new boot)', async () => {
    const harness = startTestSidecar();
    const heartbeat = (instance: string, dropped: object, boot = 'b1') => ({ event: 'plugin_heartbeat', instance, data: { interval_seconds: 5, boot, dropped } });
    await harness.postNdjson([
      heartbeat('a', { post_tool_call: { queue_full: 3 }, pre_llm_call: { send_failed: 1 } }),
      heartbeat('a', { post_tool_call: { queue_full: 5 }, pre_llm_call: { send_failed: 1 } }),
      heartbeat('b', { post_tool_call: { queue_full: 4 } }),
      heartbeat('b', { post_tool_call: { queue_full: 1 } }, 'b2'), // a new numbering: its counters start again
      heartbeat('b', { made_up_hook: { bogus_reason: 2 }, post_tool_call: { queue_full: 'many' } }, 'b2'),
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'post_tool_call', reason: 'queue_full' }))).toBe(10);
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'pre_llm_call', reason: 'send_failed' }))).toBe(1);
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'other', reason: 'other' }))).toBe(2);
    expect(samples.get(series('hermes_plugin_instances', { state: 'live' }))).toBe(2);
    harness.clock.advance(16);
    expect((await harness.samples()).get(series('hermes_plugin_instances', { state: 'stale' }))).toBe(2);
  });

  describe('exactly once or counted why', () => {
    const applied = (samples: Samples) => samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }));
    const range = (from: number, to: number, extra: Record<string, unknown> = {}) =>
      Array.from({ length: to - from + 1 }, (_, index) => line(from + index, extra));
    const heartbeat = (data: Record<string, unknown>, instance = 'inst') => ({ event: 'plugin_heartbeat', instance, data: { interval_seconds: 5, dropped: {}, ...data } });

    it('applies the numbers below the first one seen when they arrive later: never seen, so never duplicates', async () => {
      const harness = startTestSidecar();
      await harness.postNdjson(range(11, 20));
      await harness.postNdjson(range(1, 10));
      const samples = await harness.samples();
      expect(applied(samples)).toBe(20);
      expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(0);
      expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
    });

    it('recognises a retried batch that straddles a far jump: each event applied once', async () => {
      const harness = startTestSidecar();
      const batch = [...range(1, 100), line(1_000_000)];
      await harness.postNdjson(batch);
      await harness.postNdjson(batch); // the response was lost: the same seqs again
      const samples = await harness.samples();
      expect(applied(samples)).toBe(101);
      expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(101);
      expect(samples.get(series('hermes_sidecar_sequence_resets_total', { reason: 'jump' }))).toBe(1);
    });

    it('counts a new numbering under the same id (acked_seq 0, no boot) as a restart and applies its events', async () => {
      const harness = startTestSidecar();
      await harness.postNdjson(range(1, 300));
      await harness.postNdjson([heartbeat({ acked_seq: 0 }), ...range(1, 500)]);
      const samples = await harness.samples();
      expect(applied(samples)).toBe(800);
      expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(0);
      expect(samples.get(series('hermes_sidecar_sequence_resets_total', { reason: 'restart' }))).toBe(1);
      expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
    });

    it('counts a new heartbeat boot as a restart; a heartbeat of the earlier boot is stale and settles nothing', async () => {
      const harness = startTestSidecar();
      await harness.postNdjson([heartbeat({ boot: 'first', acked_seq: 0 }), ...range(1, 300)]);
      await harness.postNdjson([heartbeat({ boot: 'second', acked_seq: 0 }), ...range(1, 5), ...range(8, 500)]);
      await harness.postNdjson([heartbeat({ boot: 'first', acked_seq: 300 })]); // delayed: 6 and 7 may still come
      await harness.postNdjson(range(6, 7));
      const samples = await harness.samples();
      expect(applied(samples)).toBe(800);
      expect(samples.get(series('hermes_sidecar_sequence_resets_total', { reason: 'restart' }))).toBe(1);
      expect(samples.get(series('hermes_sidecar_heartbeats_stale_total', { reason: 'boot' }))).toBe(1);
      expect(samples.get('hermes_sidecar_events_late_total')).toBe(2);
      expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
    });

    it('discards, and counts as after_lost, events of a gap a heartbeat already settled as lost', async () => {
      const harness = startTestSidecar();
      await harness.postNdjson([line(1), line(2), line(5)]);
      await harness.postNdjson([heartbeat({ acked_seq: 5 })]);
      await harness.postNdjson([line(3), line(4)]);
      const samples = await harness.samples();
      expect(applied(samples)).toBe(3);
      expect(samples.get('hermes_sidecar_events_lost_total')).toBe(2);
      expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(0);
      expect(samples.get(series('hermes_sidecar_events_discarded_total', { reason: 'after_lost' }))).toBe(2);
    });

    it('never applies a retried batch twice after its instance was evicted (20,000 one-line heartbeats from new ids)', async () => {
      const harness = startTestSidecar();
      await harness.postNdjson(range(1, 10));
      for (let round = 0; round < 2; round += 1) {
        const response = await harness.postNdjson(Array.from({ length: 10_000 }, (_, index) => heartbeat({ acked_seq: 0 }, `flood-${round}-${index}`)));
        expect(response.status).toBe(202);
      }
      await harness.postNdjson(range(1, 10)); // the retried batch
      await harness.postNdjson(range(11, 12)); // and the instance's next events
      const samples = await harness.samples();
      // 20,001 ids through a table of 10,000: 10,001 evicted, and one more when inst comes back.
      expect(samples.get(series('hermes_sidecar_state_evictions_total', { table: 'plugin_instances' }))).toBe(10_002);
      expect(applied(samples)).toBe(12);
      expect(samples.get(series('hermes_sidecar_events_discarded_total', { reason: 'beyond_memory' }))).toBe(10);
    });

    it('reads a boot outside its grammar as absent (counted), so it cannot restart an instance', async () => {
      const harness = startTestSidecar();
      await harness.postNdjson([heartbeat({ boot: 'first', acked_seq: 0 }), ...range(1, 3)]);
      await harness.postNdjson([heartbeat({ boot: 'not a boot!', acked_seq: 3 }), heartbeat({ boot: 'x'.repeat(65), acked_seq: 3 }), ...range(1, 3)]);
      const samples = await harness.samples();
      expect(samples.get(series('hermes_sidecar_values_rejected_total', { field: 'boot' }))).toBe(2);
      expect(samples.get(series('hermes_sidecar_sequence_resets_total', { reason: 'restart' }))).toBe(0);
      expect(applied(samples)).toBe(3);
      expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(3);
    });

    it('ignores cumulative drop totals that arrive out of order (10, 20, 10, 20), counting the stale one', async () => {
      const harness = startTestSidecar();
      const totals = [10, 20, 10, 20].map((total) => heartbeat({ boot: 'b', acked_seq: 0, dropped: { post_tool_call: { queue_full: total } } }));
      for (const report of totals) await harness.postNdjson([report]);
      const samples = await harness.samples();
      expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'post_tool_call', reason: 'queue_full' }))).toBe(20);
      expect(samples.get(series('hermes_sidecar_heartbeats_stale_total', { reason: 'dropped' }))).toBe(1);
    });
  });
});
