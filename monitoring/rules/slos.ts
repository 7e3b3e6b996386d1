/**
 * Service level objectives with sloth's series names and labels (sloth.dev, `prometheus/v1`
 * specs), and multi-window, multi-burn-rate alerts after the Google SRE workbook (alerting on
 * SLOs): page on 14.4x over 1 h (checked over 5 m) or 6x over 6 h (30 m), ticket on 3x over
 * 1 d (2 h) or 1x over 3 d (6 h), against a 30-day window.
 *
 * Each SLO is kept per provider (or per tool) and per sidecar: sums keep every label but the ones
 * listed, so `job`, `instance` and target labels survive. Those per-host series carry `sloth_id`,
 * `sloth_slo` and `sloth_window` but no `sloth_service`; one fleet aggregate per SLO carries
 * `sloth_service` too, so sloth's Grafana dashboard (grafana.com 14348), which selects by
 * `sloth_service` and `sloth_slo`, reads exactly one series per SLO (test/deploy/sloth-dashboard.deploy.ts).
 *
 * Every ratio over more than 6 hours, and the 30-day budget, is errors over events: the sum over
 * the window of the recorded 5-minute error rate divided by the sum of the recorded 5-minute
 * event rate. Each event is counted with the same weight whatever the traffic around it (a mean
 * of ratios would weigh a quiet hour's single failure like a busy hour's thousand), and the
 * raw counters are read over 5 minutes to 6 hours only.
 *
 * A traffic guard: a burn only alerts when its window holds at least `minEvents` events (the
 * 1 h window for the 1 h pair, the 6 h window for every other pair), so three calls with one
 * failure do not page or ticket.
 *
 * Derived series divide by the error budget as a number (known when the rules are built)
 * rather than by the `slo:error_budget:ratio` series, which carries no `job` label for the
 * selector to match.
 */
import type { MonitoringConfig, SloObjective } from '../config.js';
import { lines, series } from '../promql.js';
import { runbookUrl } from './runbook.js';
import type { AlertingRule, RecordingRule, RuleGroup, Severity } from './types.js';

export const SLO_SERVICE = 'hermes';
export const PERIOD_DAYS = 30;
/** Windows of `slo:sli_error:ratio_rate<window>`, per host and for the fleet. */
export const SLI_WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'] as const;
export type SliWindow = (typeof SLI_WINDOWS)[number];
/** Windows read from the raw counters; longer ones sum the recorded 5-minute rates. */
export const RAW_WINDOWS: readonly SliWindow[] = ['5m', '30m', '1h', '2h', '6h'];
/** Windows summed from the recorded 5-minute rates (with the 30-day period). */
export const DERIVED_WINDOWS: readonly (SliWindow | '30d')[] = ['1d', '3d', '30d'];
/** Evaluation interval of the groups that sum days of recorded samples: a minute changes nothing a day-long window can show. */
export const LONG_WINDOW_INTERVAL = '1m';

export const SLO_RECORDS = {
  sliError: (window: SliWindow | '30d') => `slo:sli_error:ratio_rate${window}`,
  events: (window: SliWindow) => `slo:sli_events:increase${window}`,
  /** Bad events per second over 5 minutes (0 with traffic and no failure). */
  errorRate: 'slo:sli_error_events:rate5m',
  /** Events per second over 5 minutes. */
  eventRate: 'slo:sli_events:rate5m',
  objective: 'slo:objective:ratio',
  errorBudget: 'slo:error_budget:ratio',
  timePeriod: 'slo:time_period:days',
  currentBurnRate: 'slo:current_burn_rate:ratio',
  periodBurnRate: 'slo:period_burn_rate:ratio',
  budgetRemaining: 'slo:period_error_budget_remaining:ratio',
  info: 'sloth_slo_info',
} as const;

export interface BurnWindowPair {
  readonly long: SliWindow;
  readonly short: SliWindow;
  /** Multiple of the sustainable error rate (the error budget spread over 30 days). */
  readonly factor: number;
}

export interface BurnAlertLevel {
  readonly severity: Severity;
  readonly pairs: readonly [BurnWindowPair, BurnWindowPair];
}

/** The workbook's table: 2 % of the budget in 1 h or 5 % in 6 h pages; 10 % in 1 d or 3 d tickets. */
export const BURN_ALERTS: readonly BurnAlertLevel[] = [
  { severity: 'critical', pairs: [{ long: '1h', short: '5m', factor: 14.4 }, { long: '6h', short: '30m', factor: 6 }] },
  { severity: 'warning', pairs: [{ long: '1d', short: '2h', factor: 3 }, { long: '3d', short: '6h', factor: 1 }] },
];

