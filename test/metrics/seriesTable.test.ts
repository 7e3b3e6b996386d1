/**
 * The series table every family kind shares: the global budget and folding past it, undeclared
 * closed values refused, expiry (budget, bytes and label references given back), and handles
 * that follow their series across expiry.
 */
import { describe, expect, it } from 'vitest';
import { CounterStorage, GaugeStorage, SeriesBudget, type LabelAdmission } from '../../src/metrics/families.js';
import { options, scalars } from '../support/storage.js';

/** Runs every step of one expiry sweep at `now`. */
function sweep(table: { expirySteps(now: number, ttl: number): () => boolean }, now: number, ttl: number): void {
  const step = table.expirySteps(now, ttl);
  while (step()) {
    // each step looks at one chunk
  }
}

/** A label admission that records the references it is given and given back. */
function recordingAdmission(): LabelAdmission & { readonly held: Map<string, number> } {
  const held = new Map<string, number>();
  return {
    held,
    retain: (label, value) => void held.set(`${label}=${value}`, (held.get(`${label}=${value}`) ?? 0) + 1),
    release: (label, value) => void held.set(`${label}=${value}`, (held.get(`${label}=${value}`) ?? 0) - 1),
  };
}

describe('the series budget and folding', () => {
  it('folds new label sets into the overflow series once the budget is spent, counting each fold', () => {
    const [opts, counts] = options('counter', ['tool'], { budget: new SeriesBudget(2) });
    const counter = new CounterStorage(opts);
    counter.inc({ tool: 'a' });
    counter.inc({ tool: 'b' });
    counter.inc({ tool: 'c' });
    counter.inc({ tool: 'd' }, 4);
    counter.inc({ tool: 'a' });
    expect(scalars(counter)).toEqual([['a', 2], ['b', 1], ['other', 5]]);
    expect(counts.folds).toBe(2);
  });
});

describe('closed label values', () => {
  it('refuses a closed label value its declaration does not list, counted, and writes it as other', () => {
    const [opts, counts] = options('counter', ['tool', 'status'], { foldLabels: ['tool'], closedValues: [undefined, ['ok', 'error']] });
    const counter = new CounterStorage(opts);
    counter.inc({ tool: 'a', status: 'ok' });
    counter.inc({ tool: 'a', status: 'unknown' });
    counter.inc({ tool: 'a', status: 'other' });
    expect(counts.invalid).toBe(0);
    counter.inc({ tool: 'a', status: 'lost' }, 2);
    counter.inc({ tool: 'a', status: 'timeout' });
    // Open labels take any value; only the closed one is checked.
    counter.inc({ tool: 'anything', status: 'error' });
    expect(counts.invalid).toBe(2);
    expect(scalars(counter)).toEqual([['a/ok', 1], ['a/unknown', 1], ['a/other', 4], ['anything/error', 1]]);
    // Through a handle, each write counts, as each write of the label-object path does.
    const handle = counter.handle({ tool: 'b', status: 'lost' });
    handle.inc();
    handle.inc();
    expect(counts.invalid).toBe(4);
    expect(scalars(counter)).toContainEqual(['b/other', 2]);
    expect(counts.folds).toBe(0);
  });
});

describe('expiry', () => {
  it('removes the series idle for the TTL, giving back their budget slots, bytes and label references', () => {
    const budget = new SeriesBudget(10);
    const admission = recordingAdmission();
    const [opts, counts] = options('counter', ['tool'], { budget, admission, expiry: 'idle', onExpire: () => void (expired += 1) });
    let expired = 0;
    const counter = new CounterStorage(opts);
    counter.inc({ tool: 'a' });
    counter.inc({ tool: 'b' });
    expect([budget.spent, admission.held.get('tool=a'), admission.held.get('tool=b')]).toEqual([2, 1, 1]);
    const bytes = budget.bytes;
    sweep(counter, 1000, 60); // first sight starts each series' idle time
    counter.inc({ tool: 'b' });
    sweep(counter, 1030, 60);
    sweep(counter, 1060, 60); // a: idle for 60 s; b: written since the last look
    expect(scalars(counter)).toEqual([['b', 2]]);
    expect([expired, budget.spent, admission.held.get('tool=a'), admission.held.get('tool=b')]).toEqual([1, 1, 0, 1]);
    expect(budget.bytes).toBeLessThan(bytes);
    expect(counts.folds).toBe(0);
  });

  it('removes a gauge of what is open only once it is at 0', () => {
    const [opts] = options('gauge', ['tool'], { expiry: 'idle at zero' });
    const gauge = new GaugeStorage(opts);
    gauge.inc({ tool: 'open' });
    gauge.inc({ tool: 'closed' });
    gauge.dec({ tool: 'closed' });
    sweep(gauge, 1000, 60);
    sweep(gauge, 1100, 60);
    expect(scalars(gauge)).toEqual([['open', 1]]);
  });

  it('keeps every series of a family that never expires, and does nothing at a TTL of 0', () => {
    const [never] = options('counter', ['tool']);
    const kept = new CounterStorage(never);
    kept.inc({ tool: 'a' });
    sweep(kept, 1000, 60);
    sweep(kept, 9999, 60);
    const [idle] = options('counter', ['tool'], { expiry: 'idle' });
    const untimed = new CounterStorage(idle);
    untimed.inc({ tool: 'a' });
    sweep(untimed, 1000, 0);
    sweep(untimed, 9999, 0);
    expect([kept.size, untimed.size]).toEqual([1, 1]);
  });

  it('lets a handle follow its series across expiry: it writes a new series, never the removed one', () => {
    const [opts] = options('counter', ['tool'], { expiry: 'idle' });
    const counter = new CounterStorage(opts);
    const handle = counter.handle({ tool: 'a' });
    handle.inc(3);
    const [before] = [...counter.series()];
    sweep(counter, 1000, 60);
    sweep(counter, 1060, 60);
    expect(counter.size).toBe(0);
    expect(counter.generation).toBe(1);
    handle.inc();
    const [after] = [...counter.series()];
    expect(after).not.toBe(before);
    expect(scalars(counter)).toEqual([['a', 1]]);
    expect(before?.value).toBe(3);
  });
});
