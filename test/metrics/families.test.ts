/** The storage of families: one series per label set, refusals counted, the budget and its folds. */
import { describe, expect, it } from 'vitest';
import { OPEN, type MetricSpec } from '../../src/metrics/declare.js';
import {
  CounterStorage,
  GaugeStorage,
  HistogramStorage,
  SeriesBudget,
  type FamilyOptions,
  type HistogramSeries,
  type ScalarSeries,
} from '../../src/metrics/families.js';

function spec(type: MetricSpec['type'], labelNames: readonly string[]): MetricSpec {
  return { name: `test_${type}`, help: 'test', type, labels: Object.fromEntries(labelNames.map((name) => [name, OPEN])), labelNames, scope: 'agent', preinit: false };
}

interface Counts {
  folds: number;
  invalid: number;
}

function options(type: MetricSpec['type'], labelNames: readonly string[], extra: Partial<FamilyOptions> = {}): [FamilyOptions, Counts] {
  const counts: Counts = { folds: 0, invalid: 0 };
  return [
    {
      spec: spec(type, labelNames),
      enabled: true,
      budget: undefined,
      foldLabels: labelNames,
      foldValue: 'other',
      onFold: () => void (counts.folds += 1),
      onInvalid: () => void (counts.invalid += 1),
      ...extra,
    },
    counts,
  ];
}

const scalars = (family: { series(): Iterable<ScalarSeries> }) => [...family.series()].map((series) => [series.labelValues.join('/'), series.value]);

describe('CounterStorage', () => {
  it('keeps one series per label set, in creation order, and adds to it', () => {
    const [opts] = options('counter', ['tool', 'status']);
    const counter = new CounterStorage(opts);
    counter.inc({ tool: 'a', status: 'ok' });
    counter.inc({ tool: 'b', status: 'ok' }, 2.5);
    counter.inc({ tool: 'a', status: 'ok' }, 3);
    expect(scalars(counter)).toEqual([['a/ok', 4], ['b/ok', 2.5]]);
    expect(counter.size).toBe(2);
  });

  it('refuses negative and non-finite amounts, counted, and stores nothing for them', () => {
    const [opts, counts] = options('counter', ['tool']);
    const counter = new CounterStorage(opts);
    counter.inc({ tool: 'a' }, -1);
    counter.inc({ tool: 'a' }, Number.NaN);
    counter.inc({ tool: 'a' }, Number.POSITIVE_INFINITY);
    expect(counts.invalid).toBe(3);
    expect(counter.size).toBe(0);
  });

  it('has the one series of an unlabelled family from the start, at 0', () => {
    const [opts] = options('counter', []);
    expect(scalars(new CounterStorage(opts))).toEqual([['', 0]]);
  });

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

  it('writes through a handle to the series resolved once, bumping its version', () => {
    const [opts, counts] = options('counter', ['tool']);
    const counter = new CounterStorage(opts);
    const handle = counter.handle({ tool: 'a' });
    handle.inc();
    handle.inc(2);
    handle.inc(-5);
    const [series] = [...counter.series()];
    expect(series?.value).toBe(3);
    expect(series?.version).toBe(2);
    expect(counts.invalid).toBe(1);
  });

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

  it('writes nothing when the family is not exported, and still refuses invalid amounts', () => {
    const [opts, counts] = options('counter', ['tool'], { enabled: false });
    const counter = new CounterStorage(opts);
    counter.inc({ tool: 'a' });
    counter.handle({ tool: 'a' }).inc(-1);
    expect(counter.size).toBe(0);
    expect(counts.invalid).toBe(1);
  });
});

describe('GaugeStorage', () => {
  it('sets, raises and lowers a series; a set to the same value leaves its version', () => {
    const [opts, counts] = options('gauge', ['tool']);
    const gauge = new GaugeStorage(opts);
    gauge.set({ tool: 'a' }, 5);
    gauge.inc({ tool: 'a' }, 2);
    gauge.dec({ tool: 'a' }, 4);
    gauge.inc({ tool: 'a' }, -1);
    expect(scalars(gauge)).toEqual([['a', 2]]);
    const version = [...gauge.series()][0]?.version;
    gauge.set({ tool: 'a' }, 2);
    expect([...gauge.series()][0]?.version).toBe(version);
    gauge.set({ tool: 'a' }, Number.NaN);
    gauge.dec({ tool: 'a' }, -1);
    expect(counts.invalid).toBe(2);
    expect(scalars(gauge)).toEqual([['a', 2]]);
  });
});

describe('HistogramStorage', () => {
  it('counts each value in the first bucket whose bound it does not exceed, with sum and count', () => {
    const [opts, counts] = options('histogram', ['tool']);
    const histogram = new HistogramStorage(opts, [1, 5]);
    for (const value of [0.5, 1, 3, 5, 9]) histogram.observe({ tool: 'a' }, value);
    histogram.observe({ tool: 'a' }, -1);
    const [series] = [...histogram.series()] as HistogramSeries[];
    expect(series?.buckets).toEqual([2, 2, 1]);
    expect(series?.sum).toBe(18.5);
    expect(series?.count).toBe(5);
    expect(counts.invalid).toBe(1);
  });

  it('keeps the latest exemplar of each bucket', () => {
    const [opts] = options('histogram', []);
    const histogram = new HistogramStorage(opts, [1]);
    histogram.observe({}, 0.5, { labels: { trace_id: 'x' }, value: 0.5, timestamp: 1 });
    histogram.observe({}, 0.7, { labels: { trace_id: 'y' }, value: 0.7, timestamp: 2 });
    histogram.handle({}).observe(3, { labels: { trace_id: 'z' }, value: 3, timestamp: 3 });
    const [series] = [...histogram.series()] as HistogramSeries[];
    expect(series?.exemplars?.map((exemplar) => exemplar?.labels.trace_id)).toEqual(['y', 'z']);
    expect(series?.count).toBe(3);
  });
});

describe('SeriesBudget', () => {
  it('grants exactly its limit', () => {
    const budget = new SeriesBudget(2);
    expect([budget.take(10), budget.take(10), budget.take(10)]).toEqual(['taken', 'taken', 'series']);
  });

  it('refuses a slot that would pass its byte budget, and takes bytes back with a slot', () => {
    const budget = new SeriesBudget(10, 100);
    expect([budget.take(60), budget.take(50), budget.take(40)]).toEqual(['taken', 'bytes', 'taken']);
    expect([budget.spent, budget.bytes]).toEqual([2, 100]);
    budget.give(60, true);
    budget.charge(5);
    expect([budget.spent, budget.bytes]).toEqual([1, 45]);
  });
});
