/**
 * Early expiry (the memory guard's SeriesShedder): the longest-idle series leave first, through
 * the same sweep as the TTL, never one written within MIN_IDLE_SECONDS, and nothing when the TTL
 * is 0 (every series kept until restart).
 */
import { describe, expect, it } from 'vitest';
import { earlyExpiry, MIN_IDLE_SECONDS } from '../../src/metrics/earlyExpiry.js';
import { series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';

const tool = (name: string) => ({ event: 'post_tool_call', tool_name: name, status: 'ok' });
const calls = (name: string) => series('hermes_tool_calls_total', { tool: name, status: 'ok' });

async function sidecarWithAges(ttl: string) {
  const harness = startTestSidecar({ 'metrics.series-ttl': ttl });
  // Idle times start at the first sweep that sees a series (as for the TTL).
  expect((await harness.postNdjson([tool('oldest')])).status).toBe(202);
  await harness.sidecar.sweep();
  harness.clock.advance(2000);
  expect((await harness.postNdjson([tool('older')])).status).toBe(202);
  await harness.sidecar.sweep();
  harness.clock.advance(MIN_IDLE_SECONDS + 10);
  expect((await harness.postNdjson([tool('recent')])).status).toBe(202);
  await harness.sidecar.sweep();
  return harness;
}

describe('earlyExpiry', () => {
  it('expires the longest-idle series first and stops once about the bytes asked for have left', async () => {
    const harness = await sidecarWithAges('86400');
    const shedder = earlyExpiry({ store: harness.sidecar.registry, clock: harness.clock.read, ttlSeconds: 86_400 });
    // A byte's worth: the idle times halve from 12 h; only "oldest" (2,310 s) goes at 1,350 s, and
    // the series budget has then given back more than was asked.
    const bytesBefore = harness.sidecar.registry.seriesBytes();
    expect(shedder.expireOldest(1)).toBe(1);
    expect(harness.sidecar.registry.seriesBytes()).toBeLessThan(bytesBefore);
    let samples = await harness.samples();
    expect(samples.get(calls('oldest'))).toBeUndefined();
    expect(samples.get(calls('older'))).toBe(1);
    // Far more than all: down to 5 minutes idle, never below; "recent" was written just now.
    expect(shedder.expireOldest(1e12)).toBe(1);
    samples = await harness.samples();
    expect(samples.get(calls('older'))).toBeUndefined();
    expect(samples.get(calls('recent'))).toBe(1);
    expect(samples.get(series('hermes_sidecar_series_expired_total', { metric: 'hermes_tool_calls_total' }))).toBe(2);
  });

  it('expires nothing when --metrics.series-ttl is 0', async () => {
    const harness = await sidecarWithAges('0');
    expect(earlyExpiry({ store: harness.sidecar.registry, clock: harness.clock.read, ttlSeconds: 0 }).expireOldest(1e12)).toBe(0);
    expect((await harness.samples()).get(calls('oldest'))).toBe(1);
  });
});
