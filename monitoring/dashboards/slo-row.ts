/**
 * The SLO row of the agent overview: how much of each 30-day error budget is left, how fast each
 * SLO burns over the alert windows, and (with `thresholds.monthlyBudgetUsd`) the spend budget.
 * It reads the recorded series of rules/hermes-slo-recording.yml and rules/hermes-recording.yml;
 * the burn-rate alerts' runbook entries point here.
 */
import type { MonitoringConfig } from '../config.js';
import { BUDGET_RECORDS } from '../rules/budget.js';
import { errorBudget, SLI_WINDOWS, SLO_RECORDS, slothId, sliDefinitions, type SliDefinition } from '../rules/slos.js';
import { bargauge, stat, timeseries, type PanelSpec, type Promql, type RowSpec } from './common.js';
import { burnFactors, burnRateLines, redBelow } from './thresholds.js';

export const SLO_ROW_TITLE = 'Service level objectives';

/** Titles the runbook cites. */
export const SLO_PANELS = {
  budgetLeft: 'Error budget left (30 days)',
  worstBudgetLeft: 'Least error budget left (30 days)',
  burnRate: (sli: Pick<SliDefinition, 'name'>) => `Burn rate by window: ${sli.name}`,
  spendLeft: 'Spend budget left this month',
  daysLeft: 'Days until the spend budget is gone',
} as const;

function burnRatePanel(q: Promql, sli: SliDefinition): PanelSpec {
  const budget = errorBudget(sli.objective);
  return timeseries({
    title: SLO_PANELS.burnRate(sli),
    description: `Error ratio over each alert window divided by the error budget (${String(budget)}), worst ${sli.dimension} and sidecar of the selection: 1 spends the budget in exactly 30 days. Lines at the alerts' burn rates ${burnFactors().join(', ')}: pages at 14.4 (1 h and 5 m) or 6 (6 h and 30 m), tickets at 3 (1 d and 2 h) or 1 (3 d and 6 h).`,
    unit: 'short',
    min: 0,
    width: 8,
    thresholdLines: burnRateLines(),
    queries: SLI_WINDOWS.map((window) => ({
      expr: `max(${q.selected(SLO_RECORDS.sliError(window), `sloth_id="${slothId(sli)}"`)}) / ${String(budget)}`,
      legend: window,
    })),
  });
}

function spendBudgetPanels(q: Promql, budget: number): PanelSpec[] {
  return [
    stat({
      title: SLO_PANELS.spendLeft,
      description: `USD left of the ${String(budget)} USD monthly budget per job, spend counted up to the start of the current hour (needs 31 days of Prometheus retention).`,
      unit: 'currencyUSD',
      width: 4,
      thresholds: redBelow(0),
      queries: [{ expr: `min by (job) (${q.selected(BUDGET_RECORDS.budgetRemaining)})`, legend: '{{job}}', instant: true }],
    }),
    stat({
      title: SLO_PANELS.daysLeft,
      description: 'Days until the monthly budget is spent at the last day\'s spend rate, per job; "No data" while nothing is spent.',
      unit: 'd',
      width: 4,
      // Red with less than a day's notice, orange with less than a week's.
      thresholds: [{ value: null, color: 'red' }, { value: 1, color: 'orange' }, { value: 7, color: 'green' }],
      queries: [{ expr: `min by (job) (${q.selected(BUDGET_RECORDS.daysToExhaustion)})`, legend: '{{job}}', instant: true }],
    }),
  ];
}

export function sloRow(q: Promql, config: MonitoringConfig): RowSpec {
  const budget = config.thresholds.monthlyBudgetUsd;
  return {
    title: SLO_ROW_TITLE,
    panels: [
      bargauge({
        title: SLO_PANELS.budgetLeft,
        description: 'Share of each SLO\'s 30-day error budget left, per provider or tool (worst sidecar of the selection); below 0 the objective is missed.',
        unit: 'percentunit',
        max: 1,
        thresholds: redBelow(0),
        width: budget === undefined ? 24 : 16,
        queries: [{ expr: `min by (sloth_slo, provider, tool) (${q.selected(SLO_RECORDS.budgetRemaining)})`, legend: '{{sloth_slo}} {{provider}}{{tool}}', instant: true }],
      }),
      ...(budget === undefined ? [] : spendBudgetPanels(q, budget)),
      ...sliDefinitions(config).map((sli) => burnRatePanel(q, sli)),
    ],
  };
}
