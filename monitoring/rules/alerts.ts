/**
 * Alerting rules, in the monitoring-mixin style:
 *
 * - CamelCase names with the `Hermes` prefix, naming the condition rather than a cause.
 * - `severity`: critical pages, warning goes to a ticket queue, info helps troubleshooting
 *   (alertmanager.yml routes them so). One incident pages once: the SLO burn alerts page
 *   provider and tool failures, HermesApiCallsHung pages hung provider calls, and every static
 *   ratio alert is a warning that Alertmanager inhibits while the page of its incident fires.
 * - Every ratio alert has a traffic guard (`thresholds.ratioMinEvents` events in its window).
 * - `summary` is one static sentence; `description` is templated with labels and values only
 *   (never content: no prompts, commands or ids exist in these series anyway); `runbook_url`
 *   points at the section of docs/runbook.md named after the alert.
 * - Symptoms first (error ratio, latency, loss); causes are left to the runbook.
 */
import type { MonitoringConfig } from '../config.js';
import { histogramSeries, lines, series } from '../promql.js';
import { budgetAlertGroups } from './budget.js';
import { RECORDING as R } from './recording.js';
import { runbookUrl } from './runbook.js';
import type { AlertingRule, RuleGroup, Severity } from './types.js';

interface AlertSpec {
  readonly name: string;
  readonly severity: Severity;
  readonly for: string;
  readonly expr: string;
  readonly summary: string;
  readonly description: string;
}

const alert = (spec: AlertSpec): AlertSpec => spec;

function toRule(spec: AlertSpec, runbookBase: string): AlertingRule {
  return {
    alert: spec.name,
    expr: spec.expr,
    for: spec.for,
    labels: { severity: spec.severity },
    annotations: {
      summary: spec.summary,
      description: spec.description,
      runbook_url: runbookUrl(runbookBase, spec.name),
    },
  };
}

/**
 * Increase over the last 15 minutes that also counts series born inside the window.
 *
 * A labelled counter appears at its first increment (a plugin drop report can arrive as "3"),
 * and increase() never sees the step from "no series" to its first value. A series with no
 * sample in the day before the window contributes its whole value instead; older series use
 * increase(). Every single loss counts, and the alert clears 15 minutes after the last one.
 * "No sample in the day before", not "no sample 15 minutes ago": after a scrape gap an old
 * series has no sample 15 minutes back either, and its lifetime total is no new loss. (A
 * target Prometheus scrapes for the first time reports its earlier totals once, which is wanted.)
 */
function increase15mIncludingNewSeries(selectorExpr: string): string {
  return `((${selectorExpr} unless last_over_time(${selectorExpr}[1d] offset 15m)) or increase(${selectorExpr}[15m]))`;
}

/** `ratio and (events in the window >= ratioMinEvents)`: the traffic guard of a ratio alert. */
function guarded(ratio: string, eventsInWindow: string, minEvents: number): string {
  return lines(ratio, 'and', `${eventsInWindow} >= ${String(minEvents)}`);
}

