/** The memory guard: 503 + Retry-After above the soft limit, counted, and ingest resumes below it. */
import { describe, expect, it } from 'vitest';
import { MemoryGuard } from '../../src/ingest/memory.js';
import { series } from '../support/exposition.js';
import { FakeClock, startTestSidecar } from '../support/sidecar.js';

const MiB = 1024 * 1024;
const line = { event: 'post_tool_call', tool_name: 't', status: 'ok' };

describe('MemoryGuard', () => {
  it('samples at most once per interval and compares against each enabled limit', () => {
    const clock = new FakeClock(0);
    let rss = 100 * MiB;
    let samples = 0;
    const guard = new MemoryGuard({
      probe: () => {
        samples += 1;
        return { rssBytes: rss, heapUsedBytes: 10 * MiB };
      },
      clock: clock.read,
      rssLimitBytes: 200 * MiB,
      heapLimitBytes: 0,
      sampleIntervalSeconds: 1,
    });
    expect(guard.overLimit()).toBe(false);
    rss = 300 * MiB;
    expect(guard.overLimit()).toBe(false); // not re-sampled yet
    clock.advance(1);
    expect(guard.overLimit()).toBe(true);
    rss = 150 * MiB;
    clock.advance(1);
    expect(guard.overLimit()).toBe(false);
    expect(samples).toBe(3);
  });

  it('checks the heap limit too, and does nothing when both limits are 0', () => {
    const clock = new FakeClock(0);
    const probe = () => ({ rssBytes: 10 * 1024 * MiB, heapUsedBytes: 600 * MiB });
    expect(new MemoryGuard({ probe, clock: clock.read, rssLimitBytes: 0, heapLimitBytes: 512 * MiB }).overLimit()).toBe(true);
    expect(new MemoryGuard({ probe, clock: clock.read, rssLimitBytes: 0, heapLimitBytes: 0 }).overLimit()).toBe(false);
  });
});

describe('ingest under memory pressure', () => {
  it('answers 503 with Retry-After and its own reason while over the limit, then resumes', async () => {
    let rss = 100 * MiB;
    const harness = startTestSidecar(
      { 'memory.rss-limit-bytes': String(200 * MiB), 'ingest.retry-after-seconds': '3' },
      { memoryProbe: () => ({ rssBytes: rss, heapUsedBytes: 0 }) },
    );
    expect((await harness.postNdjson([line])).status).toBe(202);
    rss = 250 * MiB;
    harness.clock.advance(1);
    const refused = await harness.postNdjson([line]);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('3');
    expect(refused.body.error).toBe('memory_limit');
    expect((await harness.web.get('/-/ready')).status).toBe(200);
    rss = 150 * MiB;
    harness.clock.advance(1);
    expect((await harness.postNdjson([line])).status).toBe(202);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'memory_limit' }))).toBe(1);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 't', status: 'ok' }))).toBe(2);
  });
});
