/** What a connection has had from its listener (src/net/service.ts): answers faded by a half-life, and its request credit. */
import { describe, expect, it } from 'vitest';
import { ServiceRecord } from '../../src/net/service.js';

describe('ServiceRecord', () => {
  it('counts answers, faded by half every 10 s', () => {
    const record = new ServiceRecord(0);
    expect(record.servedLately(0)).toBe(0);
    record.answered(0);
    record.answered(0);
    expect(record.answers).toBe(2);
    expect(record.servedLately(0)).toBe(2);
    expect(record.servedLately(10_000)).toBe(1);
    record.answered(10_000);
    expect(record.servedLately(20_000)).toBe(1);
    expect(record.answers).toBe(3);
  });

  it('lets one request run at once on a new connection, then one per 1/rate seconds, credit building up to the rate', () => {
    const record = new ServiceRecord(0);
    expect(record.takeRequest(0, 4)).toBe(0);
    // No credit left: the next may run in 250 ms, and the one after it 250 ms later.
    expect(record.takeRequest(0, 4)).toBe(250);
    expect(record.takeRequest(250, 4)).toBe(250);
    // Idle for 10 s: credit for 4 at once, not 40.
    const waits = [0, 0, 0, 0, 0].map(() => record.takeRequest(10_500, 4));
    expect(waits).toEqual([0, 0, 0, 0, 250]);
  });
});
