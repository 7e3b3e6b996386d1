/**
 * The SLO and spend-budget rules: sloth's names and labels, the scenarios' purpose under the
 * default objectives (the generated promtool tests check the rules against the same model), a
 * different objective rebuilding every dependent rule and expectation (and passing promtool),
 * the budget rules and their test built only with a budget, and build() refusing bad values.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { defaults } from '../../monitoring/config.js';
import { DASHBOARD_FILES, RULE_FILES } from '../../monitoring/files.js';
import { build, MonitoringConfigError, resolveConfig, type BuildOptions } from '../../monitoring/index.js';
import { BUDGET_TEST_FILE, budgetModel, fleets } from '../../monitoring/rules/budget-tests.js';
import { SPEND_ALERT } from '../../monitoring/rules/budget.js';
import { burstyDay, FAST, goFixed1, goG4, HOSTS, round4, scenarios, selectorLabels, simulate, SLO_TEST_FILES } from '../../monitoring/rules/slo-tests.js';
import { errorBudget, RAW_WINDOWS, SLI_WINDOWS, sliDefinitions } from '../../monitoring/rules/slos.js';
import { scratchDir } from '../support/scratch.js';
import { promtool } from '../support/tools.js';
import { sloRecordingRules } from './bundle.js';

interface RuleYaml {
  readonly record?: string;
  readonly alert?: string;
  readonly expr: string;
  readonly labels?: Record<string, string>;
}

function contentsOf(files: ReturnType<typeof build>, path: string): string {
  const file = files.find((candidate) => candidate.path === path);
  if (file === undefined) throw new Error(`${path} not built`);
  return file.contents;
}

function rulesOf(files: ReturnType<typeof build>, path: string): RuleYaml[] {
  return (parse(contentsOf(files, path)) as { groups: { rules: RuleYaml[] }[] }).groups.flatMap((group) => group.rules);
}

const SLOTH_RECORDS = [
  ...SLI_WINDOWS.map((window) => `slo:sli_error:ratio_rate${window}`),
  'slo:sli_error:ratio_rate30d',
  'slo:objective:ratio',
  'slo:error_budget:ratio',
  'slo:time_period:days',
  'slo:current_burn_rate:ratio',
  'slo:period_burn_rate:ratio',
  'slo:period_error_budget_remaining:ratio',
  'sloth_slo_info',
];

describe('SLO recording rules', () => {
  const rules = sloRecordingRules();

  it('record every series sloth records, for each SLO: per host without sloth_service, once for the fleet with it', () => {
    for (const sli of sliDefinitions(resolveConfig())) {
      const ofSli = rules.filter((rule) => rule.labels?.sloth_slo === sli.name);
      const fleet = ofSli.filter((rule) => rule.labels?.sloth_service === 'hermes');
      for (const record of SLOTH_RECORDS) expect(ofSli.map((rule) => rule.record), `${sli.name} ${record}`).toContain(record);
      // Series sloth's dashboard selects by sloth_service: exactly one rule each for the fleet.
      for (const record of SLOTH_RECORDS.filter((name) => name.startsWith('slo:sli_error'))) expect(fleet.filter((rule) => rule.record === record), record).toHaveLength(1);
      for (const rule of ofSli) {
        expect(rule.labels, rule.record).toMatchObject({ sloth_id: `hermes-${sli.name}`, sloth_slo: sli.name });
        const window = /(?:rate|increase)(\d+[mhd])$/.exec(rule.record)?.[1];
        if (rule.record.startsWith('slo:sli_')) expect(rule.labels?.sloth_window, rule.record).toBe(window);
      }
    }
  });

  it('compute the 1-day to 30-day ratios as errors over events, summed from the recorded 5-minute rates', () => {
    for (const window of ['1d', '3d', '30d']) {
      const ratios = rules.filter((rule) => rule.record === `slo:sli_error:ratio_rate${window}`);
      expect(ratios, window).toHaveLength(6);
      for (const rule of ratios) {
        expect(rule.expr).toMatch(new RegExp(`^sum_over_time\\(slo:sli_error_events:rate5m\\{[^}]*\\}\\[${window}\\]\\)\\n/\\n\\(sum_over_time\\(slo:sli_events:rate5m\\{[^}]*\\}\\[${window}\\]\\) > 0\\)$`));
        expect(rule.expr).not.toContain('_total');
      }
    }
  });

  it('count logical provider calls: attempts less retried attempts', () => {
    const availability = rules.find((rule) => rule.record === 'slo:sli_error_events:rate5m' && rule.labels?.sloth_slo === 'provider-availability');
    expect(availability?.expr).toContain('hermes_api_retries_total');
    expect(availability?.expr).toContain('outcome="error"');
  });
});

describe('SLO scenarios under the default objectives', () => {
  const availability = sliDefinitions(resolveConfig()).find((sli) => sli.name === 'provider-availability');
  if (availability === undefined) throw new Error('no availability SLO');
  const slis = sliDefinitions(resolveConfig());
  const timeline = (sliName: string, scenarioIndex: number, instance: string) => {
    const sli = slis.find((candidate) => candidate.name === sliName);
    const scenario = sli === undefined ? undefined : scenarios(sli)[scenarioIndex];
    if (sli === undefined || scenario === undefined) throw new Error(`no scenario ${String(scenarioIndex)} for ${sliName}`);
    const found = simulate(sli, scenario).find((entry) => entry.instance === instance);
    if (found === undefined) throw new Error(`no host ${instance}`);
    return found.firing;
  };

  it('pages a total outage within 5 minutes of its start, and clears within the short window after recovery', () => {
    const { healthySteps, outageSteps } = FAST;
    const critical = timeline('provider-availability', 0, HOSTS.outage).critical ?? [];
    expect(critical.length).toBeGreaterThan(0);
    expect(Math.min(...critical) - healthySteps).toBeLessThanOrEqual(5);
    expect(Math.min(...critical)).toBeGreaterThan(healthySteps);
    // The 6 h pair's short window is 30 minutes: the page ends by then.
    expect(Math.max(...critical) - (healthySteps + outageSteps)).toBeLessThan(30);
  });

  it('pages an outage after 6 hours of healthy traffic within 5 minutes too, on the 1 h pair alone', () => {
    // The model the promtool tests check, on a history too long for a quick promtool run.
    const healthy = Array.from({ length: 360 }, () => ({ good: 25, bad: 0 }));
    const steps = [...healthy, ...Array.from({ length: 10 }, () => ({ good: 0, bad: 24 })), ...healthy.slice(0, 40)];
    const scenario = { name: 'long history', stepMinutes: 1, file: 'outage' as const, hosts: [{ instance: 'long', steps }], checks: [], story: '' };
    const critical = simulate(availability, scenario)[0]?.firing.critical ?? [];
    // 1 h window at minute 5: 120 / (120 + 55 x 25) = 0.080 > 14.4 x 0.005 = 0.072; at minute 4: 0.064.
    expect(Math.min(...critical)).toBe(365);
    // The 6 h pair never fires (240 / 8990 = 0.027 <= 0.03), so the page clears 5 minutes after recovery.
    expect(Math.max(...critical)).toBe(374);
  });

  it('pages a total outage of every SLO within 10 minutes after 6 hours of steady traffic (25 calls a minute)', () => {
    const minutes: Record<string, number> = {};
    const healthy = Array.from({ length: 360 }, () => ({ good: 25, bad: 0 }));
    const steps = [...healthy, ...Array.from({ length: 15 }, () => ({ good: 0, bad: 24 }))];
    const scenario = { name: 'long history', stepMinutes: 1, file: 'outage' as const, hosts: [{ instance: 'long', steps }], checks: [], story: '' };
    for (const sli of slis) {
      const critical = simulate(sli, scenario)[0]?.firing.critical ?? [];
      minutes[sli.name] = Math.min(...critical) - healthy.length;
      expect(minutes[sli.name], sli.name).toBeLessThanOrEqual(10);
    }
    console.log(`first page, minutes into a total outage: ${JSON.stringify(minutes)}`);
    // The 1 h window's share above 14.4 x (1 - objective): 24t / (24t + 25 (60 - t)) > 0.072 from
    // t = 4.5 min at 99.5 %, > 0.144 from t = 8.95 min at 99 %.
    expect(minutes).toEqual({ 'provider-availability': 5, 'tool-success': 9, 'provider-latency': 9 });
    // A partial outage, half of the calls failing: 12t / (1500 - t) > 0.072 from t = 8.95 min.
    const partial = [...healthy, ...Array.from({ length: 15 }, () => ({ good: 12, bad: 12 }))];
    const page = simulate(availability, { ...scenario, hosts: [{ instance: 'partial', steps: partial }] })[0]?.firing.critical ?? [];
    expect(Math.min(...page) - healthy.length).toBe(9);
  });

  it('tells the true budget left after a bursty day, within two points of errors over events', () => {
    const steps = burstyDay();
    const bad = steps.reduce((sum, step) => sum + step.bad, 0);
    const total = steps.reduce((sum, step) => sum + step.good + step.bad, 0);
    expect([bad, total]).toEqual([22, 20044]);
    const truth = 1 - bad / total / errorBudget(availability.objective);
    expect(truth).toBeCloseTo(0.78, 1);
    // The generated promtool test (rules/tests/hermes-slos-bursty.yml) expects the rules' value.
    const scenario = scenarios(availability).find((candidate) => candidate.file === 'bursty');
    const file = build().find((candidate) => candidate.path === SLO_TEST_FILES.bursty)?.contents ?? '';
    expect(scenario?.hosts[0]?.steps).toEqual(steps);
    const expected = /value: (-?[\d.]+)/.exec(file.slice(file.indexOf('period_error_budget_remaining')))?.[1];
    expect(Math.abs(Number(expected) - truth)).toBeLessThan(0.02);
  });

  it('pages nothing for a one-minute blip at 10 % errors, for any SLO', () => {
    for (const sli of slis) {
      const firing = timeline(sli.name, 1, HOSTS.blip);
      expect(firing.critical, sli.name).toEqual([]);
      expect(firing.warning, sli.name).toEqual([]);
    }
  });

  it('keeps a host with three calls and one failure quiet, while the same share with traffic pages', () => {
    for (const sli of slis) {
      const small = timeline(sli.name, 1, HOSTS.small);
      expect([...(small.critical ?? []), ...(small.warning ?? [])], sli.name).toEqual([]);
      expect((timeline(sli.name, 1, HOSTS.busy).critical ?? []).length, sli.name).toBeGreaterThan(0);
    }
  });

  it('never alerts on a steady 0.5x burn; tickets a steady 2x burn within a day and never pages it', () => {
    for (const sli of slis) {
      const half = timeline(sli.name, 2, HOSTS.halfBurn);
      expect([...(half.critical ?? []), ...(half.warning ?? [])], sli.name).toEqual([]);
      const double = timeline(sli.name, 2, HOSTS.doubleBurn);
      expect(double.critical, sli.name).toEqual([]);
      // 5-minute steps: a day is 288 of them.
      expect(Math.min(...(double.warning ?? [])), sli.name).toBeLessThanOrEqual(288);
    }
  });
});

describe('build({ slos })', () => {
  const committed = build();
  const stricter = build({ slos: { providerAvailability: { objective: 0.999 } } });

  it('changes every rule that depends on the availability objective, and no other', () => {
    const before = [...rulesOf(committed, RULE_FILES.sloRecording), ...rulesOf(committed, RULE_FILES.sloAlerts)];
    const after = [...rulesOf(stricter, RULE_FILES.sloRecording), ...rulesOf(stricter, RULE_FILES.sloAlerts)];
    expect(after).toHaveLength(before.length);
    const dependent = (rule: RuleYaml) =>
      rule.alert === 'HermesApiAvailabilityBudgetBurn' ||
      (rule.labels?.sloth_slo === 'provider-availability' &&
        ['slo:objective:ratio', 'slo:error_budget:ratio', 'slo:current_burn_rate:ratio', 'slo:period_burn_rate:ratio', 'sloth_slo_info'].includes(rule.record ?? ''));
    for (const [index, rule] of after.entries()) {
      const old = before[index];
      const name = `${rule.record ?? rule.alert ?? ''} ${rule.labels?.sloth_slo ?? rule.labels?.severity ?? ''}`;
      if (dependent(rule)) expect(JSON.stringify(rule), name).not.toBe(JSON.stringify(old));
      else expect(rule, name).toEqual(old);
    }
    expect(rulesOf(stricter, RULE_FILES.sloAlerts).find((rule) => rule.alert === 'HermesApiAvailabilityBudgetBurn')?.expr).toContain('> 0.0144');
  });

  it('rebuilds the test expectations, and the rebuilt tests pass promtool', () => {
    for (const path of Object.values(SLO_TEST_FILES)) expect(contentsOf(stricter, path), path).not.toBe(contentsOf(committed, path));
    expect(contentsOf(stricter, SLO_TEST_FILES.outage)).toContain('x = 0.001 (1 - 0.999)');
    const tool = promtool();
    if (tool.path === undefined) {
      console.log(`skipped promtool on the rebuilt bundle: ${tool.skipReason ?? ''}`);
      if (process.env.CI === 'true') throw new Error(tool.skipReason);
      return;
    }
    const dir = writeBundle(stricter);
    const output = execFileSync(tool.path, ['test', 'rules', ...Object.values(SLO_TEST_FILES)], { cwd: dir, encoding: 'utf8' });
    expect(output).toContain('SUCCESS');
  }, 60_000);

  it('refuses objectives, guards, thresholds and budgets no rule can use, with stable codes', () => {
    const refused = (options: BuildOptions) => {
      try {
        build(options);
      } catch (error) {
        return error instanceof MonitoringConfigError ? error.code : String(error);
      }
      return 'accepted';
    };
    expect(refused({ slos: { toolSuccess: { objective: 1 } } })).toBe('slo_objective_out_of_range');
    expect(refused({ slos: { toolSuccess: { objective: Number.NaN } } })).toBe('slo_objective_out_of_range');
    expect(refused({ slos: { providerAvailability: { minEvents: -1 } } })).toBe('slo_min_events_invalid');
    expect(refused({ slos: { providerLatency: { thresholdSeconds: 60 } } })).toBe('slo_latency_threshold_not_a_bucket');
    expect(refused({ thresholds: { monthlyBudgetUsd: 0 } })).toBe('monthly_budget_invalid');
    expect(refused({ slos: { providerLatency: { thresholdSeconds: 40.96 } } })).toBe('accepted');
  });

  it('takes a latency threshold that is a bucket bound into the bucket matcher', () => {
    const files = build({ slos: { providerLatency: { thresholdSeconds: 40.96 } } });
    const latency = rulesOf(files, RULE_FILES.sloRecording).filter((rule) => rule.labels?.sloth_slo === 'provider-latency' && rule.expr.includes('_bucket'));
    // The 5-minute error rate and the raw windows' ratios but 5m (divided from the recorded rates) read the bucket.
    expect(latency).toHaveLength(1 + RAW_WINDOWS.length - 1);
    for (const rule of latency) expect(rule.expr).toContain('le="40.96"');
  });

  it('leaves the latency SLO out of a native bundle, whose histograms have no le buckets', () => {
    const files = build({ histograms: 'native' });
    const slos = (path: string) => new Set(rulesOf(files, path).map((rule) => rule.labels?.sloth_slo));
    expect(slos(RULE_FILES.sloRecording)).toEqual(new Set(['provider-availability', 'tool-success']));
    const alerts = new Set(rulesOf(files, RULE_FILES.sloAlerts).map((rule) => rule.alert));
    expect(alerts).toEqual(new Set(['HermesApiAvailabilityBudgetBurn', 'HermesToolSuccessBudgetBurn']));
    for (const path of [RULE_FILES.sloRecording, RULE_FILES.sloAlerts]) expect(contentsOf(files, path)).not.toContain('_bucket');
    expect(contentsOf(build(), RULE_FILES.sloRecording)).toContain('hermes_api_request_duration_seconds_bucket');
  });
});

function writeBundle(files: ReturnType<typeof build>): string {
  const dir = scratchDir('hermes-slo-bundle-');
  for (const file of files) {
    mkdirSync(dirname(join(dir, file.path)), { recursive: true });
    writeFileSync(join(dir, file.path), file.contents);
  }
  return dir;
}

describe('the monthly spend budget', () => {
  const BUDGET = 620;

  it('adds no rule, panel or test while unset', () => {
    expect(defaults.thresholds.monthlyBudgetUsd).toBeUndefined();
    const files = build();
    expect(contentsOf(files, RULE_FILES.recording)).not.toContain('hermes_cost_usd:month_to_date');
    expect(contentsOf(files, RULE_FILES.alerts)).not.toContain(SPEND_ALERT);
    expect(contentsOf(files, DASHBOARD_FILES.agentOverview)).not.toContain('Spend budget left this month');
    expect(files.map((file) => file.path)).not.toContain(BUDGET_TEST_FILE);
  });

  it('warns at least three days before a steady or a surging spend runs out, and never under budget', () => {
    for (const fleet of fleets(BUDGET)) {
      const model = budgetModel(fleet, BUDGET);
      let first: number | undefined;
      for (let hour = 0; hour < 31 * 24 && first === undefined; hour += 1) if (model.firing(hour)) first = hour;
      if (model.exhaustedAt === undefined) {
        expect(first, fleet.name).toBeUndefined();
      } else {
        expect(first, fleet.name).toBeDefined();
        expect(model.exhaustedAt - (first ?? Infinity), fleet.name).toBeGreaterThanOrEqual(72);
      }
    }
    expect(fleets(BUDGET).filter((fleet) => budgetModel(fleet, BUDGET).exhaustedAt !== undefined)).toHaveLength(2);
  });

  it('builds the forecast rules, the alert, the panels and a promtool test that passes', () => {
    const files = build({ thresholds: { monthlyBudgetUsd: BUDGET } });
    expect(rulesOf(files, RULE_FILES.alerts).find((rule) => rule.alert === SPEND_ALERT)?.expr).toMatch(/ > 620$/);
    expect(contentsOf(files, DASHBOARD_FILES.agentOverview)).toContain('Spend budget left this month');
    const tool = promtool();
    if (tool.path === undefined) {
      console.log(`skipped promtool on the budget bundle: ${tool.skipReason ?? ''}`);
      if (process.env.CI === 'true') throw new Error(tool.skipReason);
      return;
    }
    const dir = writeBundle(files);
    expect(execFileSync(tool.path, ['check', 'rules', RULE_FILES.recording, RULE_FILES.alerts], { cwd: dir, encoding: 'utf8' })).toContain('SUCCESS');
    expect(execFileSync(tool.path, ['test', 'rules', BUDGET_TEST_FILE], { cwd: dir, encoding: 'utf8' })).toContain('SUCCESS');
  }, 60_000);
});

describe('the rule-test generator', () => {
  it('prints numbers as Go does, and refuses ties where Go and JavaScript round differently', () => {
    expect(goG4(99.876)).toBe('99.88');
    expect(goG4(100)).toBe('100');
    expect(goG4(-6566.666)).toBe('-6567');
    expect(goG4(12_346)).toBe('1.235e+04');
    expect(goG4(0.000012)).toBe('1.2e-05');
    expect(() => goG4(12_345)).toThrow(/boundary/);
    expect(goFixed1(16.666)).toBe('16.7');
    expect(() => goFixed1(0.25)).toThrow(/boundary/);
    expect(round4(0.123_44)).toBe(0.1234);
    expect(() => round4(0.123_45)).toThrow(/boundary/);
  });

  it('makes input series only for selectors of plain equality matchers', () => {
    expect(selectorLabels('cluster="eu1", job="agents"')).toEqual({ cluster: 'eu1', job: 'agents' });
    expect(selectorLabels('job=~"agents-.*"')).toBeUndefined();
    const files = build({ selector: 'job=~"agents-.*"' }).map((file) => file.path);
    expect(files).toContain(RULE_FILES.sloAlerts);
    expect(files).not.toContain(SLO_TEST_FILES.outage);
  });
});
