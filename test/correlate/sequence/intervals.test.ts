import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IntervalSet } from '../../../src/correlate/sequence/intervals.js';

const members = (set: IntervalSet): number[] => set.toArray().flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, index) => from + index));

describe('IntervalSet', () => {
  it('merges overlapping and touching ranges into one interval', () => {
    const set = new IntervalSet();
    set.addRange(5, 7);
    set.add(9);
    expect(set.toArray()).toEqual([[5, 7], [9, 9]]);
    set.add(8);
    expect(set.toArray()).toEqual([[5, 9]]);
    set.addRange(1, 3);
    set.addRange(2, 12);
    expect(set.toArray()).toEqual([[1, 12]]);
  });

  it('lists the missing runs of a range and drops members below a limit', () => {
    const set = new IntervalSet();
    set.addRange(3, 4);
    set.addRange(8, 9);
    const missing: [number, number][] = [];
    set.eachMissing(1, 10, (from, to) => missing.push([from, to]));
    expect(missing).toEqual([[1, 2], [5, 7], [10, 10]]);
    set.dropBelow(4);
    expect(set.toArray()).toEqual([[4, 4], [8, 9]]);
    expect(set.lowestTo).toBe(4);
  });

  it('property: behaves as a plain Set of the numbers added, with disjoint, non-touching, ascending intervals', () => {
    const operation = fc.oneof(
      fc.tuple(fc.constant('add' as const), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 5 })),
      fc.tuple(fc.constant('drop' as const), fc.integer({ min: 0, max: 60 }), fc.constant(0)),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 20 }), (operations, probeFrom, probeLength) => {
        const set = new IntervalSet();
        const plain = new Set<number>();
        for (const [kind, at, length] of operations) {
          if (kind === 'add') {
            set.addRange(at, at + length);
            for (let value = at; value <= at + length; value += 1) plain.add(value);
          } else {
            set.dropBelow(at);
            for (const value of plain) if (value < at) plain.delete(value);
          }
        }
        expect(members(set)).toEqual([...plain].sort((a, b) => a - b));
        const pairs = set.toArray();
        pairs.forEach(([from, to], index) => {
          expect(from).toBeLessThanOrEqual(to);
          if (index > 0) expect(from).toBeGreaterThan((pairs[index - 1]?.[1] ?? -Infinity) + 1);
        });
        for (let value = 0; value <= 70; value += 1) expect(set.has(value)).toBe(plain.has(value));
        const missing: number[] = [];
        set.eachMissing(probeFrom, probeFrom + probeLength, (from, to) => {
          for (let value = from; value <= to; value += 1) missing.push(value);
        });
        expect(missing).toEqual(Array.from({ length: probeLength + 1 }, (_, index) => probeFrom + index).filter((value) => !plain.has(value)));
      }),
    );
  });
});
