/**
 * The equivalence check behind every side-by-side figure: the pipelines compared must have done
 * the same work, so after being fed the same events their samples must be equal, sample by
 * sample (every series of every catalogue family the event path writes, histogram buckets, sums
 * and counts included). A benchmark whose baselines disagree fails instead of printing a ratio.
 */
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { PIPELINE_FAMILIES } from '../src/correlate/assemble.js';

/** `name{a="x",b="y"}` with labels sorted by name → value. */
export type Samples = Map<string, number>;

/**
 * The families the event path writes: those the correlation stage and the label guard declare.
 * The rest are set by the composition root, the ingest stage or the registry (build info, limits,
 * queue depth, series count), which the baselines do not have.
 */
const EVENT_PATH: ReadonlySet<string> = new Set(
  Object.values(PIPELINE_FAMILIES).map((spec) => spec.name),
);

/** The event-path family a sample name belongs to (histogram suffixes stripped), if any. */
function familyOf(sample: string): string | undefined {
  if (EVENT_PATH.has(sample)) return sample;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (sample.endsWith(suffix) && EVENT_PATH.has(sample.slice(0, -suffix.length))) return sample.slice(0, -suffix.length);
  }
  return undefined;
}

const compared = (sample: string): boolean => familyOf(sample) !== undefined;

const escapeValue = (value: string): string => value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

export function sampleKey(name: string, labels: readonly (readonly [string, string])[]): string {
  if (labels.length === 0) return name;
  const sorted = [...labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${name}{${sorted.map(([label, value]) => `${label}="${escapeValue(value)}"`).join(',')}}`;
}

/** The label pairs of `a="x",b="y"` (values unescaped). */
function parseLabels(text: string): [string, string][] {
  const labels: [string, string][] = [];
  let index = 0;
  while (index < text.length) {
    const equals = text.indexOf('="', index);
    if (equals === -1) throw new Error(`unparsable labels: ${text}`);
    const label = text.slice(index, equals).replace(/^,/, '');
    let value = '';
    let cursor = equals + 2;
    for (; cursor < text.length && text[cursor] !== '"'; cursor += 1) {
      const char = text[cursor] ?? '';
      if (char !== '\\') {
        value += char;
        continue;
      }
      cursor += 1;
      const escaped = text[cursor];
      value += escaped === 'n' ? '\n' : (escaped ?? '');
    }
    labels.push([label, value]);
    index = cursor + 1;
  }
  return labels;
}

/** The samples of the catalogue's event-path families in a text exposition. */
export function expositionSamples(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    const series = line.slice(0, space);
    const brace = series.indexOf('{');
    const name = brace === -1 ? series : series.slice(0, brace);
    if (!compared(name)) continue;
    const labels = brace === -1 ? [] : parseLabels(series.slice(brace + 1, -1));
    samples.set(sampleKey(name, labels), Number(line.slice(space + 1)));
  }
  return samples;
}

interface OtelHistogramValue {
  readonly buckets: { readonly boundaries: readonly number[]; readonly counts: readonly number[] };
  readonly sum?: number;
  readonly count: number;
}

const isHistogramValue = (value: unknown): value is OtelHistogramValue =>
  typeof value === 'object' && value !== null && 'buckets' in value && 'count' in value;

/** The same samples from the OpenTelemetry SDK's collected data points (bucket counts made cumulative). */
export async function otelSamples(exporter: PrometheusExporter): Promise<Samples> {
  const samples: Samples = new Map();
  const { resourceMetrics } = await exporter.collect();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      const name = metric.descriptor.name;
      for (const point of metric.dataPoints) {
        const labels = Object.entries(point.attributes).map(([label, value]): [string, string] => [label, String(value)]);
        const value: unknown = point.value;
        if (typeof value === 'number') {
          if (compared(name)) samples.set(sampleKey(name, labels), value);
          continue;
        }
        if (!isHistogramValue(value) || !compared(`${name}_count`)) continue;
        let cumulative = 0;
        value.buckets.counts.forEach((count, index) => {
          cumulative += count;
          const bound = value.buckets.boundaries[index];
          samples.set(sampleKey(`${name}_bucket`, [...labels, ['le', bound === undefined ? '+Inf' : String(bound)]]), cumulative);
        });
        samples.set(sampleKey(`${name}_sum`, labels), value.sum ?? Number.NaN);
        samples.set(sampleKey(`${name}_count`, labels), value.count);
      }
    }
  }
  return samples;
}

export interface Mismatch {
  readonly sample: string;
  /** One value per pipeline, in the order given; null where the pipeline has no such sample. */
  readonly values: (number | null)[];
}

export interface Equivalence {
  readonly pipelines: readonly string[];
  /** Distinct samples compared (union over the pipelines). */
  readonly samples: number;
  readonly mismatches: number;
  /** The first few, for the report. */
  readonly examples: readonly Mismatch[];
}

const equal = (a: number, b: number): boolean => a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * Sample by sample over the union of the pipelines' samples; a sample one pipeline lacks counts
 * as 0 there (a series created at 0 by one library and not by another is not a difference).
 */
export function compareSamples(pipelines: Readonly<Record<string, Samples>>): Equivalence {
  const names = Object.keys(pipelines);
  const maps = names.map((name) => pipelines[name] ?? new Map<string, number>());
  const keys = new Set<string>();
  for (const map of maps) for (const key of map.keys()) keys.add(key);
  let mismatches = 0;
  const examples: Mismatch[] = [];
  for (const key of keys) {
    const values = maps.map((map) => map.get(key));
    const first = values[0] ?? 0;
    if (values.every((value) => equal(value ?? 0, first))) continue;
    mismatches += 1;
    if (examples.length < 8) examples.push({ sample: key, values: values.map((value) => value ?? null) });
  }
  return { pipelines: names, samples: keys.size, mismatches, examples };
}

export function describeEquivalence(check: Equivalence): string {
  const head = `${check.pipelines.join(' / ')}: ${check.samples.toLocaleString('en-US')} samples compared, ${check.mismatches} mismatch(es)`;
  if (check.mismatches === 0) return head;
  return `${head}, e.g. ${check.examples.map((example) => `${example.sample} = ${example.values.map((value) => (value === null ? '(none)' : String(value))).join(' / ')}`).join('; ')}`;
}

/** Throws unless the pipelines did the same work: equal samples, no event thrown on anywhere. */
export function assertEquivalent(check: Equivalence, applyErrors: Readonly<Record<string, number>>, where: string): void {
  const errors = Object.entries(applyErrors).filter(([, count]) => count !== 0);
  if (check.mismatches === 0 && errors.length === 0) return;
  throw new Error(
    `${where}: the pipelines did not do the same work — ${describeEquivalence(check)}; ` +
      `apply errors ${Object.entries(applyErrors).map(([name, count]) => `${name} ${count}`).join(', ')}`,
  );
}
