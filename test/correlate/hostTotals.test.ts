/** A heartbeat's host totals as tracker keys (folded into closed sets) and the tracker's rises back as labelled deltas. */
import { describe, expect, it } from 'vitest';
import { foldedDropParts, foldTotals, hostDelta } from '../../src/correlate/hostTotals.js';

describe('foldTotals', () => {
  it('keys drop totals by hook and reason and refused totals by field, so the two never share a key', () => {
    const totals = foldTotals([{ hook: 'post_tool_call', reason: 'queue_full', total: 3 }], [{ field: 'model', total: 3 }]);
    expect(totals.size).toBe(2);
    expect([...totals.values()]).toEqual([3, 3]);
  });

  it('folds unknown hooks, reasons and fields into other and sums what folds together', () => {
    const dropped = [
      { hook: 'made_up', reason: 'queue_full', total: 1 },
      { hook: 'constructor', reason: '__proto__', total: 2 },
      { hook: 'post_tool_call', reason: 'eaten', total: 4 },
    ];
    const totals = foldTotals(
      dropped,
      [
        { field: 'no_such_field', total: 5 },
        { field: 'toString', total: 6 },
      ],
    );
    expect([...totals].map(([key, total]) => [hostDelta(key, total)])).toEqual([
      [{ total: 'dropped', hook: 'other', reason: 'queue_full', delta: 1 }],
      [{ total: 'dropped', hook: 'other', reason: 'other', delta: 2 }],
      [{ total: 'dropped', hook: 'post_tool_call', reason: 'other', delta: 4 }],
      [{ total: 'refused', field: 'other', delta: 11 }],
    ]);
    expect(foldedDropParts(dropped)).toEqual({ hook: 2, reason: 2 });
    expect(foldedDropParts([{ hook: 'post_tool_call', reason: 'shutdown', total: 1 }])).toEqual({ hook: 0, reason: 0 });
  });
});

describe('hostDelta', () => {
  it('turns a key back into the labels it was made of', () => {
    const keyOf = (dropped: Parameters<typeof foldTotals>[0], refused: Parameters<typeof foldTotals>[1]) => [...foldTotals(dropped, refused).keys()][0] ?? '';
    expect(hostDelta(keyOf([{ hook: 'pre_llm_call', reason: 'shutdown', total: 1 }], []), 7)).toEqual({ total: 'dropped', hook: 'pre_llm_call', reason: 'shutdown', delta: 7 });
    expect(hostDelta(keyOf([], [{ field: 'profile', total: 1 }]), 2)).toEqual({ total: 'refused', field: 'profile', delta: 2 });
  });
});
