/**
 * The metric catalogue is the contract between the sidecar and its monitoring bundle: every
 * name a dashboard or rule reads must be exported, and every agent metric must be on a
 * dashboard (LiteLLM's metric-name consistency test, in our terms).
 */
import { describe, expect, it } from 'vitest';
import { CATALOGUE, DEFAULT_METRIC_PREFIXES, ENVELOPE_ONLY_METRICS, METRIC_NAMES } from '../../src/catalogue.js';
import { alertRules, dashboardTargets, loadDashboards, recordingRules, sloRecordingRules } from './bundle.js';
import { labelValuesSelector, vectorSelectors } from './promql.js';

const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'] as const;
/** Prometheus' own per-target series. */
const SCRAPE_SERIES = ['up'] as const;

const histogramNames = Object.values(CATALOGUE)
  .filter((spec) => spec.type === 'histogram')
  .map((spec) => spec.name);
const recordedNames = [...recordingRules(), ...sloRecordingRules()].map((rule) => rule.record);

function isKnownMetric(name: string): boolean {
  return (
    METRIC_NAMES.includes(name) ||
    histogramNames.some((histogram) => HISTOGRAM_SUFFIXES.some((suffix) => name === `${histogram}${suffix}`)) ||
    DEFAULT_METRIC_PREFIXES.some((prefix) => name.startsWith(prefix)) ||
    (SCRAPE_SERIES as readonly string[]).includes(name) ||
    recordedNames.includes(name)
  );
}

/** The catalogue name a series belongs to (`x_bucket` → `x` for histograms). */
function catalogueName(series: string): string {
  for (const histogram of histogramNames) {
    if (HISTOGRAM_SUFFIXES.some((suffix) => series === `${histogram}${suffix}`)) return histogram;
  }
  return series;
}

const dashboardExpressions = [
  ...dashboardTargets().map(({ where, target }) => ({ where, expr: target.expr })),
  ...loadDashboards().flatMap(({ file, json }) =>
    json.templating.list
      .filter((variable) => variable.type === 'query')
      .map((variable) => ({
        where: `${file} › $${variable.name}`,
        expr: labelValuesSelector(String(variable.query)),
      })),
  ),
];
const ruleExpressions = [
  ...alertRules().map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
  ...[...recordingRules(), ...sloRecordingRules()].map((rule) => ({ where: `record ${rule.record}`, expr: rule.expr })),
];

describe('metric names', () => {
  it.each([...dashboardExpressions, ...ruleExpressions].map(({ where, expr }) => [where, expr] as const))(
    '%s reads only catalogue metrics',
    (_where, expr) => {
      const unknown = vectorSelectors(expr)
        .map((selector) => selector.name)
        .filter((name) => !isKnownMetric(name));
      expect(unknown).toEqual([]);
    },
  );

  const envelopeOnly = new Set(ENVELOPE_ONLY_METRICS.map((key) => CATALOGUE[key].name));

  it('puts every agent metric a Hermes release feeds on a dashboard panel', () => {
    const onDashboards = new Set(
      dashboardTargets().flatMap(({ target }) =>
        vectorSelectors(target.expr).map((selector) => catalogueName(selector.name)),
      ),
    );
    const missing = Object.values(CATALOGUE)
      .filter((spec) => spec.scope === 'agent' && !envelopeOnly.has(spec.name))
      .map((spec) => spec.name)
      .filter((name) => !onDashboards.has(name));
    expect(missing).toEqual([]);
  });

  it('shows and alerts on no metric only the envelope variant feeds (always empty for Hermes users)', () => {
    expect(envelopeOnly.size).toBeGreaterThan(0);
    const used = [...dashboardExpressions, ...ruleExpressions]
      .flatMap(({ where, expr }) => vectorSelectors(expr).map((selector) => `${catalogueName(selector.name)} in ${where}`))
      .filter((use) => envelopeOnly.has(use.split(' ')[0] ?? ''));
    expect(used).toEqual([]);
  });

  it('shows every delivery and self metric on the sidecar health dashboard', () => {
    const health = dashboardTargets().filter(({ where }) => where.includes('hermes-sidecar-health'));
    const shown = new Set(
      health.flatMap(({ target }) => vectorSelectors(target.expr).map((selector) => catalogueName(selector.name))),
    );
    const missing = Object.values(CATALOGUE)
      .filter((spec) => spec.scope !== 'agent')
      .map((spec) => spec.name)
      .filter((name) => !shown.has(name));
    expect(missing).toEqual([]);
  });

  it('reads recording rules only where they are defined', () => {
    const used = dashboardExpressions
      .flatMap(({ expr }) => vectorSelectors(expr))
      .map((selector) => selector.name)
      .filter((name) => name.includes(':'));
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((name) => !recordedNames.includes(name))).toEqual([]);
  });
});
