/**
 * Golden-file tests of the serializer, in the manner of client_golang's testutil and the
 * OpenTelemetry JS PrometheusSerializer tests: fixed families in, the exact exposition out, in
 * both formats. `UPDATE_GOLDEN=1 npx vitest run test/exposition` rewrites the files; review the
 * diff. The golden files themselves are checked by promtool and by the strict OpenMetrics parser
 * in test/exposition/validators.test.ts, so a wrong golden file cannot pass unnoticed.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Serializer, type Format } from '../../src/exposition/serializer.js';
import { CounterStorage, GaugeStorage, HistogramStorage, type FamilyOptions, type FamilyView } from '../../src/metrics/families.js';
import { OPEN, type MetricSpec } from '../../src/metrics/declare.js';

export const GOLDEN_DIR = new URL('./golden/', import.meta.url);
const UPDATE = process.env.UPDATE_GOLDEN === '1';

interface TestSpec {
  readonly name: string;
  readonly help: string;
  readonly type: MetricSpec['type'];
  readonly labelNames: readonly string[];
  readonly scope: MetricSpec['scope'];
}

/** A spec outside the catalogue, every label open. */
function options(test: TestSpec, refusals: { count: number } = { count: 0 }): FamilyOptions {
  const spec: MetricSpec = { ...test, labels: Object.fromEntries(test.labelNames.map((name) => [name, OPEN])), preinit: false };
  return { spec, enabled: true, budget: undefined, foldLabels: [], foldValue: 'other', onFold: () => undefined, onInvalid: () => void (refusals.count += 1) };
}

/** A fixed set of families covering every rendering rule. */
export function goldenFamilies(): FamilyView[] {
  const requests = new CounterStorage(
    options({ name: 'demo_requests_total', help: 'Requests by outcome.', type: 'counter', labelNames: ['route', 'outcome'], scope: 'agent' }),
  );
  requests.inc({ route: '/v1/events', outcome: 'success' }, 41);
  requests.inc({ route: '/v1/events', outcome: 'success' });
  requests.inc({ route: 'a "quoted" \\ back\nslash', outcome: 'error' }, 0.5);
  requests.inc({ route: 'ünïcödé, comma% and {braces}', outcome: 'error' }, 3);

  const written = new CounterStorage(
    options({ name: 'demo_written_bytes_total', help: 'Bytes written, with a "quote", a \\ backslash\nand a newline in the help.', type: 'counter', labelNames: [], scope: 'self' }),
  );
  written.inc({}, 1e21);

  const lastSeen = new GaugeStorage(
    options({ name: 'demo_last_seen_timestamp_seconds', help: 'Time of the newest event.', type: 'gauge', labelNames: [], scope: 'self' }),
  );
  lastSeen.set({}, 1796133400.125);

  const balance = new GaugeStorage(options({ name: 'demo_balance', help: 'A gauge that goes below zero.', type: 'gauge', labelNames: ['account'], scope: 'self' }));
  balance.set({ account: 'a' }, -2.5);
  balance.set({ account: 'b' }, 1e-7);
  balance.inc({ account: 'c' });
  balance.dec({ account: 'c' }, 3);

  const empty = new CounterStorage(options({ name: 'demo_empty_total', help: 'Declared, never written.', type: 'counter', labelNames: ['reason'], scope: 'self' }));
  void empty;

  const duration = new HistogramStorage(
    options({ name: 'demo_call_duration_seconds', help: 'Call duration.', type: 'histogram', labelNames: ['tool'], scope: 'agent' }),
    [0.1, 1, 10],
  );
  duration.observe({ tool: 'terminal' }, 0.05, { labels: { tool_call_id: 'call_1', turn_id: 'T1' }, value: 0.05, timestamp: 1796133400 });
  duration.observe({ tool: 'terminal' }, 0.1);
  duration.observe({ tool: 'terminal' }, 2.5, { labels: { tool_call_id: 'call_2' }, value: 2.5, timestamp: 1796133401.5 });
  duration.observe({ tool: 'terminal' }, 99, { labels: { tool_call_id: 'call "3"' }, value: 99, timestamp: 1796133402 });
  duration.handle({ tool: 'read_file' }).observe(0.2);

  const batch = new HistogramStorage(
    options({ name: 'demo_batch_events', help: 'Events per batch (unlabelled, no unit).', type: 'histogram', labelNames: [], scope: 'self' }),
    [1, 5],
  );
  batch.observe({}, 3);

  // A runtime-style view (not cached): values storage would refuse can still arrive from elsewhere.
  const runtime: FamilyView = {
    name: 'demo_runtime_ratio',
    help: 'Read from another library.',
    type: 'gauge',
    labelNames: ['kind'],
    bounds: undefined,
    stable: false,
    series: () => [
      { labelValues: ['nan'], version: 0, value: Number.NaN },
      { labelValues: ['inf'], version: 0, value: Number.POSITIVE_INFINITY },
      { labelValues: ['minus_inf'], version: 0, value: Number.NEGATIVE_INFINITY },
    ],
  };
  return [requests, written, lastSeen, balance, empty, duration, batch, runtime];
}

