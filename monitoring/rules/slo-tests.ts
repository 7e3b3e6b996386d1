/**
 * promtool unit tests of the SLO rules (rules/hermes-slo-*.yml), generated for a configuration:
 * a different objective, guard or latency threshold changes the input the scenarios need and
 * every expectation, so the tests always test the rules they ship with.
 *
 * Each scenario is traffic per host (good and bad events per step). The expectations come from
 * a model of the SLO written here in plain arithmetic over those events, independent of the
 * PromQL: window ratios up to 6 h are bad / total events in the window; the 1 d, 3 d and 30-day
 * ratios are the bad events of every 5-minute window recorded in the window over their events
 * (what summing the recorded 5-minute rates gives); an alert level fires when both windows of
 * one pair exceed factor x (1 - objective) and the guard window holds at least minEvents events. Every check
 * carries that arithmetic as a comment. A value the model puts within rounding distance of a
 * threshold or of a printed digit is refused: the test would then depend on float noise.
 */
import { Document, isMap, isSeq, type Node } from 'yaml';
import type { MonitoringConfig } from '../config.js';
import { GENERATED_NOTICE } from '../render.js';
import {
  BURN_ALERTS,
  burnThreshold,
  DERIVED_WINDOWS,
  guardWindow,
  slothSeverity,
  decimal,
  errorBudget,
  PERIOD_DAYS,
  SLO_RECORDS,
  SLO_SERVICE,
  slothId,
  sliDefinitions,
  type BurnAlertLevel,
  type SliDefinition,
  type SliWindow,
} from './slos.js';

/** Good and bad events of one host in one step. */
export interface StepTraffic {
  readonly good: number;
  readonly bad: number;
}

export interface Host {
  readonly instance: string;
  readonly steps: readonly StepTraffic[];
}

export interface Scenario {
  readonly name: string;
  readonly stepMinutes: number;
  /** The test file (SLO_TEST_FILES) it is written to; one promtool run each, so each stays quick. */
  readonly file: SloTestFile;
  readonly hosts: readonly Host[];
  /** Step indices at which alerts are checked. */
  readonly checks: readonly number[];
  /** Human-readable shape of the traffic, for the test's comment. */
  readonly story: string;
}

/* ------------------------------------------------------------------ the model */

const WINDOW_MINUTES: Record<SliWindow | '30d', number> = {
  '5m': 5, '30m': 30, '1h': 60, '2h': 120, '6h': 360, '1d': 1440, '3d': 4320, '30d': PERIOD_DAYS * 1440,
};

const RELATIVE_MARGIN = 1e-9;

function cumulative(values: readonly number[]): number[] {
  const sums = [0];
  let total = 0;
  for (const value of values) {
    total += value;
    sums.push(total);
  }
  return sums;
}

/** One host's events as sample-indexed totals: sample k is taken at k steps (sample 0 is all zeros). */
class HostModel {
  private readonly good: number[];
  private readonly bad: number[];

  constructor(
    readonly host: Host,
    private readonly stepMinutes: number,
  ) {
    this.good = cumulative(host.steps.map((step) => step.good));
    this.bad = cumulative(host.steps.map((step) => step.bad));
  }

  get samples(): number {
    return this.good.length;
  }

  /** [bad, total] events in the window ending at sample k, or undefined before two samples. */
  window(k: number, window: SliWindow): [number, number] | undefined {
    if (k < 1) return undefined;
    if (DERIVED_WINDOWS.includes(window)) return this.summed(k, window);
    const from = Math.max(0, k - WINDOW_MINUTES[window] / this.stepMinutes);
    const bad = (this.bad[k] ?? 0) - (this.bad[from] ?? 0);
    const total = bad + (this.good[k] ?? 0) - (this.good[from] ?? 0);
    return [bad, total];
  }

  ratio(k: number, window: SliWindow): number | undefined {
    const counts = this.window(k, window);
    if (counts === undefined || counts[1] <= 0) return undefined;
    return counts[0] / counts[1];
  }

  /**
   * [bad, total] of the 5-minute windows recorded at every step in the window (both ends
   * included, as Prometheus 2 ranges are): the ratio is what summing the recorded 5-minute rates
   * over a long window gives.
   */
  summed(k: number, window: SliWindow | '30d'): [number, number] | undefined {
    const from = Math.max(1, k - WINDOW_MINUTES[window] / this.stepMinutes);
    let bad = 0;
    let total = 0;
    for (let index = from; index <= k; index += 1) {
      const counts = this.window(index, '5m');
      if (counts === undefined) continue;
      bad += counts[0];
      total += counts[1];
    }
    return k < 1 ? undefined : [bad, total];
  }

