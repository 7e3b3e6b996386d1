/**
 * Checks a resolved bundle configuration before any rule is written: a value that would make a
 * rule meaningless (an objective of 1, a latency threshold that is no histogram bound) is an
 * error with a stable code, not a silently broken alert.
 */
import { DEFAULT_BUCKETS } from '../src/metrics/declare.js';
import type { MonitoringConfig, SloObjective } from './config.js';

export type MonitoringConfigErrorCode =
  | 'slo_objective_out_of_range'
  | 'slo_min_events_invalid'
  | 'slo_latency_threshold_not_a_bucket'
  | 'monthly_budget_invalid';

export class MonitoringConfigError extends Error {
  constructor(
    readonly code: MonitoringConfigErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'MonitoringConfigError';
  }
}

/** The sidecar's default bounds of hermes_api_request_duration_seconds (bucket set api_seconds). */
export const API_SECONDS_BOUNDS: readonly number[] = DEFAULT_BUCKETS.api_seconds;

function checkObjective(name: string, slo: SloObjective): void {
  const { objective, minEvents } = slo;
  if (!Number.isFinite(objective) || objective <= 0 || objective >= 1) {
    throw new MonitoringConfigError('slo_objective_out_of_range', `slos.${name}.objective must be strictly between 0 and 1, got ${String(objective)}`);
  }
  if (!Number.isInteger(minEvents) || minEvents < 0) {
    throw new MonitoringConfigError('slo_min_events_invalid', `slos.${name}.minEvents must be a whole number of events (0 or more), got ${String(minEvents)}`);
  }
}

export function validateConfig(config: MonitoringConfig): MonitoringConfig {
  const { providerAvailability, toolSuccess, providerLatency } = config.slos;
  checkObjective('providerAvailability', providerAvailability);
  checkObjective('toolSuccess', toolSuccess);
  checkObjective('providerLatency', providerLatency);
  if (!API_SECONDS_BOUNDS.includes(providerLatency.thresholdSeconds)) {
    throw new MonitoringConfigError(
      'slo_latency_threshold_not_a_bucket',
      `slos.providerLatency.thresholdSeconds must be a bucket bound of hermes_api_request_duration_seconds (${API_SECONDS_BOUNDS.join(', ')}), got ${String(providerLatency.thresholdSeconds)}`,
    );
  }
  const budget = config.thresholds.monthlyBudgetUsd;
  if (budget !== undefined && (!Number.isFinite(budget) || budget <= 0)) {
    throw new MonitoringConfigError('monthly_budget_invalid', `thresholds.monthlyBudgetUsd must be a positive number of USD, got ${String(budget)}`);
  }
  return config;
}
