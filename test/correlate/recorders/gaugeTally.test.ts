/** The open-entry tally: changes per label set since the last scrape, written as gauge moves. */
import { describe, expect, it } from 'vitest';
import { GaugeTally, type TallyGauge } from '../../../src/correlate/recorders/gaugeTally.js';

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
