/** Family storage built directly in tests: a spec of open labels, options that count folds and refusals. */
import { OPEN, type MetricSpec } from '../../src/metrics/declare.js';
import type { FamilyOptions, ScalarSeries } from '../../src/metrics/families.js';

function spec(type: MetricSpec['type'], labelNames: readonly string[]): MetricSpec {
  return { name: `test_${type}`, help: 'test', type, labels: Object.fromEntries(labelNames.map((name) => [name, OPEN])), labelNames, scope: 'agent', preinit: false };
}

export interface Counts {
  folds: number;
  invalid: number;
}

export function options(type: MetricSpec['type'], labelNames: readonly string[], extra: Partial<FamilyOptions> = {}): [FamilyOptions, Counts] {
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

export const scalars = (family: { series(): Iterable<ScalarSeries> }) => [...family.series()].map((series) => [series.labelValues.join('/'), series.value]);
