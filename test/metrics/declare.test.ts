/** How a family is declared: the spec builders, label kinds, HELP placeholders and merging declarations. */
import { describe, expect, it } from 'vitest';
import { closedValues, counter, DEFAULT_BUCKETS, gauge, guardedLabel, histogram, INFO, mergeDeclarations, OPEN } from '../../src/metrics/declare.js';

describe('spec builders', () => {
  it('build a counter with its labels in exposition order', () => {
    const spec = counter('test_total', { tool: OPEN, status: ['ok', 'error'] }, 'agent', 'Calls by {status}.');
    expect(spec).toEqual({
      name: 'test_total',
      help: 'Calls by ok, error.',
      type: 'counter',
      labels: { tool: OPEN, status: ['ok', 'error'] },
      labelNames: ['tool', 'status'],
      scope: 'agent',
      preinit: false,
      computed: false,
    });
  });

  it('pre-initialise only pipeline families whose labels are all closed, unless told not to', () => {
    expect(counter('a_total', { reason: ['x', 'y'] }, 'self', 'A.').preinit).toBe(true);
    expect(counter('b_total', {}, 'delivery', 'B.').preinit).toBe(true);
    expect(counter('c_total', { reason: ['x'] }, 'self', 'C.', { preinit: false }).preinit).toBe(false);
    expect(counter('d_total', { reason: ['x'], tool: OPEN }, 'self', 'D.').preinit).toBe(false);
    expect(counter('e_total', { reason: ['x'] }, 'agent', 'E.').preinit).toBe(false);
    expect(gauge('f', { version: INFO }, 'self', 'F.').preinit).toBe(false);
  });

  it('mark a gauge of what is open as computed, and give a histogram its bucket set', () => {
    expect(gauge('open', { tool: OPEN }, 'agent', 'Open.', { computed: true }).computed).toBe(true);
    const spec = histogram('test_seconds', {}, 'tool_seconds', 'agent', 'Time.');
    expect([spec.type, spec.buckets, spec.computed]).toEqual(['histogram', 'tool_seconds', false]);
    expect(DEFAULT_BUCKETS[spec.buckets]).toHaveLength(16);
  });

  it('refuse a HELP placeholder that names no closed label (an open one, or none)', () => {
    expect(() => counter('x_total', { tool: OPEN }, 'agent', 'By {tool}.')).toThrow('HELP placeholder {tool} names no closed label');
    expect(() => counter('y_total', {}, 'agent', 'By {missing}.')).toThrow('HELP placeholder {missing} names no closed label');
  });
});

describe('label kinds', () => {
  const derived = { description: 'the names', derived: (catalogue: readonly { name: string }[]) => catalogue.map((spec) => spec.name) };
  const spec = counter('t_total', { metric: derived, outcome: ['a', 'b'], tool: OPEN, gen_ai_provider_name: { sameAs: 'provider' }, version: INFO }, 'self', 'T.');

  it('give the values of a closed label, resolving a derived set against the catalogue', () => {
    expect(closedValues(['a', 'b'])).toEqual(['a', 'b']);
    expect(closedValues(derived, [spec])).toEqual(['t_total']);
    expect(() => closedValues(derived)).toThrow('the values of a derived label (the names) need the catalogue');
    expect([closedValues(OPEN), closedValues(INFO), closedValues({ sameAs: 'provider' })]).toEqual([undefined, undefined, undefined]);
  });

  it('name the guard label an open label carries: its own name, or the one it is the same as', () => {
    expect(spec.labelNames.map((name) => guardedLabel(spec, name))).toEqual([undefined, undefined, 'tool', 'provider', undefined]);
    expect(guardedLabel(spec, 'absent')).toBeUndefined();
  });
});

describe('mergeDeclarations', () => {
  it('gathers declarations in order and refuses a family declared twice', () => {
    const first = { a: counter('a_total', {}, 'self', 'A.') };
    const second = { b: gauge('b', {}, 'self', 'B.') };
    const merged = mergeDeclarations(first, second);
    expect(Object.keys(merged)).toEqual(['a', 'b']);
    expect(merged.a).toBe(first.a);
    expect(() => mergeDeclarations(first, { a: gauge('other', {}, 'self', 'O.') })).toThrow('the family a is declared twice');
  });
});
