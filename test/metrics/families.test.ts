/** The storage of each kind of family: counters, gauges and histograms on their series table, refused values counted. */
import { describe, expect, it } from 'vitest';
import { CounterStorage, GaugeStorage, HistogramStorage, type HistogramSeries } from '../../src/metrics/families.js';
import { options, scalars } from '../support/storage.js';

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
