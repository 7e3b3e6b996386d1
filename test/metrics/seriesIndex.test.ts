/** Series by label values, one Map level per label: found by labels or by values, removed with the levels it leaves empty. */
import { describe, expect, it } from 'vitest';
import { SeriesIndex } from '../../src/metrics/seriesIndex.js';

/** How many Map levels hang below the root (the index's own shape, read for the pruning checks). */
function levels(index: SeriesIndex<string>): number {
  const count = (level: Map<string, unknown>): number =>
    [...level.values()].reduce<number>((total, next) => total + (next instanceof Map ? 1 + count(next as Map<string, unknown>) : 0), 0);
  return count((index as unknown as { root: Map<string, unknown> }).root);
}

describe('SeriesIndex', () => {
  it('finds a series by its labels or by its values in label-name order', () => {
    const index = new SeriesIndex<string>(['tool', 'status']);
    index.add(['terminal', 'ok'], 'a');
    index.add(['terminal', 'error'], 'b');
    index.add(['browser', 'ok'], 'c');
    expect(index.find({ tool: 'terminal', status: 'ok' })).toBe('a');
    expect(index.find({ status: 'error', tool: 'terminal' })).toBe('b');
    expect(index.findValues(['browser', 'ok'])).toBe('c');
    expect(index.find({ tool: 'browser', status: 'error' })).toBeUndefined();
    expect(index.findValues(['web', 'ok'])).toBeUndefined();
  });

  it('reads a missing label as the empty value', () => {
    const index = new SeriesIndex<string>(['tool', 'status']);
    index.add(['terminal', ''], 'blank');
    expect(index.find({ tool: 'terminal' })).toBe('blank');
  });

  it('keeps the one series of an unlabelled family under the empty key', () => {
    const index = new SeriesIndex<string>([]);
    expect(index.find({})).toBeUndefined();
    index.add([], 'only');
    expect(index.find({})).toBe('only');
    expect(index.findValues([])).toBe('only');
    index.delete([]);
    expect(index.find({})).toBeUndefined();
  });

  it('removes a series and every level it leaves empty, keeping those others still use', () => {
    const index = new SeriesIndex<string>(['kind', 'provider', 'model']);
    index.add(['main', 'p', 'm1'], 'a');
    index.add(['main', 'p', 'm2'], 'b');
    index.add(['main', 'q', 'm1'], 'c');
    expect(levels(index)).toBe(3);
    index.delete(['main', 'p', 'm1']);
    expect(index.findValues(['main', 'p', 'm1'])).toBeUndefined();
    expect(index.findValues(['main', 'p', 'm2'])).toBe('b');
    expect(levels(index)).toBe(3);
    index.delete(['main', 'p', 'm2']);
    expect(levels(index)).toBe(2);
    index.delete(['main', 'q', 'm1']);
    expect(levels(index)).toBe(0);
    // Deleting what is not there changes nothing.
    index.delete(['aux', 'p', 'm']);
    expect(levels(index)).toBe(0);
  });
});
