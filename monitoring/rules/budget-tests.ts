/**
 * promtool unit test of the spend budget rules (monitoring/rules/budget.ts), generated when
 * `thresholds.monthlyBudgetUsd` is set. Time 0 of a promtool test is 1970-01-01 00:00 UTC, so
 * the hourly scenario runs through January (31 days) into February (28 days).
 *
 * The expectations come from a model in plain arithmetic: month-to-date spend is the sum of the
 * completed hours of the current month, the rate is the last 24 hours' spend (fewer at the
 * start, as rate() without earlier samples), and the forecast adds the rate until the month ends.
 */
import { Document, isMap, isSeq, type Node } from 'yaml';
import type { MonitoringConfig } from '../config.js';
import { GENERATED_NOTICE } from '../render.js';
import { alertGroups } from './alerts.js';
import { BUDGET_RECORDS, SPEND_ALERT } from './budget.js';
import { recordingGroups } from './recording.js';
import { goG4, round4, selectorLabels } from './slo-tests.js';

export const BUDGET_TEST_FILE = 'rules/tests/hermes-budget.yml';

const HOUR = 3600;

/** One fleet's spend per hour, hour 1 being the first hour of January. */
export interface Fleet {
  readonly name: string;
  readonly perHour: (hour: number) => number;
  readonly story: string;
}

export function fleets(budget: number): Fleet[] {
  return [
    { name: 'over', perHour: () => budget / 480, story: `budget / 480 USD an hour: spent by hour 480 (January 21)` },
    { name: 'under', perHour: () => budget / 1000, story: `budget / 1000 USD an hour: 744 / 1000 of the budget by the end of January` },
    {
      name: 'surge',
      perHour: (hour) => (hour <= 240 ? budget / 1200 : budget / 120),
      story: 'budget / 1200 USD an hour for ten days, then budget / 120',
    },
  ];
}

export const BUDGET_TEST_HOURS = 31 * 24 + 6;

/** Cumulative spend after each hour, added up as promtool expands the series (value += step). */
function totals(fleet: Fleet): number[] {
  const values = [0];
  let total = 0;
  for (let hour = 1; hour <= BUDGET_TEST_HOURS; hour += 1) {
    total += fleet.perHour(hour);
    values.push(total);
  }
  return values;
}

function monthOf(hour: number): number {
  return new Date(hour * HOUR * 1000).getUTCMonth();
}

export interface BudgetModel {
  readonly monthToDate: (hour: number) => number;
  readonly forecast: (hour: number) => number;
  /** Hours (from 0) at which the alert fires: the condition held an hour earlier too (`for: 1h`). */
  readonly firing: (hour: number) => boolean;
  /** First hour at which spend so far passes the budget, if it does in the scenario. */
  readonly exhaustedAt: number | undefined;
}

export function budgetModel(fleet: Fleet, budget: number): BudgetModel {
  const values = totals(fleet);
  const value = (hour: number) => values[Math.max(0, Math.min(hour, values.length - 1))] ?? 0;
  const monthToDate = (hour: number) => {
    let sum = 0;
    // The hour ending at step s belongs to the month of s - 1h.
    for (let step = 1; step <= hour; step += 1) if (monthOf(step - 1) === monthOf(hour)) sum += value(step) - value(step - 1);
    return sum;
  };
  const forecast = (hour: number) => {
    const date = new Date(hour * HOUR * 1000);
    const daysInMonth = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
    const secondsLeft = (daysInMonth - date.getUTCDate() + 1) * 86400 - date.getUTCHours() * HOUR;
    const rate = (value(hour) - value(hour - 24)) / 86400;
    return monthToDate(hour) + rate * secondsLeft;
  };
  const above = (hour: number) => hour >= 1 && forecast(hour) > budget;
  let exhaustedAt: number | undefined;
  for (let hour = 1; hour <= BUDGET_TEST_HOURS && exhaustedAt === undefined; hour += 1) if (monthToDate(hour) > budget) exhaustedAt = hour;
  return { monthToDate, forecast, firing: (hour) => above(hour) && above(hour - 1), exhaustedAt };
}

/** Prometheus' humanize for values of 1 and more: %.4g with k, M, G... prefixes. */
function goHumanize(value: number): string {
  const prefixes = ['', 'k', 'M', 'G', 'T', 'P'];
  let scaled = value;
  let index = 0;
  while (Math.abs(scaled) >= 1000 && index < prefixes.length - 1) {
    scaled /= 1000;
    index += 1;
  }
  return `${goG4(scaled)}${prefixes[index] ?? ''}`;
}

function expanding(values: readonly number[]): string {
  return values.map((entry) => String(entry)).join(' ');
}

