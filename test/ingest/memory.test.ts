/**
 * The memory guard: it measures live memory (heap + Buffers), so it recovers once buffers are
 * freed even though RSS stays up; 503 + Retry-After and /-/ready 503 while under pressure.
 */
import { describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { liveBytes, MemoryGuard, processMemory, runtimeGc, type MemoryProbe } from '../../src/ingest/memory.js';
import { series } from '../support/exposition.js';
import { FakeClock, startTestSidecar } from '../support/sidecar.js';

type MemoryUsage = ReturnType<MemoryProbe>;

const MiB = 1024 * 1024;
const line = { event: 'post_tool_call', tool_name: 't', status: 'ok' };
const usage = (live: number, rss = live): MemoryUsage => ({ rssBytes: rss, heapUsedBytes: live / 2, externalBytes: live / 2 });

function guardWith(limits: Partial<{ live: number; rss: number; heap: number }>, probe: () => MemoryUsage, gc?: () => void) {
  const clock = new FakeClock(0);
  const guard = new MemoryGuard({
    probe,
    clock: clock.read,
    liveLimitBytes: limits.live ?? 0,
    rssLimitBytes: limits.rss ?? 0,
    heapLimitBytes: limits.heap ?? 0,
    sampleIntervalSeconds: 1,
    collectGarbage: gc,
  });
  return { clock, guard };
}

describe('MemoryGuard', () => {
  it('samples at most once per interval; live memory enters pressure above the limit and leaves it 10% below', () => {
    let live = 100 * MiB;
    let samples = 0;
    const { clock, guard } = guardWith({ live: 200 * MiB }, () => {
      samples += 1;
      return usage(live);
    });
    expect(guard.overLimit()).toBe(false);
    live = 300 * MiB;
    expect(guard.overLimit()).toBe(false); // not re-sampled yet
    clock.advance(1);
    expect(guard.overLimit()).toBe(true);
    live = 190 * MiB; // under the limit, not under the hysteresis margin
    clock.advance(1);
    expect(guard.overLimit()).toBe(true);
    live = 170 * MiB;
    clock.advance(1);
    expect(guard.overLimit()).toBe(false);
    expect(samples).toBe(4);
  });

  it('does not stay shut on RSS the allocator keeps after the buffers are freed (no lock-out on RSS alone)', () => {
    let current = usage(900 * MiB, 1100 * MiB);
    const { clock, guard } = guardWith({ live: 512 * MiB, rss: 1024 * MiB }, () => current);
    expect(guard.overLimit()).toBe(true);
    // The buffers are gone: live memory is back to 40 MiB, RSS stays at 1.1 GB.
    current = usage(40 * MiB, 1100 * MiB);
    clock.advance(1);
    expect(guard.overLimit()).toBe(false);
    clock.advance(1);
    expect(guard.overLimit()).toBe(false);
  });

  it('asks for a full GC before pressure starts and while under pressure, at most every 2 s', () => {
    let collections = 0;
    const { clock, guard } = guardWith({ live: 100 * MiB }, () => usage(200 * MiB), () => {
      collections += 1;
    });
    expect(guard.overLimit()).toBe(true);
    expect(collections).toBe(1); // the sample over the limit was checked after a GC
    for (let second = 0; second < 4; second += 1) {
      clock.advance(1);
      guard.overLimit();
    }
    expect(collections).toBe(3); // at 2 s and 4 s
  });

  it('refuses nothing for garbage: a sample over the limit that a GC brings under starts no pressure', () => {
    let live = 300 * MiB;
    let collections = 0;
    const { clock, guard } = guardWith({ live: 200 * MiB }, () => usage(live), () => {
      collections += 1;
      live = 80 * MiB;
    });
    expect(guard.overLimit()).toBe(false);
    expect(collections).toBe(1);
    expect(liveBytes(guard.usage)).toBe(80 * MiB);
    // Garbage again within the GC interval: no second GC, so this sample counts as it is.
    live = 300 * MiB;
    clock.advance(1);
    expect(guard.overLimit()).toBe(true);
    expect(collections).toBe(1);
  });

  it('checks the heap limit too, and does nothing when every limit is 0', () => {
    const probe = () => usage(1200 * MiB, 10 * 1024 * MiB);
    expect(guardWith({ heap: 512 * MiB }, probe).guard.overLimit()).toBe(true);
    expect(guardWith({}, probe).guard.overLimit()).toBe(false);
  });

  it('recovers on the real process once a large buffer is released', async () => {
    const gc = runtimeGc();
    expect(gc).toBeTypeOf('function');
    gc?.();
    const baseline = liveBytes(processMemory());
    const guard = new MemoryGuard({
      probe: processMemory,
      clock: systemClock,
      liveLimitBytes: baseline + 150 * MiB,
      rssLimitBytes: 0,
      heapLimitBytes: 0,
      sampleIntervalSeconds: 0.05,
      collectGarbage: gc,
    });
    let held: Buffer[] | undefined = Array.from({ length: 40 }, () => Buffer.alloc(5 * MiB, 1));
    expect(guard.overLimit()).toBe(true);
    expect(held.length).toBe(40);
    held = undefined;
    // A condition, not a duration: the guard samples every 50 ms and asks for a GC at most every
    // 2 s, so a loaded machine only makes this take longer.
    await vi.waitFor(() => expect(guard.overLimit()).toBe(false), { timeout: 20_000, interval: 50 });
  });
});

describe('ingest under memory pressure', () => {
  it('answers 503 with Retry-After and its own reason while bodies in flight hold memory over the limit, /-/ready 503 and the gauge 1, then resumes', async () => {
    let live = 100 * MiB;
    const harness = startTestSidecar(
      { 'memory.limit-bytes': '200Mi', 'ingest.retry-after-seconds': '3', 'ingest.max-inflight-bytes': '128Mi' },
      { memoryProbe: () => usage(live, 2048 * MiB), collectGarbage: undefined },
    );
    expect((await harness.postNdjson([line])).status).toBe(202);
    expect((await harness.web.get('/-/ready')).status).toBe(200);
    // Bodies being read hold 100 MiB of the 250: without them memory would be under the line.
    expect(harness.sidecar.inflight.tryReserve(100 * MiB)).toBe(true);
    live = 250 * MiB;
    harness.clock.advance(1);
    const refused = await harness.postNdjson([line]);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('3');
    expect(refused.body.error).toBe('memory_limit');
    const ready = await harness.web.get('/-/ready');
    expect(ready.status).toBe(503);
    expect(ready.text).toBe('Over the memory limit: ingest refused until the request bodies in flight drain\n');
    let samples = await harness.samples();
    expect(samples.get('hermes_sidecar_memory_pressure')).toBe(1);
    expect(samples.get('hermes_sidecar_memory_live_bytes')).toBe(250 * MiB);
    expect(samples.get(series('hermes_sidecar_memory_over_limit_total', { cause: 'inflight' }))).toBe(1);
    harness.sidecar.inflight.release(100 * MiB);
    live = 150 * MiB;
    harness.clock.advance(1);
    expect((await harness.postNdjson([line])).status).toBe(202);
    expect((await harness.web.get('/-/ready')).status).toBe(200);
    samples = await harness.samples();
    expect(samples.get('hermes_sidecar_memory_pressure')).toBe(0);
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'memory_limit' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 't', status: 'ok' }))).toBe(2);
  });

  it('after the traffic stops, memory held by stored series refuses no honest post: /-/ready says why, the counter says held', async () => {
    // The review's case: the manifest's RSS guard (192Mi), RSS 233 MiB and live memory 150 MiB
    // held by the series of a cap filled with wide values; nothing in flight.
    const harness = startTestSidecar(
      { 'memory.rss-limit-bytes': '192Mi', 'memory.limit-bytes': '0' },
      { memoryProbe: () => usage(150 * MiB, 233 * MiB), collectGarbage: undefined },
    );
    const statuses: number[] = [];
    for (let post = 0; post < 8; post += 1) {
      harness.clock.advance(1);
      statuses.push((await harness.postNdjson([{ ...line, tool_name: `t${post}` }])).status);
    }
    expect(statuses).toEqual(Array(8).fill(202));
    const ready = await harness.web.get('/-/ready');
    expect(ready.status).toBe(200);
    expect(ready.text).toMatch(/^Ready; memory over the limit \(150 MiB live\), held by \d+ stored series: refusing ingest cannot free it/);
    const samples = await harness.samples();
    expect(samples.get('hermes_sidecar_memory_pressure')).toBe(0);
    expect(samples.get(series('hermes_sidecar_memory_over_limit_total', { cause: 'held' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_memory_over_limit_total', { cause: 'inflight' }))).toBe(0);
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'memory_limit' }))).toBe(0);
    for (let post = 0; post < 8; post += 1) expect(samples.get(series('hermes_tool_calls_total', { tool: `t${post}`, status: 'ok' }))).toBe(1);
  });

  it('expires the longest-idle series early while stored series hold memory over the limit, never one written within 5 minutes', async () => {
    let live = 50 * MiB;
    const harness = startTestSidecar(
      { 'memory.limit-bytes': '100Mi', 'metrics.series-ttl': '3600' },
      { memoryProbe: () => usage(live), collectGarbage: undefined },
    );
    expect((await harness.postNdjson([{ ...line, tool_name: 'old' }])).status).toBe(202);
    await harness.sidecar.sweep(); // the sweep that starts the idle time of what it sees
    harness.clock.advance(400);
    expect((await harness.postNdjson([{ ...line, tool_name: 'recent' }])).status).toBe(202);
    await harness.sidecar.sweep();
    live = 400 * MiB; // far more than the few series could hold: all that may go, goes
    harness.clock.advance(1);
    expect((await harness.postNdjson([{ ...line, tool_name: 'recent' }])).status).toBe(202);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'old', status: 'ok' }))).toBeUndefined();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'recent', status: 'ok' }))).toBe(2);
    // Every series early expiry removed went as at its TTL: counted expired, by metric.
    const expired = [...samples].filter(([name]) => name.startsWith('hermes_sidecar_series_expired_total{')).reduce((total, [, value]) => total + value, 0);
    expect(samples.get(series('hermes_sidecar_series_expired_total', { metric: 'hermes_tool_calls_total' }))).toBe(1);
    expect(samples.get('hermes_sidecar_memory_series_shed_total')).toBe(expired);
    expect(expired).toBeGreaterThanOrEqual(1);
    expect((await harness.web.get('/-/ready')).text).toMatch(/ingest is accepted and [1-9]\d* idle series were expired early/);
  });
});