/** Rounds away binary noise such as 1 - 0.995 = 0.0050000000000000044. */
export function decimal(value: number): number {
  return Number(value.toPrecision(12));
}

export function errorBudget(slo: SloObjective): number {
  return decimal(1 - slo.objective);
}

/** The error ratio above which a pair's windows burn at `factor` times the sustainable rate. */
export function burnThreshold(slo: SloObjective, factor: number): number {
  return decimal(factor * errorBudget(slo));
}

/** What one SLO counts, as PromQL over a window. */
export interface SliDefinition {
  /** sloth_slo */
  readonly name: string;
  readonly alert: string;
  /** The label the SLO is kept per (besides job, instance and target labels). */
  readonly dimension: 'provider' | 'tool';
  readonly objective: SloObjective;
  /** Bad events per second (`rate`) or in the window (`increase`). */
  readonly errors: (fn: 'rate' | 'increase', window: string) => string;
  readonly total: (fn: 'rate' | 'increase', window: string) => string;
  readonly comment: string;
  readonly summary: string;
  /** Start of the description: what fails, for whom. */
  readonly subject: string;
}

export function slothId(sli: Pick<SliDefinition, 'name'>): string {
  return `${SLO_SERVICE}-${sli.name}`;
}

/** `a - (b or a * 0)`, never below 0: b may be absent, and windows may disagree by a sample. */
function minus(a: string, b: string): string {
  return `clamp_min(${a} - (${b} or ${a} * 0), 0)`;
}

function providerAvailability({ selector, slos }: MonitoringConfig): SliDefinition {
  const attempts = (fn: string, window: string, ...matchers: string[]) =>
    `sum without (kind, model, outcome) (${fn}(${series('hermes_api_requests_total', selector, ...matchers)}[${window}]))`;
  const retried = (fn: string, window: string) =>
    `sum without (kind, model, reason) (${fn}(${series('hermes_api_retries_total', selector)}[${window}]))`;
  return {
    name: 'provider-availability',
    alert: 'HermesApiAvailabilityBudgetBurn',
    dimension: 'provider',
    objective: slos.providerAvailability,
    // A logical call is its attempts less the ones Hermes retried; it failed when its last
    // attempt failed. An attempt without retry fields counts as final: it pages rather than hides.
    errors: (fn, window) => minus(attempts(fn, window, 'outcome="error"'), retried(fn, window)),
    total: (fn, window) => minus(attempts(fn, window), retried(fn, window)),
    comment: 'logical provider calls that failed (attempts less retried attempts)',
    summary: 'Provider calls burn their error budget.',
    subject: 'Logical {{ $labels.provider }} calls from {{ $labels.instance }} fail',
  };
}

function toolSuccess({ selector, slos }: MonitoringConfig): SliDefinition {
  const calls = (fn: string, window: string, ...matchers: string[]) =>
    `sum without (status) (${fn}(${series('hermes_tool_calls_total', selector, ...matchers)}[${window}]))`;
  return {
    name: 'tool-success',
    alert: 'HermesToolSuccessBudgetBurn',
    dimension: 'tool',
    objective: slos.toolSuccess,
    errors: (fn, window) => calls(fn, window, 'status=~"error|timeout"'),
    total: (fn, window) => calls(fn, window),
    comment: 'tool calls that ended in error or timeout (blocked and cancelled are decisions, not failures)',
    summary: 'Tool calls burn their error budget.',
    subject: '{{ $labels.tool }} tool calls on {{ $labels.instance }} fail',
  };
}

function providerLatency({ selector, slos }: MonitoringConfig): SliDefinition {
  const slo = slos.providerLatency;
  const successful = (fn: string, window: string) =>
    `sum without (kind, model, outcome) (${fn}(${series('hermes_api_request_duration_seconds_count', selector, 'outcome="success"')}[${window}]))`;
  const fast = (fn: string, window: string) =>
    `sum without (kind, model, outcome, le) (${fn}(${series('hermes_api_request_duration_seconds_bucket', selector, 'outcome="success"', `le="${String(slo.thresholdSeconds)}"`)}[${window}]))`;
  return {
    name: 'provider-latency',
    alert: 'HermesApiLatencyBudgetBurn',
    dimension: 'provider',
    objective: slo,
    errors: (fn, window) => minus(successful(fn, window), fast(fn, window)),
    total: successful,
    comment: `successful provider calls slower than ${String(slo.thresholdSeconds)} s (Hermes times a call from its first attempt)`,
    summary: 'Provider calls are slow often enough to burn their latency budget.',
    subject: `Successful {{ $labels.provider }} calls from {{ $labels.instance }} take longer than ${String(slo.thresholdSeconds)} s`,
  };
}