  /** The 30-day error ratio: bad events over events (summed 5-minute windows). */
  periodRatio(k: number): number | undefined {
    const counts = this.summed(k, '30d');
    return counts === undefined || counts[1] <= 0 ? undefined : counts[0] / counts[1];
  }
}

function refuseNear(value: number, boundary: number, what: string): void {
  if (Math.abs(value - boundary) <= RELATIVE_MARGIN * Math.max(Math.abs(boundary), 1e-12)) {
    throw new Error(`SLO rule tests: ${what} = ${String(value)} sits on its boundary ${String(boundary)}; change the scenario`);
  }
}

interface PairVerdict {
  readonly text: string;
  readonly fires: boolean;
  readonly value: number | undefined;
}

function judgePair(model: HostModel, k: number, sli: SliDefinition, pair: BurnAlertLevel['pairs'][number]): PairVerdict {
  const threshold = burnThreshold(sli.objective, pair.factor);
  const parts: string[] = [];
  let fires = true;
  for (const window of [pair.short, pair.long]) {
    const counts = model.window(k, window);
    const ratio = model.ratio(k, window);
    if (counts === undefined || ratio === undefined) {
      parts.push(`${window} no events`);
      fires = false;
      continue;
    }
    refuseNear(ratio, threshold, `${window} ratio at step ${String(k)}`);
    parts.push(`${window} ${fmt(counts[0])}/${fmt(counts[1])} = ${fmt(ratio)} ${ratio > threshold ? '>' : '<='} ${String(threshold)}`);
    if (ratio <= threshold) fires = false;
  }
  const events = model.window(k, guardWindow(pair))?.[1] ?? 0;
  const enough = events >= sli.objective.minEvents;
  parts.push(`${fmt(events)} events in ${guardWindow(pair)} ${enough ? '>=' : '<'} ${String(sli.objective.minEvents)}`);
  if (!enough) fires = false;
  const shortRatio = model.ratio(k, pair.short);
  const value = fires && shortRatio !== undefined ? shortRatio / errorBudget(sli.objective) : undefined;
  return { text: `${String(pair.factor)}x: ${parts.join(', ')}`, fires, value };
}

export interface LevelVerdict {
  readonly severity: BurnAlertLevel['severity'];
  readonly fires: boolean;
  /** The burn rate the alert reports: the short window of the first pair that fires. */
  readonly value: number | undefined;
  readonly text: string;
}

function judgeLevel(model: HostModel, k: number, sli: SliDefinition, level: BurnAlertLevel): LevelVerdict {
  const verdicts = level.pairs.map((pair) => judgePair(model, k, sli, pair));
  const firing = verdicts.find((verdict) => verdict.fires);
  return {
    severity: level.severity,
    fires: firing !== undefined,
    value: firing?.value,
    text: `${level.severity}: ${verdicts.map((verdict) => verdict.text).join(' | ')} => ${firing === undefined ? 'quiet' : 'fires'}`,
  };
}

/* ------------------------------------------------------------------ Go's number formatting */

function fmt(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toPrecision(4).replace(/\.?0+$/, '');
}

/** Go's `printf "%.1f"`; refuses a value on a rounding tie, where Go and JS may differ. */
export function goFixed1(value: number): string {
  const scaled = value * 10;
  refuseNear(Math.abs(scaled - Math.trunc(scaled)), 0.5, 'a printed burn rate');
  return value.toFixed(1);
}

