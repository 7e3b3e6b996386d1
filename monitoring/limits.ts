/**
 * The scrape limits of the shipped prometheus.yml, derived from the sidecar's own bounds: the
 * series budget, the overflow series (bounded by the closed enumerations), the pipeline's own
 * series, the histogram buckets per series, the label guard's caps and value length. A scrape of
 * a sidecar with default settings can never exceed them, so they only ever stop a scrape that
 * is not the sidecar's (a wrong target, a broken build).
 *
 * The label limits count the labels the scraper adds too. A limit equal to the widest sample
 * would fail every scrape (up = 0, every series lost) the day someone adds one target label
 * (`env`, `site`, a relabelled Kubernetes label), possibly days after setup, at the first sample
 * that carries every label. So they leave room for the labels a deployment adds.
 */
import { CATALOGUE } from '../src/catalogue.js';
import { OPTIONS } from '../src/configOptions.js';
import { closedValues, DEFAULT_BUCKETS, guardedLabel, INFO, type MetricSpec } from '../src/metrics/declare.js';
import { DEFAULT_LABEL_CAPS, MAX_LABEL_LENGTH } from '../src/metrics/labels.js';
import { OTHER, UNKNOWN } from '../src/wireText.js';

/**
 * prom-client's process and Node.js runtime metrics are not in the catalogue; these bound them
 * (test/monitoring/limits.test.ts checks a real runtime registry, after garbage collections,
 * against each).
 */
export const RUNTIME_ALLOWANCE = { samples: 200, labels: 6, labelNameLength: 16, labelValueLength: 64 } as const;

/** Labels Prometheus adds to every sample of the shipped job, besides `__name__`: job and instance. */
const TARGET_LABELS = ['job', 'instance'] as const;
/** Longest build information value (version, git revision, Node.js version). */
const INFO_VALUE_LENGTH = 64;
/** UTF-8 takes at most 3 bytes per UTF-16 unit (a surrogate pair, 2 units, takes 4). */
const UTF8_BYTES_PER_UNIT = 3;

const specs: readonly MetricSpec[] = Object.values(CATALOGUE as Record<string, MetricSpec>);

/** The default of --metrics.max-series, from the option table. */
const DEFAULT_MAX_SERIES = Number(OPTIONS.find((option) => option.flag === 'metrics.max-series')?.default);

/** Samples one series of `spec` renders: a classic histogram its buckets (+Inf too), _sum and _count. */
export function samplesPerSeries(spec: MetricSpec): number {
  if (spec.type !== 'histogram' || spec.buckets === undefined) return 1;
  return DEFAULT_BUCKETS[spec.buckets].length + 3;
}

/** How many values a label of `spec` can take: a closed set with `unknown` and `other`, an open label its cap. */
function valuesOf(spec: MetricSpec, label: string, folded: boolean): number {
  const declared = spec.labels[label];
  if (declared === undefined || declared === INFO) return 1;
  const closed = closedValues(declared, specs);
  if (closed !== undefined) return new Set([...closed, UNKNOWN, OTHER]).size;
  if (folded) return 1;
  const guard = guardedLabel(spec, label);
  // An open label: its cap, plus `unknown` and `other`.
  return (guard === undefined ? 0 : (DEFAULT_LABEL_CAPS[guard as keyof typeof DEFAULT_LABEL_CAPS] ?? 0)) + 2;
}

/** The most series of `spec` its label values allow; `folded` counts open labels as `other` alone. */
function combinations(spec: MetricSpec, folded: boolean): number {
  return spec.labelNames.reduce((product, label) => product * valuesOf(spec, label, folded), 1);
}

/**
 * The most samples one scrape of a default sidecar holds (every opt-in family on): the series
 * budget spent on the agent family with the most samples per series, every agent family's
 * overflow series, every pipeline series the label sets allow, and the runtime allowance.
 */
export function maxSamples(maxAgentSeries: number = DEFAULT_MAX_SERIES): number {
  const agent = specs.filter((spec) => spec.scope === 'agent');
  const widest = Math.max(...agent.map(samplesPerSeries));
  const overflow = agent.reduce((total, spec) => total + combinations(spec, true) * samplesPerSeries(spec), 0);
  const pipeline = specs
    .filter((spec) => spec.scope !== 'agent')
    .reduce((total, spec) => total + combinations(spec, false) * samplesPerSeries(spec), 0);
  return maxAgentSeries * widest + overflow + pipeline + RUNTIME_ALLOWANCE.samples;
}

/** The most labels of one sample, `__name__` and the target labels included (what label_limit counts). */
export function maxLabels(): number {
  const own = Math.max(...specs.map((spec) => spec.labelNames.length + (spec.type === 'histogram' ? 1 : 0)));
  return 1 + TARGET_LABELS.length + Math.max(own, RUNTIME_ALLOWANCE.labels);
}