const sidecarAlerts = ({ selector, thresholds }: MonitoringConfig): RuleGroup<AlertSpec> => ({
  name: 'hermes-sidecar.alerts',
  rules: [
    alert({
      name: 'HermesSidecarDown',
      // A ticket: no user sees the metrics pipeline, and the agents keep working without it.
      severity: 'warning',
      for: '5m',
      expr: `${series('up', selector)} == 0`,
      summary: 'The Hermes sidecar cannot be scraped.',
      description:
        'Prometheus has failed to scrape {{ $labels.instance }} (job {{ $labels.job }}) for 5 minutes: Hermes metrics and every other Hermes alert are blind.',
    }),
    alert({
      name: 'HermesSidecarAbsent',
      severity: 'warning',
      for: '15m',
      expr: `absent(${series('up', selector)})`,
      summary: 'Prometheus has no Hermes sidecar target.',
      description:
        'No target of job {{ $labels.job }} has been scraped for 15 minutes: the scrape configuration or service discovery lost the sidecar.',
    }),
    alert({
      name: 'HermesNoEventsWhilePluginsLive',
      // Info: an idle agent (plugins live, nobody talking to Hermes) looks the same.
      severity: 'info',
      for: '15m',
      // Heartbeats prove Hermes runs; hook events prove the hooks fire. Heartbeats are
      // excluded, and `unless` (rather than `== 0`) also covers "no event ever arrived".
      expr: lines(
        `(sum without (state) (${series('hermes_plugin_instances', selector, 'state="live"')}) > 0)`,
        'unless on (job, instance)',
        `(sum without (source, event) (rate(${series('hermes_sidecar_events_received_total', selector, 'event!="plugin_heartbeat"')}[30m])) > 0)`,
      ),
      summary: 'Bridge plugins are live but no Hermes hook events arrive.',
      description:
        '{{ $value }} bridge plugin instance(s) reporting to {{ $labels.instance }} send heartbeats, but no hook event has arrived for at least 30 minutes.',
    }),
    alert({
      name: 'HermesPluginCallbacksDropped',
      severity: 'warning',
      for: '5m',
      // Summed over hooks (dozens of them) so one incident raises one alert per reason.
      expr: `sum without (hook) ${increase15mIncludingNewSeries(series('hermes_plugin_callbacks_dropped_total', selector))} > 0`,
      summary: 'The bridge plugin is dropping Hermes hook callbacks.',
      description:
        'The bridge plugin reporting to {{ $labels.instance }} dropped {{ $value | humanize }} hook callbacks in the last 15 minutes (reason {{ $labels.reason }}); those events are missing from every metric.',
    }),
    alert({
      name: 'HermesEventsLost',
      severity: 'warning',
      for: '5m',
      expr: `${increase15mIncludingNewSeries(series('hermes_sidecar_events_lost_total', selector))} > 0`,
      summary: 'Events sent by the bridge plugin never reached the sidecar.',
      description:
        '{{ $labels.instance }} found gaps in plugin sequence numbers: {{ $value | humanize }} events were lost in the last 15 minutes.',
    }),
    alert({
      name: 'HermesCardinalityGuardTripped',
      severity: 'warning',
      for: '15m',
      // The counter moves on every folded value, so a sustained rate means values keep being
      // merged into "other", not one burst after a restart.
      expr: `rate(${series('hermes_sidecar_label_overflow_total', selector)}[15m]) > 0`,
      summary: 'The cardinality guard keeps folding label values into "other".',
      description:
        'The cardinality guard on {{ $labels.instance }} keeps folding new values of label {{ $labels.label }} into "other"; series for those values are merged.',
    }),
    alert({
      name: 'HermesSidecarQueueNearCapacity',
      severity: 'warning',
      for: '5m',
      expr: `${series('hermes_sidecar_queue_depth', selector)} / (${series('hermes_sidecar_queue_capacity', selector)} > 0) > ${thresholds.queueFillRatio}`,
      summary: 'The sidecar ingest queue is nearly full.',
      description:
        'The ingest queue of {{ $labels.instance }} is {{ $value | humanizePercentage }} full; once full, event batches are refused and the plugin must retry or drop them.',
    }),
    alert({
      name: 'HermesSidecarScrapeErrors',
      severity: 'warning',
      for: '5m',
      expr: `${increase15mIncludingNewSeries(series('hermes_sidecar_scrape_errors_total', selector))} > 0`,
      summary: 'The sidecar fails while rendering /metrics.',
      description:
        '{{ $labels.instance }} failed {{ $value | humanize }} times in the last 15 minutes while rendering /metrics (stage {{ $labels.stage }}); scrapes are partial or fail.',
    }),
    alert({
      name: 'HermesOrphanedSpans',
      severity: 'info',
      for: '30m',
      expr: `rate(${series('hermes_sidecar_orphaned_spans_total', selector)}[15m]) > 0`,
      summary: 'Started operations keep ending without their terminal event.',
      description:
        '{{ $labels.instance }} keeps expiring {{ $labels.kind }} spans whose terminal event never came; durations and in-flight gauges for them are incomplete.',
    }),
  ],
});