/** Go's `%.4g` (Prometheus' humanizePercentage prints `%.4g%%` of value x 100). */
export function goG4(value: number): string {
  if (value === 0) return '0';
  const [mantissa = '', exponentText = '0'] = value.toExponential(3).split('e');
  const digits = Math.abs(value) / 10 ** (Number(exponentText) - 3);
  refuseNear(Math.abs(digits - Math.trunc(digits)), 0.5, 'a printed percentage');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 4) {
    const trimmed = mantissa.includes('.') ? mantissa.replace(/\.?0+$/, '') : mantissa;
    const sign = exponent < 0 ? '-' : '+';
    return `${trimmed}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  const fixed = value.toPrecision(4);
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
}

/** PromQL's round(v, 0.0001), computed as Go does. */
export function round4(value: number): number {
  const inverse = 1 / 0.0001;
  const fraction = value * inverse + 0.5 - Math.floor(value * inverse + 0.5);
  refuseNear(Math.min(fraction, 1 - fraction) + 1, 1, 'a rounded value');
  return Math.floor(value * inverse + 0.5) / inverse;
}

/* ------------------------------------------------------------------ input series */

/** The selector as label pairs, when it is only `name="value"` matchers (else no tests can be made). */
export function selectorLabels(selector: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  for (const matcher of selector.split(',').map((part) => part.trim()).filter((part) => part.length > 0)) {
    const match = /^([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"([^"\\]*)"$/.exec(matcher);
    if (match === null) return undefined;
    labels[match[1] ?? ''] = match[2] ?? '';
  }
  return labels;
}

function labelText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([name, value]) => `${name}="${value}"`)
    .join(', ');
}

interface InputSeries {
  readonly series: string;
  readonly values: string;
}

/** promtool's `a+bxn` runs; iterated as promtool does (value += b), so the model sees the same floats. */
function expandingValues(increments: readonly number[]): string {
  const runs: string[] = [];
  let value = 0;
  let index = 0;
  runs.push('0');
  while (index < increments.length) {
    const increment = increments[index] ?? 0;
    let length = 1;
    while (index + length < increments.length && increments[index + length] === increment) length += 1;
    value += increment;
    const start = value;
    for (let step = 1; step < length; step += 1) value += increment;
    runs.push(length === 1 ? String(start) : `${String(start)}+${String(increment)}x${String(length - 1)}`);
    index += length;
  }
  return runs.join(' ');
}

const DIMENSION_VALUE = { provider: 'anthropic', tool: 'terminal' } as const;

function hostLabels(base: Record<string, string>, sli: SliDefinition, host: Host): Record<string, string> {
  return { ...base, instance: host.instance, [sli.dimension]: DIMENSION_VALUE[sli.dimension] };
}

/** The raw counters that make `good` and `bad` events of one SLI on one host. */
function inputSeries(config: MonitoringConfig, base: Record<string, string>, sli: SliDefinition, host: Host): InputSeries[] {
  const labels = hostLabels(base, sli, host);
  const good = host.steps.map((step) => step.good);
  const bad = host.steps.map((step) => step.bad);
  const make = (name: string, extra: Record<string, string>, increments: readonly number[]): InputSeries => ({
    series: `${name}{${labelText({ ...labels, ...extra })}}`,
    values: expandingValues(increments),
  });
  const call = { kind: 'main', model: 'claude-sonnet-4' };
  if (sli.name === 'provider-availability') {
    // Every step one attempt fails and is retried into a success, and every failed logical call
    // spent two retried attempts first: attempts less retried attempts leave the logical calls.
    const retried = bad.map((count) => 1 + 2 * count);
    return [
      make('hermes_api_requests_total', { ...call, outcome: 'success' }, good),
      make('hermes_api_requests_total', { ...call, outcome: 'error' }, bad.map((count, index) => count + (retried[index] ?? 0))),
      make('hermes_api_retries_total', { ...call, reason: 'rate_limit' }, retried),
    ];
  }
  if (sli.name === 'tool-success') {
    // A tenth of the good calls are blocked: decisions, which count as good.
    const blocked = good.map((count) => Math.floor(count / 10));
    return [
      make('hermes_tool_calls_total', { status: 'ok' }, good.map((count, index) => count - (blocked[index] ?? 0))),
      make('hermes_tool_calls_total', { status: 'blocked' }, blocked),
      make('hermes_tool_calls_total', { status: 'error' }, bad),
    ];
  }
  const le = String(config.slos.providerLatency.thresholdSeconds);
  return [
    make('hermes_api_request_duration_seconds_count', { ...call, outcome: 'success' }, good.map((count, index) => count + (bad[index] ?? 0))),
    make('hermes_api_request_duration_seconds_bucket', { ...call, outcome: 'success', le }, good),
  ];
}

/* ------------------------------------------------------------------ scenarios */

const repeat = (count: number, step: StepTraffic): StepTraffic[] => Array.from({ length: count }, () => step);

/** Calls per step that make `factor` x the budget an exact number of bad events where possible. */
function steadyBurn(sli: SliDefinition, factor: number, steps: number): StepTraffic[] {
  const calls = 400;
  const bad = decimal(factor * errorBudget(sli.objective) * calls);
  return repeat(steps, { good: calls - bad, bad });
}

/** Host names of the scenarios; a test of the scenarios' purpose looks them up. */
export const HOSTS = {
  outage: 'hermes-outage',
  blip: 'hermes-blip',
  small: 'hermes-small',
  busy: 'hermes-busy',
  halfBurn: 'hermes-half-burn',
  doubleBurn: 'hermes-double-burn',
  bursty: 'hermes-bursty',
} as const;

/**
 * 20 busy hours at 5-minute steps (1001 calls an hour: one step of 85 calls, three of 84 and
 * eight of 83, one failure an hour; 1001 so no window sits exactly on a 0.999 objective's
 * threshold), then 4 quiet hours with a call every other step, the 6th and 18th failing.
 * True budget left: 1 - (22 / 20044) / (1 - objective).
 */
export function burstyDay(): StepTraffic[] {
  const hour = Array.from({ length: 12 }, (_unused, index) => {
    const calls = index === 0 ? 85 : index < 4 ? 84 : 83;
    return index === 6 ? { good: calls - 1, bad: 1 } : { good: calls, bad: 0 };
  });
  const busy = Array.from({ length: 20 }, () => hour).flat();
  const quiet = Array.from({ length: 48 }, (_unused, index) => {
    if (index % 2 === 0) return { good: 0, bad: 0 };
    const call = (index - 1) / 2 + 1;
    return call === 6 || call === 18 ? { good: 0, bad: 1 } : { good: 1, bad: 0 };
  });
  return [...busy, ...quiet];
}

export const FAST = { healthySteps: 70, outageSteps: 10, afterSteps: 35 } as const;

/**
 * Two scenarios, each a few hosts side by side so one promtool run covers them: a 1-minute one
 * (an outage, a blip, the traffic guard) and a 5-minute one over 12 hours (steady burns).
 */
export function scenarios(sli: SliDefinition): Scenario[] {
  const healthy = { good: 25, bad: 0 };
  const idle = { good: 0, bad: 0 };
  const { healthySteps, outageSteps, afterSteps } = FAST;
  const outage: Host[] = [
    { instance: HOSTS.outage, steps: [...repeat(healthySteps, healthy), ...repeat(outageSteps, { good: 0, bad: 24 }), ...repeat(afterSteps, healthy)] },
  ];
  const blipAt = 70;
  const quiet: Host[] = [
    { instance: HOSTS.blip, steps: [...repeat(blipAt, healthy), { good: 18, bad: 2 }, ...repeat(40, healthy)] },
    // One bad call among three, and a busy host failing a third of its calls: only the busy one may alert.
    { instance: HOSTS.small, steps: [{ good: 1, bad: 0 }, { good: 0, bad: 1 }, { good: 1, bad: 0 }, ...repeat(108, idle)] },
    { instance: HOSTS.busy, steps: [...repeat(10, { good: 20, bad: 10 }), ...repeat(101, idle)] },
  ];
  const steadySteps = 720 / 5;
  const steady: Host[] = [
    { instance: HOSTS.halfBurn, steps: steadyBurn(sli, 0.5, steadySteps) },
    { instance: HOSTS.doubleBurn, steps: steadyBurn(sli, 2, steadySteps) },
  ];
  const blipChecks = [1, 3, 5, 30].map((after) => blipAt + after);
  const bursty: Host[] = [{ instance: HOSTS.bursty, steps: burstyDay() }];
  return [
    {
      name: 'a total outage after healthy traffic',
      stepMinutes: 1,
      file: 'outage',
      hosts: outage,
      checks: interestingSteps(sli, 1, outage),
      story: `${HOSTS.outage}: ${String(healthySteps)} min of 25 good calls a minute, ${String(outageSteps)} min where every call fails (24 a minute), then healthy again`,
    },
    {
      name: 'a blip and the traffic guard',
      stepMinutes: 1,
      file: 'quiet',
      hosts: quiet,
      checks: [...new Set([2, 3, 5, ...blipChecks, ...interestingSteps(sli, 1, quiet)])].sort((a, b) => a - b),
      story: [
        `${HOSTS.blip}: ${String(blipAt)} min of 25 good calls a minute, then one minute where 2 of 20 calls fail (10 %), then healthy again`,
        `${HOSTS.small}: three calls in the first three minutes, the second fails (the traffic guard keeps it quiet)`,
        `${HOSTS.busy}: a third of 30 calls a minute fail for 10 minutes (the same share, with traffic)`,
      ].join('\n '),
    },
    {
      name: 'steady burns for 12 hours',
      stepMinutes: 5,
      file: 'steady',
      hosts: steady,
      checks: [...new Set([1, 12, 72, ...interestingSteps(sli, 5, steady)])].sort((a, b) => a - b),
      story: [
        `${HOSTS.halfBurn}: 400 calls every 5 min, 0.5 x (1 - objective) of them failing`,
        `${HOSTS.doubleBurn}: 400 calls every 5 min, 2 x (1 - objective) of them failing`,
      ].join('\n '),
    },
    // The period ratio is the same PromQL for every SLO: one SLO's day keeps promtool quick.
    ...(sli.name !== 'provider-availability' ? [] : [{
      name: 'bursty traffic over a day',
      stepMinutes: 5,
      file: 'bursty' as const,
      hosts: bursty,
      checks: [...new Set([1, ...interestingSteps(sli, 5, bursty)])].sort((a, b) => a - b),
      story: `${HOSTS.bursty}: 20 h busy (1001 calls an hour, one failing), then 4 h quiet (one call every 10 minutes, 2 of the 24 failing)`,
    }]),
  ];
}

/** Steps where some level starts or stops firing, with the step before each, and the last step. */
function interestingSteps(sli: SliDefinition, stepMinutes: number, hosts: readonly Host[]): number[] {
  const steps = new Set<number>();
  for (const host of hosts) {
    const model = new HostModel(host, stepMinutes);
    for (const level of BURN_ALERTS) {
      let previous = false;
      for (let k = 0; k < model.samples; k += 1) {
        const fires = judgeLevel(model, k, sli, level).fires;
        if (fires !== previous) {
          if (k > 0) steps.add(k - 1);
          steps.add(k);
        }
        previous = fires;
      }
    }
    steps.add(model.samples - 1);
  }
  return [...steps].sort((a, b) => a - b);
}

/** What a scenario does over every step (for tests of the scenarios' purpose). */
export interface Timeline {
  readonly instance: string;
  /** Steps (from 0) at which each severity fires. */
  readonly firing: Readonly<Record<string, readonly number[]>>;
}

export function simulate(sli: SliDefinition, scenario: Scenario): Timeline[] {
  return scenario.hosts.map((host) => {
    const model = new HostModel(host, scenario.stepMinutes);
    const firing: Record<string, number[]> = {};
    for (const level of BURN_ALERTS) {
      firing[level.severity] = [];
      for (let k = 0; k < model.samples; k += 1) if (judgeLevel(model, k, sli, level).fires) firing[level.severity]?.push(k);
    }
    return { instance: host.instance, firing };
  });
}

/* ------------------------------------------------------------------ the test file */

interface Commented {
  readonly comment: string;
}

function renderLabels(template: string, labels: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{ \$labels\.([a-z_]+) \}\}/g, (_all, name: string) => labels[name] ?? '');
}

function alertChecks(config: MonitoringConfig, base: Record<string, string>, sli: SliDefinition, scenario: Scenario): (Commented & Record<string, unknown>)[] {
  const models = scenario.hosts.map((host) => new HostModel(host, scenario.stepMinutes));
  const budget = errorBudget(sli.objective);
  const percent = String(Number((sli.objective.objective * 100).toPrecision(12)));
  return scenario.checks.map((k) => {
    const lines: string[] = [];
    const expected: Record<string, unknown>[] = [];
    for (const model of models) {
      const labels = hostLabels(base, sli, model.host);
      for (const level of BURN_ALERTS) {
        const verdict = judgeLevel(model, k, sli, level);
        lines.push(`${model.host.instance} ${verdict.text}`);
        if (!verdict.fires || verdict.value === undefined) continue;
        const period = model.periodRatio(k);
        const left = period === undefined ? 'an unknown share' : `${goG4((1 - period / budget) * 100)}%`;
        if (period !== undefined) lines.push(`  budget left: 1 - (30-day ratio ${fmt(period)}) / ${String(budget)} = ${left}`);
        expected.push({
          exp_labels: { severity: level.severity, sloth_severity: slothSeverity(level.severity), ...labels, sloth_id: slothId(sli), sloth_service: SLO_SERVICE, sloth_slo: sli.name },
          exp_annotations: {
            summary: sli.summary,
            description: `${renderLabels(sli.subject, labels)}: the error budget burns ${goFixed1(verdict.value)} times as fast as the ${percent} % objective allows; ${left} of the ${String(PERIOD_DAYS)}-day budget is left.`,
            runbook_url: `${config.runbookBase}#${sli.alert.toLowerCase()}`,
          },
        });
      }
    }
    return {
      comment: ` ${sli.alert} at t = ${String(k * scenario.stepMinutes)} min:\n ${lines.join('\n ')}`,
      eval_time: `${String(k * scenario.stepMinutes)}m`,
      alertname: sli.alert,
      exp_alerts: expected,
    };
  });
}