/** The longest label name, `__name__` included. */
export function maxLabelNameLength(): number {
  const names = ['__name__', 'le', ...TARGET_LABELS, ...specs.flatMap((spec) => spec.labelNames)];
  return Math.max(RUNTIME_ALLOWANCE.labelNameLength, ...names.map((name) => name.length));
}

/**
 * The longest label value in UTF-8 bytes: a guarded value (at most MAX_LABEL_LENGTH UTF-16
 * units), a closed value, a build information value, or a metric name with its suffix (the
 * value of `__name__`). The instance label is the target's address, which the user chooses.
 */
export function maxLabelValueBytes(): number {
  const closed = specs.flatMap((spec) =>
    spec.labelNames.flatMap((label) => {
      const declared = spec.labels[label];
      return declared === undefined ? [] : (closedValues(declared, specs) ?? []);
    }),
  );
  const names = specs.map((spec) => `${spec.name}_bucket`);
  return Math.max(
    MAX_LABEL_LENGTH * UTF8_BYTES_PER_UNIT,
    INFO_VALUE_LENGTH,
    RUNTIME_ALLOWANCE.labelValueLength,
    ...[...closed, ...names].map((text) => Buffer.byteLength(text, 'utf8')),
  );
}

/** `value` rounded up to a multiple of `step`: a limit a reader can take in at a glance, never below the bound. */
export const roundUp = (value: number, step: number): number => Math.ceil(value / step) * step;

/**
 * Labels a deployment may add to every sample besides job and instance: target labels
 * (`env`, `site`, `cluster`, `team`) and the ones Kubernetes discovery relabels in (`namespace`,
 * `pod`, `container`, `node`, a labelmap of pod labels). Ten covers the usual sets with room.
 */
export const ADDED_TARGET_LABELS = 10;

/**
 * Longest label name a deployment may add: a labelmap of Kubernetes pod labels turns
 * `app.kubernetes.io/<name>` into `app_kubernetes_io_<name>`, and a Kubernetes label name is up
 * to 63 characters, so 18 + 63 = 81; rounded up to 128.
 */
export const ADDED_LABEL_NAME_LENGTH = 128;

/** The limits the shipped prometheus.yml sets on the sidecar's scrape job. */
export function scrapeLimits() {
  return {
    sampleLimit: roundUp(maxSamples(), 10_000),
    labelLimit: maxLabels() + ADDED_TARGET_LABELS,
    labelNameLengthLimit: Math.max(maxLabelNameLength(), ADDED_LABEL_NAME_LENGTH),
    labelValueLengthLimit: roundUp(maxLabelValueBytes(), 64),
  };
}

/** What each limit is made of, in words and numbers: prometheus.yml's comments and docs/scale-out.md say the same. */
export function scrapeLimitArithmetic(): { readonly setting: string; readonly value: number; readonly bound: number; readonly why: string }[] {
  const limits = scrapeLimits();
  const widest = maxLabels();
  const widestFamily = [...specs].sort((a, b) => b.labelNames.length - a.labelNames.length)[0]?.name;
  const longestName = specs.flatMap((spec) => spec.labelNames).find((name) => name.length === maxLabelNameLength());
  return [
    {
      setting: 'sample_limit',
      value: limits.sampleLimit,
      bound: maxSamples(),
      why: `${DEFAULT_MAX_SERIES.toLocaleString('en-US')} series (--metrics.max-series) of the widest agent histogram, every overflow series, every pipeline series and ${RUNTIME_ALLOWANCE.samples} runtime samples = ${maxSamples().toLocaleString('en-US')}, rounded up to a multiple of 10,000`,
    },
    {
      setting: 'label_limit',
      value: limits.labelLimit,
      bound: widest,
      why: `the widest sample has ${widest} labels (__name__, job, instance and ${widest - 1 - TARGET_LABELS.length} of its own: ${String(widestFamily)}); + ${ADDED_TARGET_LABELS} labels a deployment may add (env, site, cluster, namespace, pod, …) = ${limits.labelLimit}`,
    },
    {
      setting: 'label_name_length_limit',
      value: limits.labelNameLengthLimit,
      bound: maxLabelNameLength(),
      why: `the longest label name the sidecar writes is ${maxLabelNameLength()} characters (${String(longestName)}); an added label may be up to ${ADDED_LABEL_NAME_LENGTH} (app_kubernetes_io_ + a 63-character Kubernetes label name = 81, rounded up)`,
    },
    {
      setting: 'label_value_length_limit',
      value: limits.labelValueLengthLimit,
      bound: maxLabelValueBytes(),
      why: `a guarded value is at most ${MAX_LABEL_LENGTH} UTF-16 units = ${maxLabelValueBytes()} UTF-8 bytes, rounded up to a multiple of 64; an added value (a 253-character DNS name, a pod name) fits`,
    },
  ];
}