export const GOLDEN_FILES: Readonly<Record<Format, string>> = { text: 'families.prom', openmetrics: 'families.om' };

function golden(format: Format, actual: string): string {
  const file = new URL(GOLDEN_FILES[format], GOLDEN_DIR);
  if (UPDATE || !existsSync(file)) writeFileSync(file, actual);
  return readFileSync(file, 'utf8');
}

describe('serializer golden files', () => {
  it.each(['text', 'openmetrics'] as const)('renders the %s format exactly', (format) => {
    const text = new Serializer().serialize(goldenFamilies(), format).join('');
    expect(text).toBe(golden(format, text));
  });

  it('keeps exemplars out of the text format and ids out of every label set', () => {
    const text = new Serializer().serialize(goldenFamilies(), 'text').join('');
    expect(text).not.toContain('call_1');
    const openmetrics = new Serializer().serialize(goldenFamilies(), 'openmetrics').join('');
    const sampleLabels = openmetrics.split('\n').map((line) => line.split(' # ')[0] ?? '');
    expect(sampleLabels.filter((line) => /call_\d|T1/.test(line))).toEqual([]);
  });
});

describe('serializer cache', () => {
  it('re-renders exactly the series written since the previous scrape', () => {
    const families = goldenFamilies();
    const serializer = new Serializer();
    for (const format of ['text', 'openmetrics'] as const) serializer.serialize(families, format);
    const [requests, , , balance, , duration] = families as [CounterStorage, unknown, unknown, GaugeStorage, unknown, HistogramStorage];
    requests.inc({ route: '/v1/events', outcome: 'success' }, 8);
    balance.set({ account: 'd' }, 4);
    duration.observe({ tool: 'read_file' }, 0.7, { labels: { tool_call_id: 'call_4' }, value: 0.7, timestamp: 1796133403 });
    for (const format of ['text', 'openmetrics'] as const) {
      const cached = serializer.serialize(families, format).join('');
      expect(cached).toBe(new Serializer().serialize(families, format).join(''));
    }
    const text = serializer.serialize(families, 'text').join('');
    expect(text).toContain('demo_requests_total{route="/v1/events",outcome="success"} 50\n');
    expect(text).toContain('demo_balance{account="d"} 4\n');
    expect(serializer.serialize(families, 'openmetrics').join('')).toContain(
      'demo_call_duration_seconds_bucket{le="1",tool="read_file"} 2 # {tool_call_id="call_4"} 0.7 1796133403\n',
    );
  });
});

describe('storage refusals', () => {
  it('refuses non-finite values everywhere and negative ones for counters and histograms, counting each', () => {
    const refusals = { count: 0 };
    const counter = new CounterStorage(options({ name: 'c_total', help: 'c', type: 'counter', labelNames: [], scope: 'self' }, refusals));
    const gauge = new GaugeStorage(options({ name: 'g', help: 'g', type: 'gauge', labelNames: [], scope: 'self' }, refusals));
    const histogram = new HistogramStorage(options({ name: 'h', help: 'h', type: 'histogram', labelNames: [], scope: 'self' }, refusals), [1]);
    counter.inc({}, Number.NaN);
    counter.inc({}, -1);
    counter.handle({}).inc(Number.POSITIVE_INFINITY);
    gauge.set({}, Number.NaN);
    gauge.set({}, -5);
    gauge.inc({}, Number.NEGATIVE_INFINITY);
    histogram.observe({}, -0.5);
    histogram.handle({}).observe(Number.NaN);
    // gauge.set(-5) is a valid gauge value; the other seven writes are refused.
    expect(refusals.count).toBe(7);
    const text = new Serializer().serialize([counter, gauge, histogram], 'text').join('');
    expect(text).toContain('\nc_total 0\n');
    expect(text).toContain('\ng -5\n');
    expect(text).toContain('\nh_count 0\n');
  });
});