function budgetCheck(base: Record<string, string>, sli: SliDefinition, scenario: Scenario): Commented & Record<string, unknown> {
  const models = scenario.hosts.map((host) => new HostModel(host, scenario.stepMinutes));
  const k = Math.max(...models.map((model) => model.samples - 1));
  const budget = errorBudget(sli.objective);
  const lines: string[] = [];
  const samples = models.flatMap((model) => {
    const period = model.periodRatio(k);
    if (period === undefined) return [];
    const left = round4(1 - period / budget);
    const counts = model.summed(k, '30d') ?? [0, 0];
    lines.push(`${model.host.instance}: 1 - (${fmt(counts[0])} / ${fmt(counts[1])} = ${fmt(period)}) / ${String(budget)} = ${String(left)} (rounded to 0.0001)`);
    const labels = { ...hostLabels(base, sli, model.host), sloth_id: slothId(sli), sloth_slo: sli.name, sloth_window: '30d' };
    return [{ labels: `{${labelText(labels)}}`, value: left }];
  });
  return {
    comment: ` t = ${String(k * scenario.stepMinutes)} min, budget left:\n ${lines.join('\n ')}`,
    // Per host: the fleet aggregate (with sloth_service) is left out.
    expr: `round(${SLO_RECORDS.budgetRemaining}{sloth_id="${slothId(sli)}", sloth_service=""}, 0.0001)`,
    eval_time: `${String(k * scenario.stepMinutes)}m`,
    exp_samples: samples,
  };
}