const agentAlerts = ({ selector, thresholds, histograms }: MonitoringConfig): RuleGroup<AlertSpec> => {
  const minEvents = thresholds.ratioMinEvents;
  const attemptsIn5m = `${series(R.providerRequestsRate, selector)} * 300`;
  const turns = (...matchers: string[]) =>
    `sum without (model, outcome, exit_reason) (rate(${series('hermes_turns_finished_total', selector, ...matchers)}[30m]))`;
  return {
    name: 'hermes-agent.alerts',
    rules: [
      alert({
        name: 'HermesApiErrorRatioHigh',
        severity: 'warning',
        for: '15m',
        // A ticket: HermesApiAvailabilityBudgetBurn pages the same incident (logical calls failing).
        expr: guarded(`${series(R.providerErrorRatio, selector)} > ${thresholds.apiErrorRatioWarning}`, attemptsIn5m, minEvents),
        summary: 'Many provider API calls are failing.',
        description:
          '{{ $value | humanizePercentage }} of {{ $labels.provider }} API attempts from {{ $labels.instance }} failed over the last 5 minutes.',
      }),
      alert({
        name: 'HermesApiLatencyHigh',
        severity: 'warning',
        for: '15m',
        expr: `${series(R.apiDurationP95, selector)} > ${thresholds.apiLatencyP95Seconds}`,
        summary: 'Provider API calls are slow.',
        description:
          'p95 latency of successful {{ $labels.provider }} {{ $labels.model }} calls from {{ $labels.instance }} is {{ $value | humanizeDuration }}.',
      }),
      alert({
        name: 'HermesApiCallsHung',
        severity: 'critical',
        for: '0m',
        // Calls in flight all along and none finished: every ratio is absent, so no burn alert
        // can see it. The guard (calls in the last 6 hours) keeps a host that rarely calls quiet.
        expr: lines(
          `sum without (kind) (min_over_time(${series('hermes_api_requests_in_flight', selector)}[${thresholds.hungCallMinutes}m])) > 0`,
          'and',
          `sum without (kind, model, outcome) (increase(${series('hermes_api_requests_total', selector)}[${thresholds.hungCallMinutes}m])) == 0`,
          'and',
          `sum without (kind, model, outcome) (increase(${series('hermes_api_requests_total', selector)}[6h])) >= ${String(minEvents)}`,
        ),
        summary: 'Provider API calls hang: calls are in flight and none finishes.',
        description: `{{ $labels.provider }} calls from {{ $labels.instance }} are in flight and none has finished for ${thresholds.hungCallMinutes} minutes.`,
      }),
      alert({
        name: 'HermesApiRetryStorm',
        severity: 'warning',
        for: '10m',
        // Relative to traffic, so a busy fleet with a steady trickle of retries stays quiet.
        expr: guarded(
          `${series(R.providerRetriesRate, selector)} / (${series(R.providerRequestsRate, selector)} > 0) > ${thresholds.apiRetryRatio}`,
          attemptsIn5m,
          minEvents,
        ),
        summary: 'Hermes is retrying many provider API calls.',
        description:
          '{{ $value | humanizePercentage }} of {{ $labels.provider }} API attempts from {{ $labels.instance }} are followed by a retry.',
      }),
      alert({
        name: 'HermesApiRetriesExhausted',
        // Info: the availability SLO pages and tickets failing calls; this names the cause.
        severity: 'info',
        for: '10m',
        expr: guarded(
          `${series(R.providerRetriesExhaustedRate, selector)} / (${series(R.providerRequestsRate, selector)} > 0) > ${thresholds.apiErrorRatioWarning}`,
          attemptsIn5m,
          minEvents,
        ),
        summary: 'Provider API calls keep failing after all retries.',
        description:
          '{{ $value | humanizePercentage }} of {{ $labels.provider }} API attempts from {{ $labels.instance }} over the last 5 minutes ended their logical call for good (not retryable, or out of retries).',
      }),
      alert({
        name: 'HermesToolFailureRatioHigh',
        severity: 'warning',
        for: '15m',
        expr: guarded(
          `${series(R.toolFailureRatio, selector)} > ${thresholds.toolFailureRatio}`,
          `${series(R.toolCallsRate, selector)} * 300`,
          minEvents,
        ),
        summary: 'Many calls of a tool fail.',
        description:
          '{{ $value | humanizePercentage }} of {{ $labels.tool }} tool calls on {{ $labels.instance }} ended in error or timeout over the last 5 minutes.',
      }),
      alert({
        name: 'HermesApprovalWaitLong',
        severity: 'info',
        for: '15m',
        // A 30-minute window: approvals are rare and human-paced.
        expr: `histogram_quantile(0.95, sum without (choice) (rate(${series(histogramSeries('hermes_approval_wait_seconds', histograms), selector)}[30m]))) > ${thresholds.approvalWaitP95Seconds}`,
        summary: 'Agents wait long for approval decisions.',
        description:
          'p95 wait for {{ $labels.surface }} approval decisions on {{ $labels.instance }} is {{ $value | humanizeDuration }} over the last 30 minutes.',
      }),
      alert({
        name: 'HermesTurnsHittingMaxIterations',
        severity: 'warning',
        for: '15m',
        expr: guarded(
          lines(turns('exit_reason="max_iterations_reached"'), '/', `(${turns()} > 0)`, `> ${thresholds.maxIterationsTurnRatio}`),
          `${turns()} * 1800`,
          minEvents,
        ),
        summary: 'Agent turns stop at the iteration limit.',
        description:
          '{{ $value | humanizePercentage }} of {{ $labels.platform }} turns on {{ $labels.instance }} stopped at the iteration limit over the last 30 minutes.',
      }),
      alert({
        name: 'HermesSpendRateHigh',
        severity: 'warning',
        for: '15m',
        // Priced calls only (Hermes' price or the config price table); unpriced calls are counted apart.
        expr: `sum without (kind, provider, model, pricing) (increase(${series('hermes_cost_usd_total', selector)}[1h])) > ${thresholds.costUsdPerHour}`,
        summary: 'Provider API spend is above the expected hourly rate.',
        description:
          '{{ $labels.instance }} spent {{ $value | humanize }} USD on provider API calls over the last hour.',
      }),
      alert({
        name: 'HermesFleetSpendRateHigh',
        severity: 'warning',
        for: '15m',
        // Every sidecar of a job together: many hosts each under the per-host rate can still overspend.
        expr: `sum without (instance, kind, provider, model, pricing) (increase(${series('hermes_cost_usd_total', selector)}[1h])) > ${thresholds.fleetCostUsdPerHour}`,
        summary: 'Provider API spend of the whole fleet is above the expected hourly rate.',
        description: 'The sidecars of job {{ $labels.job }} spent {{ $value | humanize }} USD on provider API calls over the last hour.',
      }),
    ],
  };
};

export function alertGroups(config: MonitoringConfig): RuleGroup<AlertingRule>[] {
  const groups = [sidecarAlerts(config), agentAlerts(config)].map((group) => ({
    name: group.name,
    rules: group.rules.map((spec) => toRule(spec, config.runbookBase)),
  }));
  return [...groups, ...budgetAlertGroups(config)];
}
