/**
 * The bundle as a library (monitoring/index.ts): build() for another selector, thresholds and
 * runbook regenerates every dashboard query and rule with them, and build() without options is
 * exactly the committed files.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { defaults } from '../../monitoring/config.js';
import { DASHBOARD_FILES, RULE_FILES } from '../../monitoring/files.js';
import { build } from '../../monitoring/index.js';
import { readRepoFile, visualPanels, type DashboardJson } from './bundle.js';
import { vectorSelectors } from './promql.js';

const SELECTOR = 'cluster="eu1", namespace="agents"';
const RUNBOOK = 'https://runbooks.example.com/hermes.md';

interface RulesYaml {
  readonly groups: readonly { readonly rules: readonly Record<string, unknown>[] }[];
}

function contentsOf(files: ReturnType<typeof build>, path: string): string {
  const file = files.find((candidate) => candidate.path === path);
  if (file === undefined) throw new Error(`${path} not built`);
  return file.contents;
}

/** Every PromQL expression of a build: panel targets, query variables, rules. */
/** ` [slo]` for a rule of a generated SLO (its sloth_slo label), else ''. */
function sloOf(rule: Record<string, unknown>): string {
  const slo = (rule.labels as Record<string, unknown> | undefined)?.sloth_slo;
  return typeof slo === 'string' ? ` [${slo}]` : '';
}

const LATENCY_SLO = 'provider-latency';

/** Whether an expression belongs to the latency SLO: its rules, its alert or its panels. */
function isLatencySlo(where: string, expr: string): boolean {
  return where.endsWith(`[${LATENCY_SLO}]`) || where.includes('HermesApiLatencyBudgetBurn') || expr.includes(`-${LATENCY_SLO}"`);
}

function expressions(files: ReturnType<typeof build>): { where: string; expr: string }[] {
  const dashboards = Object.values(DASHBOARD_FILES).flatMap((path) => {
    const json = JSON.parse(contentsOf(files, path)) as DashboardJson;
    return [
      ...visualPanels(json).flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `${path} › ${panel.title}`, expr: target.expr }))),
      ...json.templating.list
        .filter((variable) => variable.type === 'query')
        .map((variable) => ({ where: `${path} › $${variable.name}`, expr: String(variable.query).replace(/^label_values\((.*), \w+\)$/, '$1') })),
    ];
  });
  const rules = Object.values(RULE_FILES).flatMap((path) =>
    (parse(contentsOf(files, path)) as RulesYaml).groups.flatMap((group) =>
      group.rules.map((rule) => ({ where: `${path} › ${String(rule.alert ?? rule.record)}${sloOf(rule)}`, expr: String(rule.expr) })),
    ),
  );
  return [...dashboards, ...rules];
}

describe('build()', () => {
  it('without options is the committed bundle', () => {
    for (const file of build()) expect(readRepoFile(file.path), file.path).toBe(file.contents);
  });

  it('applies another selector to every series of every dashboard query and rule', () => {
    const built = expressions(build({ selector: SELECTOR }));
    const committed = expressions(build());
    expect(built.length).toBe(committed.length);
    expect(built.length).toBeGreaterThan(100);
    for (const [index, { where, expr }] of built.entries()) {
      // The SLO meta series are constants (vector(0.995)), as sloth writes them: no series to select.
      if (/^vector\([0-9.]+\)$/.test(expr)) continue;
      expect(expr, where).not.toBe(committed[index]?.expr);
      const selectors = vectorSelectors(expr);
      expect(selectors.length, where).toBeGreaterThan(0);
      for (const selector of selectors) {
        expect(selector.matchers, `${selector.name} in ${where}`).toContain(SELECTOR);
        expect(selector.matchers, `${selector.name} in ${where}`).not.toContain(defaults.selector);
      }
    }
  });

  it('takes threshold overrides and the runbook base, keeping the other defaults', () => {
    const files = build({ thresholds: { costUsdPerHour: 250, apiErrorRatioWarning: 0.2 }, runbookBase: RUNBOOK });
    const alerts = (parse(contentsOf(files, RULE_FILES.alerts)) as RulesYaml).groups.flatMap((group) => group.rules);
    const byName = (name: string) => alerts.filter((rule) => rule.alert === name).map((rule) => String(rule.expr));
    expect(byName('HermesSpendRateHigh')[0]).toMatch(/> 250$/);
    expect(byName('HermesApiErrorRatioHigh')).toEqual([expect.stringMatching(/> 0\.2\nand\n/)]);
    expect(byName('HermesApiRetryStorm')[0]).toContain(`> ${String(defaults.thresholds.apiRetryRatio)}\nand\n`);
    for (const rule of alerts) {
      const annotations = rule.annotations as Record<string, string>;
      expect(annotations.runbook_url).toBe(`${RUNBOOK}#${String(rule.alert).toLowerCase()}`);
    }
  });

  it('reads native histograms with histograms: native, changing only the histogram queries', () => {
    const native = expressions(build({ histograms: 'native' }));
    // The latency SLO reads one classic bucket and has no native form on 2.42 (no
    // histogram_fraction): a native bundle leaves it out, so the classic side is compared without it.
    const classic = expressions(build()).filter(({ where, expr }) => !isLatencySlo(where, expr));
    expect(native.filter(({ where, expr }) => isLatencySlo(where, expr))).toEqual([]);
    expect(native.length).toBe(classic.length);
    const changed = native.filter(({ expr }, index) => expr !== classic[index]?.expr);
    // Every changed expression is one that read classic buckets, and none reads them any more.
    expect(changed.length).toBeGreaterThan(20);
    expect(changed.length).toBe(classic.filter(({ expr }) => /_bucket\b/.test(expr)).length);
    for (const { where, expr } of native) {
      expect(expr, where).not.toMatch(/_bucket\b/);
      expect(expr, where).not.toMatch(/\ble\b/);
    }
    expect(native.find(({ where }) => where.endsWith('› provider_model:hermes_api_request_duration_seconds:rate5m'))?.expr).toBe(
      `sum without (kind, outcome) (rate(hermes_api_request_duration_seconds{${defaults.selector}, outcome="success"}[5m]))`,
    );
  });
});