function metaCheck(sli: SliDefinition): Commented & Record<string, unknown> {
  const labels = `{sloth_id="${slothId(sli)}", sloth_service="${SLO_SERVICE}", sloth_slo="${sli.name}"}`;
  return {
    comment: ` objective ${String(sli.objective.objective)}, error budget 1 - objective = ${String(errorBudget(sli.objective))}`,
    expr: `${SLO_RECORDS.objective}{sloth_id="${slothId(sli)}"} + ${SLO_RECORDS.errorBudget}{sloth_id="${slothId(sli)}"}`,
    eval_time: '1m',
    exp_samples: [{ labels, value: 1 }],
  };
}

interface TestGroup extends Commented {
  readonly name: string;
  readonly interval: string;
  readonly input_series: InputSeries[];
  readonly alert_rule_test: (Commented & Record<string, unknown>)[];
  readonly promql_expr_test: (Commented & Record<string, unknown>)[];
}

function testGroups(config: MonitoringConfig, base: Record<string, string>, file: SloTestFile, stepMinutes: number): TestGroup[] {
  const slis = sliDefinitions(config);
  const perSli = slis.map((sli) => ({ sli, scenarios: scenarios(sli).filter((scenario) => scenario.file === file) }));
  const count = perSli[0]?.scenarios.length ?? 0;
  return Array.from({ length: count }, (_unused, index) => {
    const parts = perSli.flatMap(({ sli, scenarios: list }) => {
      const scenario = list[index];
      return scenario === undefined ? [] : [{ sli, scenario }];
    });
    const first = parts[0]?.scenario;
    const rates = BURN_ALERTS.map((level) => `${level.severity === 'critical' ? 'page' : 'ticket'} on ${level.pairs.map((pair) => `${String(pair.factor)}x over ${pair.long} and ${pair.short}`).join(' or ')}`).join('; ');
    const budgets = parts.map(({ sli }) => `${sli.name} x = ${String(errorBudget(sli.objective))} (1 - ${String(sli.objective.objective)}), guard ${String(sli.objective.minEvents)} events`).join('; ');
    return {
      comment: ` ${first?.name ?? ''}, for every SLO:\n ${first?.story ?? ''}\n ${rates};\n ${budgets}.`,
      name: first?.name ?? '',
      interval: `${String(stepMinutes)}m`,
      input_series: parts.flatMap(({ sli, scenario }) => scenario.hosts.flatMap((host) => inputSeries(config, base, sli, host))),
      alert_rule_test: parts.flatMap(({ sli, scenario }) => alertChecks(config, base, sli, scenario)),
      promql_expr_test: parts.flatMap(({ sli, scenario }) => [...(index === 0 ? [metaCheck(sli)] : []), budgetCheck(base, sli, scenario)]),
    };
  });
}

