/**
 * SpanTable against a plain model of it: the same open spans in the same order, the bytes charged
 * equal to the sum of its entries', each span removed once (onRemove), orphaned with the right cause.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringBytes } from '../../src/correlate/idMap.js';
import { ENTRY_OVERHEAD_BYTES, SpanTable, type OrphanCause } from '../../src/correlate/spans.js';
import { FakeClock } from '../support/sidecar.js';

type Operation =
  | { readonly op: 'open'; readonly key: string; readonly extra: number }
  | { readonly op: 'close' | 'touch'; readonly key: string }
  | { readonly op: 'charge'; readonly key: string; readonly bytes: number }
  | { readonly op: 'advance'; readonly seconds: number }
  | { readonly op: 'sweep' };

interface ModelEntry {
  readonly key: string;
  readonly value: number;
  openedAt: number;
  bytes: number;
}

// Short keys, and keys past the digest limit that differ only in their last code unit.
const key = fc.oneof(fc.constantFrom('a', 'b', 'c', 'd', 'e'), fc.constantFrom('x', 'y').map((last) => `${'k'.repeat(1100)}${last}`));
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constant('open' as const), key, extra: fc.integer({ min: 0, max: 3000 }) }),
  fc.record({ op: fc.constantFrom('close' as const, 'touch' as const), key }),
  fc.record({ op: fc.constant('charge' as const), key, bytes: fc.integer({ min: 0, max: 3000 }) }),
  fc.record({ op: fc.constant('advance' as const), seconds: fc.integer({ min: 0, max: 40 }) }),
  fc.record({ op: fc.constant('sweep' as const) }),
);

describe('SpanTable', () => {
  it('property: behaves like a list of entries ordered by last open or touch, bounded in entries and bytes', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 80 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 2_000, max: 12_000 }), (operations, maxEntries, maxBytes) => {
        const clock = new FakeClock(0);
        const orphans: [number, OrphanCause][] = [];
        const removed: number[] = [];
        const table = new SpanTable<number>({
          clock: clock.read,
          ttlSeconds: 60,
          maxEntries,
          maxBytes,
          onOrphan: (value, cause) => orphans.push([value, cause]),
          onRemove: (value) => removed.push(value),
        });
        let model: ModelEntry[] = [];
        const expectedOrphans: [number, OrphanCause][] = [];
        const expectedRemoved: number[] = [];
        const drop = (entry: ModelEntry, cause: OrphanCause | undefined) => {
          model = model.filter((candidate) => candidate !== entry);
          expectedRemoved.push(entry.value);
          if (cause !== undefined) expectedOrphans.push([entry.value, cause]);
        };
        const total = () => model.reduce((sum, entry) => sum + entry.bytes, 0);
        let nextValue = 0;
        for (const step of operations) {
          switch (step.op) {
            case 'open': {
              const previous = model.find((entry) => entry.key === step.key);
              if (previous !== undefined) drop(previous, 'replaced');
              const stored = step.key.length > 1024 ? 44 : step.key.length;
              const bytes = ENTRY_OVERHEAD_BYTES + stringBytes('x'.repeat(stored)) + step.extra;
              while (model.length > 0 && (model.length >= maxEntries || total() + bytes > maxBytes)) drop(model[0] as ModelEntry, 'evicted');
              const value = nextValue++;
              model.push({ key: step.key, value, openedAt: clock.now, bytes });
              table.open(step.key, value, step.extra);
              break;
            }
            case 'close': {
              const entry = model.find((candidate) => candidate.key === step.key);
              if (entry !== undefined) drop(entry, undefined);
              expect(table.close(step.key)).toBe(entry?.value);
              break;
            }
            case 'touch': {
              const entry = model.find((candidate) => candidate.key === step.key);
              if (entry !== undefined) {
                entry.openedAt = clock.now;
                model = [...model.filter((candidate) => candidate !== entry), entry];
              }
              table.touch(step.key);
              break;
            }
            case 'charge': {
              const entry = model.find((candidate) => candidate.key === step.key);
              if (entry !== undefined) {
                entry.bytes += step.bytes;
                for (;;) {
                  const victim = model.find((candidate) => candidate !== entry);
                  if (total() <= maxBytes || victim === undefined) break;
                  drop(victim, 'evicted');
                }
              }
              table.charge(step.key, step.bytes);
              break;
            }
            case 'advance':
              clock.advance(step.seconds);
              break;
            case 'sweep':
              while (model.length > 0 && (model[0] as ModelEntry).openedAt <= clock.now - 60) drop(model[0] as ModelEntry, 'expired');
              table.sweep();
              break;
          }
          expect(table.size).toBe(model.length);
          expect(table.bytes).toBe(total());
        }
        for (const entry of model) expect(table.get(entry.key)).toBe(entry.value);
        expect(orphans).toEqual(expectedOrphans);
        expect(removed).toEqual(expectedRemoved);
      }),
      { numRuns: 400 },
    );
  });
});

describe('SpanTable byte budget', () => {
  it('a span opened past the byte budget evicts the oldest until it fits; charge() evicts others, never the span charged', () => {
    const clock = new FakeClock(0);
    const orphans: [string, string][] = [];
    const entry = (key: string) => ENTRY_OVERHEAD_BYTES + stringBytes(key);
    const table = new SpanTable<string>({
      clock: clock.read,
      ttlSeconds: 60,
      maxEntries: 100,
      maxBytes: 3 * entry('a'),
      onOrphan: (value, cause) => orphans.push([value, cause]),
    });
    table.open('a', 'A');
    table.open('b', 'B');
    table.open('c', 'C');
    expect(table.bytes).toBe(3 * entry('a'));
    table.open('d', 'D', entry('a'));
    expect(orphans).toEqual([
      ['A', 'evicted'],
      ['B', 'evicted'],
    ]);
    table.charge('c', entry('a'));
    expect(orphans.at(-1)).toEqual(['D', 'evicted']);
    expect(table.get('c')).toBe('C');
    expect(table.size).toBe(1);
    expect(table.bytes).toBe(2 * entry('a'));
    expect(table.close('c')).toBe('C');
    expect(table.bytes).toBe(0);
  });
});