/**
 * The SLOs of a bundle. The latency SLO reads one classic bucket (`le`); its native form needs
 * `histogram_fraction()`, which Prometheus 2.42 lacks, so a native bundle has no latency SLO.
 */
export function sliDefinitions(config: MonitoringConfig): SliDefinition[] {
  const slis = [providerAvailability(config), toolSuccess(config)];
  return config.histograms === 'classic' ? [...slis, providerLatency(config)] : slis;
}

/** Labels of a per-host series; `fleet` adds `sloth_service`, which only the fleet aggregates carry. */
function slothLabels(sli: SliDefinition, window?: string, fleet = true): Record<string, string> {
  const labels: Record<string, string> = fleet
    ? { sloth_id: slothId(sli), sloth_service: SLO_SERVICE, sloth_slo: sli.name }
    : { sloth_id: slothId(sli), sloth_slo: sli.name };
  if (window !== undefined) labels.sloth_window = window;
  return labels;
}

/** A recorded per-host SLO series (no `sloth_service`), selected like every series the bundle reads. */
export function sloSeries(selector: string, record: string, sli: Pick<SliDefinition, 'name'>): string {
  return series(record, selector, `sloth_id="${slothId(sli)}"`, 'sloth_service=""');
}

/** The fleet aggregate of a recorded SLO series. */
export function fleetSloSeries(selector: string, record: string, sli: Pick<SliDefinition, 'name'>): string {
  return series(record, selector, `sloth_id="${slothId(sli)}"`, `sloth_service="${SLO_SERVICE}"`);
}

