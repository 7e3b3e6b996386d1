/**
 * The monitoring bundle's configuration: the mixin `_config`.
 *
 * The scrape job name lives here and nowhere else. Rules, dashboards' defaults and the generated
 * prometheus.yml all derive from it, so renaming the job is a one-line change plus
 * `npm run monitoring:build`.
 */

/** Prometheus scrape job of the sidecar's /metrics endpoint. */
export const jobName = 'hermes-sidecar';

/** Selector every rule applies to sidecar series. */
export const selector = `job="${jobName}"`;

/** Where the sidecar serves /metrics by default (web listener). */
export const sidecarTarget = 'localhost:9478';

/** Scrape and rule evaluation interval; Grafana's data source uses it to size $__rate_interval. */
export const scrapeInterval = '15s';

/** Base of every alert's runbook_url; the anchor is the lowercased alert name. */
export const runbookBaseUrl =
  'https://github.com/hermes-prometheus-sidecar/hermes-prometheus-sidecar/blob/main/docs/runbook.md';

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
 * Alert thresholds. Ratios are fractions (0.1 = 10 %), durations are seconds.
 * Each is the level at which an on-call person should look, not merely "unusual".
 */
export const thresholds = {
  /** Share of provider API attempts that failed, per provider. */
  apiErrorRatioWarning: 0.1,
  apiErrorRatioCritical: 0.5,
  /** p95 latency of successful provider calls (retries included), per provider and model. */
  apiLatencyP95Seconds: 120,
  /** Share of provider API attempts followed by a retry, per provider. */
  apiRetryRatio: 0.25,
  /** Share of tool calls ending in error or timeout, per tool. */
  toolFailureRatio: 0.25,
  /** p95 of the wait for an approval decision; must stay below the top finite bucket (600 s). */
  approvalWaitP95Seconds: 300,
  /** Share of finished turns that hit the iteration cap, per platform. */
  maxIterationsTurnRatio: 0.1,
  /** Ingest queue depth as a share of its capacity. */
  queueFillRatio: 0.8,
} as const;