function stripComments(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripComments);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([key]) => key !== 'comment').map(([key, entry]) => [key, stripComments(entry)]));
  }
  return value;
}

/** Puts each `comment` field above its YAML node, where promtool ignores it. */
function attachComments(node: Node | null | undefined, value: unknown): void {
  if (Array.isArray(value) && isSeq(node)) {
    value.forEach((entry, index) => {
      const item = node.items[index] as Node | undefined;
      if (entry !== null && typeof entry === 'object' && 'comment' in entry && item !== undefined) item.commentBefore = String((entry as Commented).comment);
      attachComments(item, entry);
    });
  } else if (value !== null && typeof value === 'object' && isMap(node)) {
    for (const [key, entry] of Object.entries(value as Record<string, unknown>)) attachComments(node.get(key, true), entry);
  }
}

export const SLO_TEST_FILES = {
  outage: 'rules/tests/hermes-slos-outage.yml',
  quiet: 'rules/tests/hermes-slos-quiet.yml',
  steady: 'rules/tests/hermes-slos-steady.yml',
  bursty: 'rules/tests/hermes-slos-bursty.yml',
} as const;
export type SloTestFile = keyof typeof SLO_TEST_FILES;
const FILE_STEP_MINUTES: Record<SloTestFile, number> = { outage: 1, quiet: 1, steady: 5, bursty: 5 };