/** Label names the selector matches on: the fleet aggregates keep them, so the selector still finds them. */
export function selectorLabelNames(selector: string): string[] {
  return [...selector.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"/g)].map((match) => match[1] ?? '').filter((name) => name.length > 0);
}

/** The event count of the window that guards a pair: the 1 h window for the 1 h pair, the 6 h window for the others. */
export function guardWindow(pair: BurnWindowPair): SliWindow {
  return pair.long === '1h' ? '1h' : '6h';
}

const GUARD_WINDOWS: readonly SliWindow[] = [...new Set(BURN_ALERTS.flatMap((level) => level.pairs.map(guardWindow)))];

/** `errors / (events > 0)` over a derived window: sums of the recorded 5-minute rates. */
function summedRatio(errors: string, events: string, window: string): string {
  return lines(`sum_over_time(${errors}[${window}])`, '/', `(sum_over_time(${events}[${window}]) > 0)`);
}

function sliRecordings(sli: SliDefinition, selector: string): RuleGroup<RecordingRule> {
  const perHost = (window?: string) => slothLabels(sli, window, false);
  const rawRatio = (window: SliWindow): RecordingRule => ({
    record: SLO_RECORDS.sliError(window),
    expr:
      window === '5m'
        ? lines(sloSeries(selector, SLO_RECORDS.errorRate, sli), '/', `(${sloSeries(selector, SLO_RECORDS.eventRate, sli)} > 0)`)
        : lines(`(${sli.errors('rate', window)} or ${sli.total('rate', window)} * 0)`, '/', `(${sli.total('rate', window)} > 0)`),
    labels: perHost(window),
    comment: `Share of ${sli.comment} over ${window}; absent while there is no traffic.`,
  });
  const events = (window: SliWindow): RecordingRule => ({
    record: SLO_RECORDS.events(window),
    expr: sli.total('increase', window),
    labels: perHost(window),
    comment: `Events the ${sli.name} SLO counted over ${window}: the traffic guard of the alerts it guards.`,
  });
  const kept = ['sloth_id', 'sloth_slo', 'sloth_window', ...selectorLabelNames(selector)];
  const fleet = (record: string, what: string): RecordingRule => ({
    record,
    expr: `sum by (${[...new Set(kept)].join(', ')}) (${sloSeries(selector, record, sli)})`,
    labels: slothLabels(sli, '5m'),
    comment: `${what} of every host and ${sli.dimension} together: the ${sli.name} SLO of the fleet.`,
  });
  return {
    name: `hermes-slo-sli-recordings-${sli.name}`,
    rules: [
      {
        record: SLO_RECORDS.errorRate,
        expr: `${sli.errors('rate', '5m')} or ${sli.total('rate', '5m')} * 0`,
        labels: perHost('5m'),
        comment: `${sli.comment} per second over 5 minutes; 0 with traffic and no failure. The long windows sum it.`,
      },
      {
        record: SLO_RECORDS.eventRate,
        expr: sli.total('rate', '5m'),
        labels: perHost('5m'),
        comment: `Events of the ${sli.name} SLO per second over 5 minutes. The long windows sum it.`,
      },
      ...RAW_WINDOWS.map(rawRatio),
      ...GUARD_WINDOWS.map(events),
      fleet(SLO_RECORDS.errorRate, 'Bad events per second'),
      fleet(SLO_RECORDS.eventRate, 'Events per second'),
      {
        record: SLO_RECORDS.sliError('5m'),
        expr: lines(fleetSloSeries(selector, SLO_RECORDS.errorRate, sli), '/', `(${fleetSloSeries(selector, SLO_RECORDS.eventRate, sli)} > 0)`),
        labels: slothLabels(sli, '5m'),
        comment: `Share of ${sli.comment} over 5m, fleet-wide.`,
      },
    ],
  };
}

/** Ratios over 30 minutes to 30 days summed from the 5-minute rates: every host's over 1 d, 3 d and 30 d, the fleet's over every window. */
function longWindowRecordings(sli: SliDefinition, selector: string): RuleGroup<RecordingRule> {
  const hostRatio = (window: SliWindow | '30d'): RecordingRule => ({
    record: SLO_RECORDS.sliError(window),
    expr: summedRatio(sloSeries(selector, SLO_RECORDS.errorRate, sli), sloSeries(selector, SLO_RECORDS.eventRate, sli), window),
    labels: slothLabels(sli, window, false),
    comment: `Share of ${sli.comment} over ${window}: bad events over events, summed from the 5-minute rates.`,
  });
  const fleetRatio = (window: SliWindow | '30d'): RecordingRule => ({
    record: SLO_RECORDS.sliError(window),
    expr: summedRatio(fleetSloSeries(selector, SLO_RECORDS.errorRate, sli), fleetSloSeries(selector, SLO_RECORDS.eventRate, sli), window),
    labels: slothLabels(sli, window),
    comment: `Share of ${sli.comment} over ${window}, fleet-wide, summed from the 5-minute rates.`,
  });
  const fleetWindows = [...SLI_WINDOWS.filter((window) => window !== '5m'), '30d' as const];
  return {
    name: `hermes-slo-long-windows-${sli.name}`,
    interval: LONG_WINDOW_INTERVAL,
    rules: [...DERIVED_WINDOWS.map(hostRatio), ...fleetWindows.map(fleetRatio)],
  };
}

/** Per host and for the fleet: the current and period burn rates and the budget left. */
function metaRecordings(sli: SliDefinition, selector: string): RuleGroup<RecordingRule> {
  const budget = errorBudget(sli.objective);
  // Both the per-host series and the fleet aggregate: the output keeps whichever labels each has.
  const both = (record: string) => series(record, selector, `sloth_id="${slothId(sli)}"`);
  const derived = { sloth_id: slothId(sli), sloth_slo: sli.name };
  return {
    name: `hermes-slo-meta-recordings-${sli.name}`,
    rules: [
      { record: SLO_RECORDS.objective, expr: `vector(${String(sli.objective.objective)})`, labels: slothLabels(sli), comment: `Objective of the ${sli.name} SLO.` },
      { record: SLO_RECORDS.errorBudget, expr: `vector(${String(budget)})`, labels: slothLabels(sli), comment: `Error budget of the ${sli.name} SLO (1 - objective).` },
      { record: SLO_RECORDS.timePeriod, expr: `vector(${PERIOD_DAYS})`, labels: slothLabels(sli), comment: `Period of the ${sli.name} SLO in days.` },
      {
        record: SLO_RECORDS.currentBurnRate,
        expr: `${both(SLO_RECORDS.sliError('5m'))} / ${String(budget)}`,
        labels: derived,
        comment: 'Burn rate over the last 5 minutes, per host and for the fleet: 1 spends exactly the budget over the period.',
      },
      {
        record: SLO_RECORDS.periodBurnRate,
        expr: `${both(SLO_RECORDS.sliError('30d'))} / ${String(budget)}`,
        labels: derived,
        comment: `Burn rate over the ${PERIOD_DAYS}-day period, per host and for the fleet.`,
      },
      {
        record: SLO_RECORDS.budgetRemaining,
        expr: `1 - ${both(SLO_RECORDS.periodBurnRate)}`,
        labels: derived,
        comment: `Share of the ${PERIOD_DAYS}-day error budget left (negative once overspent), per host and for the fleet.`,
      },
      {
        record: SLO_RECORDS.info,
        expr: 'vector(1)',
        labels: { ...slothLabels(sli), sloth_objective: String(decimal(sli.objective.objective * 100)) },
        comment: `The ${sli.name} SLO exists (sloth's info series).`,
      },
    ],
  };
}

export function sloRecordingGroups(config: MonitoringConfig): RuleGroup<RecordingRule>[] {
  return sliDefinitions(config).flatMap((sli) => [
    sliRecordings(sli, config.selector),
    longWindowRecordings(sli, config.selector),
    metaRecordings(sli, config.selector),
  ]);
}

/** One window of a pair: the ratio above the threshold, sloth_window dropped so windows meet. */
function windowAbove(selector: string, sli: SliDefinition, window: SliWindow, threshold: number): string {
  return `max(${sloSeries(selector, SLO_RECORDS.sliError(window), sli)} > ${String(threshold)}) without (sloth_window)`;
}

function guard(selector: string, sli: SliDefinition, window: SliWindow): string {
  return `max(${sloSeries(selector, SLO_RECORDS.events(window), sli)} >= ${String(sli.objective.minEvents)}) without (sloth_window)`;
}

/** Both windows of a pair burn and the guard window holds enough events; the value is the short window's burn rate. */
function pairExpr(selector: string, sli: SliDefinition, pair: BurnWindowPair): string {
  const threshold = burnThreshold(sli.objective, pair.factor);
  return lines(
    '(',
    `  ${windowAbove(selector, sli, pair.short, threshold)} / ${String(errorBudget(sli.objective))}`,
    '  and',
    `  ${windowAbove(selector, sli, pair.long, threshold)}`,
    '  and',
    `  ${guard(selector, sli, guardWindow(pair))}`,
    ')',
  );
}

/** Go template that prints the SLO's budget left for the alert's series, as a percentage. */
function budgetLeftTemplate(sli: SliDefinition): string {
  const query = `${SLO_RECORDS.budgetRemaining}{sloth_id=%q, job=%q, instance=%q, ${sli.dimension}=%q}`;
  return `{{ with printf "${query}" "${slothId(sli)}" $labels.job $labels.instance $labels.${sli.dimension} | query }}{{ . | first | value | humanizePercentage }}{{ else }}an unknown share{{ end }}`;
}

/** sloth's severity label: its dashboard's page and ticket stats select on it. */
export function slothSeverity(severity: Severity): 'page' | 'ticket' {
  return severity === 'critical' ? 'page' : 'ticket';
}

function burnAlert(config: MonitoringConfig, sli: SliDefinition, level: BurnAlertLevel): AlertingRule {
  const [first, second] = level.pairs;
  const percent = String(decimal(sli.objective.objective * 100));
  return {
    alert: sli.alert,
    expr: lines(pairExpr(config.selector, sli, first), 'or', pairExpr(config.selector, sli, second)),
    // The windows are the delay: a `for` would only add to the workbook's detection times.
    for: '0m',
    labels: { severity: level.severity, sloth_severity: slothSeverity(level.severity), sloth_service: SLO_SERVICE },
    annotations: {
      summary: sli.summary,
      description: `${sli.subject}: the error budget burns {{ printf "%.1f" $value }} times as fast as the ${percent} % objective allows; ${budgetLeftTemplate(sli)} of the ${PERIOD_DAYS}-day budget is left.`,
      runbook_url: runbookUrl(config.runbookBase, sli.alert),
    },
  };
}

export function sloAlertGroups(config: MonitoringConfig): RuleGroup<AlertingRule>[] {
  return sliDefinitions(config).map((sli) => ({
    name: `hermes-slo-alerts-${sli.name}`,
    rules: BURN_ALERTS.map((level) => burnAlert(config, sli, level)),
  }));
}