export function budgetRuleTestFiles(config: MonitoringConfig): { path: string; contents: string }[] {
  const budget = config.thresholds.monthlyBudgetUsd;
  const base = selectorLabels(config.selector);
  if (budget === undefined || base === undefined) return [];
  const all = fleets(budget).map((fleet) => ({ fleet, model: budgetModel(fleet, budget) }));
  const checkHours = new Set<number>([15, 16, 17, 18, 24 * 10, 24 * 19, 24 * 31 + 5]);
  for (const { model } of all) {
    for (let hour = 1; hour <= BUDGET_TEST_HOURS; hour += 1) {
      if (model.firing(hour) !== model.firing(hour - 1)) {
        checkHours.add(hour - 1);
        checkHours.add(hour);
      }
    }
  }
  const labelsOf = (fleet: Fleet) => ({ ...base, fleet: fleet.name });
  const alertChecks = [...checkHours].sort((a, b) => a - b).map((hour) => {
    const notes = all.map(({ fleet, model }) => `${fleet.name}: month to date ${model.monthToDate(hour).toFixed(4)} + rate x rest of month = forecast ${model.forecast(hour).toFixed(4)} ${model.forecast(hour) > budget ? '>' : '<='} ${String(budget)}${model.firing(hour) ? ' for an hour: fires' : ''}`);
    return {
      comment: ` t = ${String(hour)} h (${new Date(hour * HOUR * 1000).toISOString().slice(0, 13)}h):\n ${notes.join('\n ')}`,
      eval_time: `${String(hour)}h`,
      alertname: SPEND_ALERT,
      exp_alerts: all
        .filter(({ model }) => model.firing(hour))
        .map(({ fleet, model }) => ({
          exp_labels: { severity: 'warning', ...labelsOf(fleet) },
          exp_annotations: {
            summary: 'Spend is on course to exceed the monthly budget.',
            description: `${base.job ?? ''} is on course to spend ${goHumanize(model.forecast(hour))} USD this calendar month, over its budget of ${String(budget)} USD.`,
            runbook_url: `${config.runbookBase}#${SPEND_ALERT.toLowerCase()}`,
          },
        })),
    };
  });
  const monthToDateCheck = (hour: number) => ({
    comment: ` t = ${String(hour)} h: month to date = sum of the completed hours of ${new Date(hour * HOUR * 1000).toISOString().slice(0, 7)} (rounded to 0.0001)`,
    expr: `round(${BUDGET_RECORDS.monthToDate}, 0.0001)`,
    eval_time: `${String(hour)}h`,
    exp_samples: all.map(({ fleet, model }) => ({
      labels: `{${Object.entries(labelsOf(fleet)).map(([name, entry]) => `${name}="${entry}"`).join(', ')}}`,
      value: round4(model.monthToDate(hour)),
    })),
  });
  const test = {
    comment: ` ${all.map(({ fleet }) => `fleet ${fleet.name}: ${fleet.story}`).join('\n ')}`,
    name: `${SPEND_ALERT}: spend forecasts over January into February`,
    interval: '1h',
    input_series: all.map(({ fleet }) => ({
      series: `hermes_cost_usd_total{${Object.entries({ ...labelsOf(fleet), instance: 'hermes-a', kind: 'main', provider: 'anthropic', model: 'claude-sonnet-4', pricing: 'hermes' }).map(([name, entry]) => `${name}="${entry}"`).join(', ')}}`,
      values: expanding(totals(fleet)),
    })),
    alert_rule_test: alertChecks,
    promql_expr_test: [monthToDateCheck(24 * 19), monthToDateCheck(24 * 31 + 5)],
  };
  const value = {
    rule_files: ['../hermes-recording.yml', '../hermes-alerts.yml'],
    evaluation_interval: '1h',
    // Recording groups first: at a 1 h step an alert cannot fall back on the previous step's forecast.
    group_eval_order: [...recordingGroups(config), ...alertGroups(config)].map((group) => group.name),
    tests: [test],
  };
  const strip = (entry: unknown): unknown => {
    if (Array.isArray(entry)) return entry.map(strip);
    if (entry !== null && typeof entry === 'object') return Object.fromEntries(Object.entries(entry as Record<string, unknown>).filter(([key]) => key !== 'comment').map(([key, inner]) => [key, strip(inner)]));
    return entry;
  };
  const doc = new Document(strip(value));
  doc.commentBefore = ` ${GENERATED_NOTICE}\n promtool test rules rules/tests/*.yml\n\n Spend budget of ${String(budget)} USD a month, hourly over January and into February.`;
  const tests = doc.get('tests', true);
  if (isSeq(tests)) {
    const node = tests.items[0] as Node | undefined;
    if (node !== undefined) node.commentBefore = test.comment;
    if (isMap(node)) {
      const alerts = node.get('alert_rule_test', true);
      if (isSeq(alerts)) alertChecks.forEach((check, index) => { const item = alerts.items[index] as Node | undefined; if (item !== undefined) item.commentBefore = check.comment; });
      const exprs = node.get('promql_expr_test', true);
      if (isSeq(exprs)) test.promql_expr_test.forEach((check, index) => { const item = exprs.items[index] as Node | undefined; if (item !== undefined) item.commentBefore = check.comment; });
    }
  }
  return [{ path: BUDGET_TEST_FILE, contents: doc.toString({ lineWidth: 0, indentSeq: true }) }];
}
