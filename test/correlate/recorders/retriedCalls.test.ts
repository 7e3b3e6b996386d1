/** The calls that had a failed attempt: bounded like the span tables, evictions counted, marks age out silently. */
import { describe, expect, it } from 'vitest';
import { RetriedCalls } from '../../../src/correlate/recorders/retriedCalls.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

describe('RetriedCalls', () => {
  it('says whether an earlier attempt failed, and forgets the call once it succeeds', () => {
    const retried = new RetriedCalls(recorderHarness().context);
    expect(retried.failed('main\u0000t1:api:1')).toBe(false);
    expect(retried.failed('main\u0000t1:api:1')).toBe(true);
    expect(retried.succeeded('main\u0000t1:api:1')).toBe(true);
    expect(retried.succeeded('main\u0000t1:api:1')).toBe(false);
    expect(retried.succeeded('main\u0000t1:api:2')).toBe(false);
  });

  it('holds at most the span limit, counting each eviction under api_attempts and no orphaned span', async () => {
    const harness = recorderHarness({ maxSpans: 2 });
    const retried = new RetriedCalls(harness.context);
    for (const id of ['a', 'b', 'c']) retried.failed(id);
    expect(harness.evictions).toEqual(['api_attempts']);
    // the oldest mark went: its call looks new again
    expect(retried.succeeded('a')).toBe(false);
    expect(retried.succeeded('c')).toBe(true);
    expect((await harness.samples()).get(series('hermes_sidecar_orphaned_spans_total', { kind: 'api' }))).toBe(0);
  });

  it('lets a mark age out with the span TTL, counting nothing', () => {
    const harness = recorderHarness({ spanTtlSeconds: 60 });
    const retried = new RetriedCalls(harness.context);
    retried.failed('a');
    harness.advance(61);
    harness.sweep();
    expect(retried.succeeded('a')).toBe(false);
    expect(harness.evictions).toEqual([]);
  });
});
