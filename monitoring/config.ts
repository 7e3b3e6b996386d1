/**
 * The monitoring bundle's configuration: the mixin `_config`.
 *
 * Everything a deployment may differ in lives here: the selector of the sidecar's series, the
 * alert thresholds and the runbook location. `build()` (monitoring/index.ts) takes overrides of
 * them, as kubernetes-mixin's `_config+::` does, and regenerates every dashboard and rule; the
 * committed files are `build()` with these defaults.
 */

import type { HistogramKind } from './promql.js';

/** Prometheus scrape job of the sidecar's /metrics endpoint in the bundled prometheus.yml. */
export const jobName = 'hermes-sidecar';

/** Where the sidecar serves /metrics by default (web listener). */
export const sidecarTarget = 'localhost:9478';

/** Scrape and rule evaluation interval; Grafana's data source uses it to size $__rate_interval. */
export const scrapeInterval = '15s';

/** Grafana side: the provisioned data source. Panels never name it; they use $datasource. */
export const grafana = {
  datasourceName: 'Prometheus',
  datasourceUid: 'hermes-prometheus',
  datasourceUrl: 'http://localhost:9090',
  /** Where the file provider finds the dashboards (mount the repo's dashboards/ here). */
  dashboardsPath: '/var/lib/grafana/dashboards/hermes',
  folder: 'Hermes',
  tags: ['hermes', 'hermes-prometheus-sidecar'],
} as const;

/**
 * Alert thresholds. Ratios are fractions (0.1 = 10 %), durations are seconds, money is USD.
 * Each is the level at which an on-call person should look, not merely "unusual".
 */
export interface Thresholds {
  /** Share of provider API attempts that failed, per provider. */
  readonly apiErrorRatioWarning: number;
  readonly apiErrorRatioCritical: number;
  /** p95 latency of successful provider calls (retries included), per provider and model. */
  readonly apiLatencyP95Seconds: number;
  /** Share of provider API attempts followed by a retry, per provider. */
  readonly apiRetryRatio: number;
  /** Share of tool calls ending in error or timeout, per tool. */
  readonly toolFailureRatio: number;
  /** p95 of the wait for an approval decision; must stay below the top finite bucket (600 s). */
  readonly approvalWaitP95Seconds: number;
  /** Share of finished turns that hit the iteration cap, per platform. */
  readonly maxIterationsTurnRatio: number;
  /** Ingest queue depth as a share of its capacity. */
  readonly queueFillRatio: number;
  /** Spend rate in USD per hour, per sidecar (every provider and model together), over the last hour. */
  readonly costUsdPerHour: number;
  /** Spend rate in USD per hour of every sidecar of a job together, over the last hour. */
  readonly fleetCostUsdPerHour: number;
  /**
   * Events (attempts, tool calls, turns) a ratio alert's window must hold before the ratio may
   * alert: below it one failure among a handful of calls is noise, not a trend.
   */
  readonly ratioMinEvents: number;
  /** Minutes with provider calls in flight and none finishing before the hung-calls page (see HermesApiCallsHung). */
  readonly hungCallMinutes: number;
  /**
   * Spend budget in USD per calendar month for everything the selector matches (summed per job
   * and the target labels that survive); unset means no budget rules and no budget panels.
   */
  readonly monthlyBudgetUsd?: number;
}

/**
 * One service level objective: the share of good events over the 30-day window, and the
 * fewest events a long alert window must hold before its burn rate may alert (the traffic guard).
 */
export interface SloObjective {
  /** Target share of good events, strictly between 0 and 1 (0.995 = 99.5 %). */
  readonly objective: number;
  /** Events a page or ticket window must hold; below it one failure is noise, not a burn. */
  readonly minEvents: number;
}

export interface LatencySloObjective extends SloObjective {
  /** A bound of hermes_api_request_duration_seconds (classic `le`), in seconds. */
  readonly thresholdSeconds: number;
}

/** The bundle's SLOs; monitoring/rules/slos.ts turns them into sloth-style rules and alerts. */
export interface Slos {
  /** Logical provider calls that succeed (a call Hermes retried into success is good). */
  readonly providerAvailability: SloObjective;
  /** Tool calls that do not end in error or timeout (blocked and cancelled are decisions). */
  readonly toolSuccess: SloObjective;
  /** Successful provider calls faster than the threshold. */
  readonly providerLatency: LatencySloObjective;
}

export interface MonitoringConfig {
  /**
   * PromQL label matchers selecting the sidecar's series, e.g. `job="hermes-sidecar"` or
   * `cluster="eu1", namespace="agents"`. Every rule and every dashboard query applies it.
   */
  readonly selector: string;
  readonly thresholds: Thresholds;
  readonly slos: Slos;
  /** Base of every alert's runbook_url; the anchor is the lowercased alert name. */
  readonly runbookBase: string;
  /** The histograms the queries read: classic `_bucket` series (the default) or native histograms. */
  readonly histograms: HistogramKind;
}

export const defaults: MonitoringConfig = {
  selector: `job="${jobName}"`,
  thresholds: {
    apiErrorRatioWarning: 0.1,
    apiErrorRatioCritical: 0.5,
    apiLatencyP95Seconds: 120,
    apiRetryRatio: 0.25,
    toolFailureRatio: 0.25,
    approvalWaitP95Seconds: 300,
    maxIterationsTurnRatio: 0.1,
    queueFillRatio: 0.8,
    costUsdPerHour: 10,
    fleetCostUsdPerHour: 50,
    ratioMinEvents: 10,
    hungCallMinutes: 10,
  },
  // The 14.4x page fires once the 1 h window holds 14.4 x (1 - objective) bad events: a total
  // outage at steady traffic pages after 60 min x 14.4 x (1 - objective), 4.3 minutes at 99.5 %
  // and 8.6 minutes at 99 % (at 95 % it would be 43 minutes, so no SLO here is looser than 99 %).
  // 30 events per guard window keep a host with a handful of calls quiet.
  slos: {
    providerAvailability: { objective: 0.995, minEvents: 30 },
    toolSuccess: { objective: 0.99, minEvents: 30 },
    providerLatency: { objective: 0.99, minEvents: 30, thresholdSeconds: 81.92 },
  },
  runbookBase: 'https://github.com/hermes-prometheus-sidecar/hermes-prometheus-sidecar/blob/main/docs/runbook.md',
  histograms: 'classic',
};
