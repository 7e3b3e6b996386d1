/** Span tables as recorders open them: lost entries counted as orphaned spans of their kind, tables registered for sweeping. */
import { describe, expect, it } from 'vitest';
import { spanTable } from '../../../src/correlate/recorders/spanTables.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

describe('spanTable', () => {
  it('counts an expired span as orphaned of its kind, and registers the table for sweeping', async () => {
    const harness = recorderHarness({ spanTtlSeconds: 5 });
    const orphans: string[] = [];
    const table = spanTable<string>(harness.context, 'tool', (value, cause) => orphans.push(`${value}:${cause}`));
    table.open('a', 'first');
    harness.advance(6);
    harness.sweep();
    expect(orphans).toEqual(['first:expired']);
    expect((await harness.samples()).get(series('hermes_sidecar_orphaned_spans_total', { kind: 'tool' }))).toBe(1);
    expect(harness.evictions).toEqual([]);
  });

  it("counts a span pushed out of a full table as orphaned and as an eviction of its kind's table", async () => {
    const harness = recorderHarness({ maxSpans: 1 });
    const table = spanTable<string>(harness.context, 'approval');
    table.open('a', 'first');
    table.open('b', 'second');
    expect(harness.evictions).toEqual(['approvals']);
    expect((await harness.samples()).get(series('hermes_sidecar_orphaned_spans_total', { kind: 'approval' }))).toBe(1);
  });
});
