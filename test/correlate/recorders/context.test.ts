/** What the recorders share: span tables that count their lost entries, and the open-span tally. */
import { describe, expect, it } from 'vitest';
import { compositeKey, GaugeTally, spanTable, type TallyGauge } from '../../../src/correlate/recorders/context.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

/** A gauge that keeps each label set's value. */
function recordingGauge(): TallyGauge<{ tool: string }> & { readonly values: Map<string, number>; readonly writes: number } {
  const values = new Map<string, number>();
  let writes = 0;
  const move = (labels: { tool: string }, amount: number) => {
    writes += 1;
    values.set(labels.tool, (values.get(labels.tool) ?? 0) + amount);
  };
  return {
    values,
    get writes() {
      return writes;
    },
    inc: (labels, amount = 1) => move(labels, amount),
    dec: (labels, amount = 1) => move(labels, -amount),
  };
}

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

describe('GaugeTally', () => {
  it('reports each label set once with its change since the last report, a new one even at 0', () => {
    const tally = new GaugeTally<{ tool: string }>((labels) => labels.tool);
    const gauge = recordingGauge();
    tally.opened({ tool: 'a' });
    tally.opened({ tool: 'a' });
    tally.opened({ tool: 'b' });
    tally.closed({ tool: 'b' });
    tally.report(gauge);
    expect(Object.fromEntries(gauge.values)).toEqual({ a: 2, b: 0 });
    expect(gauge.writes).toBe(2);
    tally.closed({ tool: 'a' });
    tally.report(gauge);
    expect(Object.fromEntries(gauge.values)).toEqual({ a: 1, b: 0 });
    // Nothing changed: nothing written.
    tally.report(gauge);
    expect(gauge.writes).toBe(3);
  });

  it('ignores a close of a label set it never saw open', () => {
    const tally = new GaugeTally<{ tool: string }>();
    const gauge = recordingGauge();
    tally.closed({ tool: 'ghost' });
    tally.report(gauge);
    expect(gauge.writes).toBe(0);
  });
});

describe('compositeKey', () => {
  it('keeps keys apart whose parts join to the same text', () => {
    expect(compositeKey('ab', 'c')).not.toBe(compositeKey('a', 'bc'));
    expect(compositeKey('main', 'r1')).toBe(compositeKey('main', 'r1'));
  });
});
