/**
 * Threshold steps for the dashboards, so a panel turns red exactly where an alert fires and
 * nowhere else. Grafana's default when a panel sets none (green, red at 80) would colour a
 * request rate of 81 red and never colour an error ratio of 0.9: every stat, gauge and bar gauge
 * sets its steps from here, and the alert levels come from the bundle's configuration.
 */
import type { Threshold } from '@grafana/grafana-foundation-sdk/dashboard';
import type { MonitoringConfig } from '../config.js';
import { BURN_ALERTS } from '../rules/slos.js';

export type Steps = readonly Threshold[];

/** Grafana's named palette colours. */
export const COLORS = { ok: 'green', neutral: 'blue', warning: 'orange', critical: 'red' } as const;

/** One colour for a figure that is neither good nor bad by itself (a rate, a count of sessions). */
export function neutral(): Steps {
  return [{ value: null, color: COLORS.neutral }];
}

/** Green below `critical`, red from it; orange from `warning` when the alert has a warning level below. */
export function redFrom(critical: number, warning?: number): Steps {
  return [
    { value: null, color: COLORS.ok },
    ...(warning === undefined || warning >= critical ? [] : [{ value: warning, color: COLORS.warning }]),
    { value: critical, color: COLORS.critical },
  ];
}

/** Red below `floor` (a spent budget), green from it. */
export function redBelow(floor: number): Steps {
  return [
    { value: null, color: COLORS.critical },
    { value: floor, color: COLORS.ok },
  ];
}

/**
 * "Red from any increase": below the rate one event makes even over an hour (0.00028/s), and
 * above 0, which Grafana's "from this value" steps would otherwise colour red too.
 */
export const ANY_INCREASE = 0.0001;

/** The burn-rate factors the SLO alerts fire at (14.4 and 6 page, 3 and 1 ticket), highest first. */
export function burnFactors(): number[] {
  return BURN_ALERTS.flatMap((level) => level.pairs.map((pair) => pair.factor)).sort((a, b) => b - a);
}

/** A line at every burn-rate alert factor: yellow at the slowest ticket, red at the pages. */
export function burnRateLines(): Steps {
  const palette = ['dark-red', 'red', 'orange', 'yellow'];
  return [
    { value: null, color: COLORS.ok },
    ...burnFactors()
      .map((factor, index) => ({ value: factor, color: palette[Math.min(index, palette.length - 1)] ?? COLORS.critical }))
      .reverse(),
  ];
}

/** The error-ratio alert's levels (HermesApiErrorRatioHigh warning and critical). */
export function apiErrorRatioSteps(config: MonitoringConfig): Steps {
  return redFrom(config.thresholds.apiErrorRatioCritical, config.thresholds.apiErrorRatioWarning);
}
