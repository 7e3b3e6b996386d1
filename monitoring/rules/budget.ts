/**
 * The monthly spend budget (`thresholds.monthlyBudgetUsd`; no rules at all when unset): spend
 * so far this calendar month, the recent rate projected to the month's end, and a warning when
 * the projection crosses the budget.
 *
 * Month-to-date spend cannot be `increase(cost[...])`: the range would have to start at the
 * month's first instant, and PromQL ranges are constants. Instead each evaluation records the
 * last hour's spend; a 31-day subquery at a 1 h step reads one sample per hour, labels it with
 * the month the hour belongs to (`count_values` turns the month number into a label) and sums
 * the current month's. The hours tile the month exactly, counter resets are handled by
 * increase(), and nothing is kept in a self-referencing series that one missed evaluation or a
 * restart would corrupt. The price: the recorded hourly series must be retained for 31 days
 * (Prometheus keeps 15 by default: run it with `--storage.tsdb.retention.time=32d` or more).
 */
import type { MonitoringConfig } from '../config.js';
import { lines, series } from '../promql.js';
import { runbookUrl } from './runbook.js';
import type { AlertingRule, RecordingRule, RuleGroup } from './types.js';

export const BUDGET_RECORDS = {
  increase1h: 'job:hermes_cost_usd:increase1h',
  rate1d: 'job:hermes_cost_usd:rate1d',
  monthToDate: 'job:hermes_cost_usd:month_to_date',
  monthForecast: 'job:hermes_cost_usd:month_forecast',
  budgetRemaining: 'job:hermes_cost_usd:budget_remaining',
  daysToExhaustion: 'job:hermes_cost_usd:days_to_budget_exhaustion',
} as const;

export const SPEND_ALERT = 'HermesSpendBudgetForecast';

/** Everything but the target labels: the budget covers all providers, models and sidecars of a job. */
const SPEND_WITHOUT = 'instance, kind, provider, model, pricing';

/** Seconds from the start of the current hour to the end of the month. */
const SECONDS_LEFT_IN_MONTH = 'scalar((days_in_month() - day_of_month() + 1) * 86400 - hour() * 3600)';

function budgetRecordings(selector: string, budget: number): RuleGroup<RecordingRule> {
  const B = BUDGET_RECORDS;
  const hourly = series(B.increase1h, selector);
  const monthToDate = series(B.monthToDate, selector);
  const rate = series(B.rate1d, selector);
  return {
    name: 'hermes-spend-budget.rules',
    rules: [
      {
        record: B.increase1h,
        expr: `sum without (${SPEND_WITHOUT}) (increase(${series('hermes_cost_usd_total', selector)}[1h]))`,
        comment: 'USD spent over the last hour, per job.',
      },
      {
        record: B.rate1d,
        expr: `sum without (${SPEND_WITHOUT}) (rate(${series('hermes_cost_usd_total', selector)}[1d]))`,
        comment: 'USD per second over the last day, per job: the rate the forecast projects.',
      },
      {
        record: B.monthToDate,
        // A sample at hour step s covers the hour before s, so it belongs to the month of s - 1h.
        expr: lines(
          'sum without (month) (',
          `  sum_over_time((${hourly} * on () group_left (month) count_values("month", month(vector(time() - 3600))))[31d:1h])`,
          '  and on (month) count_values("month", month())',
          ')',
          `or ${hourly} * 0`,
        ),
        comment: 'USD spent this calendar month up to the start of the current hour, per job (needs 31 days of retention).',
      },
      {
        record: B.monthForecast,
        expr: `${monthToDate} + ${rate} * ${SECONDS_LEFT_IN_MONTH}`,
        comment: 'Month-to-date spend plus the last day\'s rate until the end of the calendar month, per job.',
      },
      {
        record: B.budgetRemaining,
        expr: `${String(budget)} - ${monthToDate}`,
        comment: `USD left of the ${String(budget)} USD monthly budget, per job (negative once overspent).`,
      },
      {
        record: B.daysToExhaustion,
        expr: `clamp_min(${series(B.budgetRemaining, selector)}, 0) / (${rate} > 0) / 86400`,
        comment: 'Days until the budget is spent at the last day\'s rate, per job; absent while nothing is spent.',
      },
    ],
  };
}

function budgetAlerts({ selector, runbookBase }: MonitoringConfig, budget: number): RuleGroup<AlertingRule> {
  return {
    name: 'hermes-spend-budget.alerts',
    rules: [
      {
        alert: SPEND_ALERT,
        expr: `${series(BUDGET_RECORDS.monthForecast, selector)} > ${String(budget)}`,
        // An hour of a high rate, so one expensive burst does not warn; the 1 d rate moves slowly anyway.
        for: '1h',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'Spend is on course to exceed the monthly budget.',
          description: `{{ $labels.job }} is on course to spend {{ $value | humanize }} USD this calendar month, over its budget of ${String(budget)} USD.`,
          runbook_url: runbookUrl(runbookBase, SPEND_ALERT),
        },
      },
    ],
  };
}

export function budgetRecordingGroups(config: MonitoringConfig): RuleGroup<RecordingRule>[] {
  const budget = config.thresholds.monthlyBudgetUsd;
  return budget === undefined ? [] : [budgetRecordings(config.selector, budget)];
}

export function budgetAlertGroups(config: MonitoringConfig): RuleGroup<AlertingRule>[] {
  const budget = config.thresholds.monthlyBudgetUsd;
  return budget === undefined ? [] : [budgetAlerts(config, budget)];
}