function testFile(config: MonitoringConfig, base: Record<string, string>, file: SloTestFile, header: string): string {
  const stepMinutes = FILE_STEP_MINUTES[file];
  const groups = testGroups(config, base, file, stepMinutes);
  const value = {
    rule_files: ['../hermes-slo-recording.yml', '../hermes-slo-alerts.yml'],
    evaluation_interval: `${String(stepMinutes)}m`,
    // Recording groups before alert groups, SLI before meta: every alert reads this step's series.
    group_eval_order: sliDefinitions(config).flatMap((sli) => [`hermes-slo-sli-recordings-${sli.name}`, `hermes-slo-long-windows-${sli.name}`, `hermes-slo-meta-recordings-${sli.name}`]).concat(sliDefinitions(config).map((sli) => `hermes-slo-alerts-${sli.name}`)),
    tests: groups,
  };
  const doc = new Document(stripComments(value));
  doc.commentBefore = ` ${GENERATED_NOTICE}\n promtool test rules rules/tests/*.yml\n\n${header}`;
  attachComments(doc.get('tests', true) as Node | undefined, groups);
  return doc.toString({ lineWidth: 0, indentSeq: true });
}

export function sloRuleTestFiles(config: MonitoringConfig): { path: string; contents: string }[] {
  const base = selectorLabels(config.selector);
  // A selector with regex or negative matchers names no series a test could create.
  if (base === undefined) return [];
  return [
    { path: SLO_TEST_FILES.outage, contents: testFile(config, base, 'outage', ' SLO burn-rate alerts at a 1-minute step: a total outage after healthy traffic.') },
    { path: SLO_TEST_FILES.quiet, contents: testFile(config, base, 'quiet', ' SLO burn-rate alerts at a 1-minute step: a blip and the traffic guard.') },
    { path: SLO_TEST_FILES.steady, contents: testFile(config, base, 'steady', ' SLO burn-rate alerts at a 5-minute step over 12 hours: steady burns below and above the budget.') },
    {
      path: SLO_TEST_FILES.bursty,
      contents: testFile(config, base, 'bursty', ' The 30-day budget on bursty traffic at a 5-minute step: errors over events, not a mean of 5-minute ratios.'),
    },
  ];
}
