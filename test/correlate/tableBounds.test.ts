/**
 * The correlation tables (sessions, spans) against hostile ids, through the event path: bounded in
 * bytes (ids of any length, counted evictions), and TTL sweeps that hand the event loop back.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_STRING_LIMITS } from '../../src/contract/bounds.js';
import { decodeBody } from '../../src/contract/decode.js';
import type { ObserverEvent } from '../../src/contract/events.js';
import { tableBudgets } from '../../src/correlate/assemble.js';
import { stringBytes } from '../../src/correlate/idMap.js';
import { SESSION_TOTALS_BYTES } from '../../src/correlate/recorders/sessions.js';
import { ENTRY_OVERHEAD_BYTES } from '../../src/correlate/spans.js';
import { runtimeGc } from '../../src/ingest/memory.js';
import type { Slicer } from '../../src/slices.js';
import { series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';

const MiB = 1024 * 1024;

/**
 * The decoder refuses long ids by default (--ingest.max-id-bytes); these tests lift that limit to
 * show that the tables stay bounded on their own, whatever reaches them.
 */
const UNLIMITED_STRINGS = { maxIdBytes: Number.MAX_SAFE_INTEGER, maxLabelValueBytes: DEFAULT_STRING_LIMITS.maxLabelValueBytes };

function decode(lines: readonly object[]): ObserverEvent[] {
  const body = Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n'));
  return decodeBody(body, { format: 'ndjson', maxEvents: lines.length, arrivedAt: 1_800_000_000, strings: UNLIMITED_STRINGS }).events;
}

/** An id of `length` characters, distinct from the others from its first character on. */
const longId = (index: number, length: number): string => {
  const head = `${index}-`;
  return head + 'x'.repeat(length - head.length);
};

/** A slicer on a counter: every look at the clock is one millisecond later; pauses are counted. */
function countingSlicer(): Slicer & { pauses: number } {
  let now = 0;
  const slicer = {
    sliceMs: 5,
    now: () => (now += 1),
    pauses: 0,
    pause: async () => {
      slicer.pauses += 1;
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
  return slicer;
}

describe('tables bounded in bytes', () => {
  it('8,512 session starts with 65,300-character session ids stay within the session table budget (live heap after GC)', async () => {
    const gc = runtimeGc();
    if (gc === undefined) throw new Error('the runtime refused a full GC: this test measures live heap');
    const liveHeap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const start = (harness: ReturnType<typeof startTestSidecar>, count: number) => {
      for (let from = 0; from < count; from += 32) {
        const lines = Array.from({ length: Math.min(32, count - from) }, (_, offset) => ({
          event: 'on_session_start',
          session_id: longId(from + offset, 65_300),
          platform: 'cli',
        }));
        harness.sidecar.dispatcher.applyBatch(decode(lines));
      }
    };
    // The same path once on a throwaway sidecar first, so the code compiled for it is not counted.
    start(startTestSidecar(), 512);
    const harness = startTestSidecar();
    const before = liveHeap();
    start(harness, 8_512);
    const grown = liveHeap() - before;
    // The ids alone are 556 MB; what the table keeps of them is bounded by its budget.
    expect(grown).toBeLessThan(tableBudgets(harness.sidecar.config.correlator.maxTableBytes).sessions);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(8_512);
    expect(samples.get(series('hermes_sidecar_state_evictions_total', { table: 'sessions' }))).toBe(0);
    // 556 MB of ids through the real path: 17-21 s alone on 2 cores, and past 30 s with both cores busy.
  }, 120_000);

  it('evicts the oldest sessions past the byte budget and counts them: 2,000 sessions with 1,000-character ids, 1 MB budget', async () => {
    const harness = startTestSidecar({ 'correlator.max-table-bytes': String(3 * 1_000_000), 'ingest.max-id-bytes': '65536' });
    // A session is charged its running totals too.
    const entryBytes = ENTRY_OVERHEAD_BYTES + stringBytes('x'.repeat(1000)) + SESSION_TOTALS_BYTES;
    const kept = Math.floor(1_000_000 / entryBytes);
    expect(kept).toBe(429);
    const ids = Array.from({ length: 2_000 }, (_, index) => longId(index, 1000));
    await harness.postNdjson(ids.map((id) => ({ event: 'on_session_start', session_id: id, platform: 'cli' })));
    let samples = await harness.samples();
    expect(samples.get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(kept);
    expect(samples.get(series('hermes_sidecar_state_evictions_total', { table: 'sessions' }))).toBe(2_000 - kept);
    // The newest were kept: finalizing them empties the table; the evicted ones are not there to finalize.
    await harness.postNdjson(ids.map((id) => ({ event: 'on_session_finalize', session_id: id, platform: 'cli' })));
    samples = await harness.samples();
    expect(samples.get(series('hermes_sessions_active', { platform: 'cli' }))).toBe(0);
    expect(samples.get(series('hermes_sessions_finalized_total', { platform: 'cli' }))).toBe(2_000);
  });

  it('charges the strings a span keeps: turns with long session ids evict older turns, counted by table', async () => {
    const harness = startTestSidecar({ 'correlator.max-table-bytes': String(15 * 100_000), 'ingest.max-id-bytes': '65536' });
    const budget = tableBudgets(15 * 100_000).eachSpanTable;
    expect(budget).toBe(200_000);
    // Each turn: its key and the turn id its state keeps (2 × 2 × 4 B), the session id (2 × 1,000 B), the index share.
    await harness.postNdjson(
      Array.from({ length: 300 }, (_, index) => ({
        event: 'pre_llm_call',
        turn_id: `t${String(index).padStart(3, '0')}`,
        session_id: longId(index, 1000),
        platform: 'cli',
        model: 'm',
      })),
    );
    const samples = await harness.samples();
    const evicted = samples.get(series('hermes_sidecar_state_evictions_total', { table: 'turns' })) ?? 0;
    const perTurn = ENTRY_OVERHEAD_BYTES + 8 + 8 + 2000 + 128;
    expect(evicted).toBe(300 - Math.floor(budget / perTurn));
    expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind: 'turn' }))).toBe(evicted);
  });
});

describe('TTL sweeps in slices', () => {
  it('a sweep of 20,000 expired spans hands the event loop back between slices and orphans each span once', async () => {
    const slicer = countingSlicer();
    const harness = startTestSidecar({ 'correlator.span-ttl': '60', 'correlator.max-table-bytes': String(1024 * MiB) }, { slicer });
    harness.sidecar.dispatcher.applyBatch(
      decode(Array.from({ length: 20_000 }, (_, index) => ({ event: 'pre_tool_call', tool_call_id: `c${index}`, tool_name: 'terminal' }))),
    );
    harness.clock.advance(60);
    slicer.pauses = 0;
    const sweeping = harness.sidecar.sweep();
    // While the sweep waits for its next slice, new work is applied: a span opened now is not expired by it.
    harness.sidecar.dispatcher.applyBatch(decode([{ event: 'pre_tool_call', tool_call_id: 'new', tool_name: 'terminal' }]));
    expect(harness.sidecar.sweep()).toBe(sweeping);
    await sweeping;
    // A slice ends at its fifth look at the clock after its start (each a millisecond later): five steps per slice.
    expect(slicer.pauses).toBeGreaterThanOrEqual(20_000 / 5);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind: 'tool' }))).toBe(20_000);
    expect(samples.get(series('hermes_sidecar_state_evictions_total', { table: 'tool_calls' }))).toBe(0);
    expect(samples.get(series('hermes_tool_calls_in_flight', { tool: 'terminal' }))).toBe(1);
  });
});
