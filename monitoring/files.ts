/**
 * Every file the monitoring bundle generates, as path → contents. build.ts writes them; the
 * test suite regenerates them in memory and compares with the committed bytes.
 */
import { renderAlertmanagerConfig, type Receivers } from './alertmanager.js';
import { agentOverviewDashboard } from './dashboards/agent-overview.js';
import { sidecarHealthDashboard } from './dashboards/sidecar-health.js';
import { forImport, forProvisioning } from './dashboards/variants.js';
import { grafanaDashboardProvider, grafanaDatasource, prometheusConfig } from './provisioning.js';
import { renderAlertRules, renderJson, renderRecordingRules } from './render.js';
import { defaults, type MonitoringConfig } from './config.js';
import { alertGroups } from './rules/alerts.js';
import { budgetRuleTestFiles } from './rules/budget-tests.js';
import { recordingGroups } from './rules/recording.js';
import { sloRuleTestFiles } from './rules/slo-tests.js';
import { sloAlertGroups, sloRecordingGroups } from './rules/slos.js';

export interface GeneratedFile {
  /** Relative to the repository root, with forward slashes. */
  readonly path: string;
  readonly contents: string;
}

/** For Grafana's import screen: a data source input (`__inputs`) and `__requires`. */
export const DASHBOARD_FILES = {
  agentOverview: 'dashboards/hermes-agent-overview.json',
  sidecarHealth: 'dashboards/hermes-sidecar-health.json',
} as const;

/** The same dashboards for file provisioning, defaulting to the provisioned data source. */
export const PROVISIONED_DASHBOARD_FILES = {
  agentOverview: 'dashboards/provisioned/hermes-agent-overview.json',
  sidecarHealth: 'dashboards/provisioned/hermes-sidecar-health.json',
} as const;

export const RULE_FILES = {
  alerts: 'rules/hermes-alerts.yml',
  recording: 'rules/hermes-recording.yml',
  sloRecording: 'rules/hermes-slo-recording.yml',
  sloAlerts: 'rules/hermes-slo-alerts.yml',
} as const;

export function dashboardFiles(config: MonitoringConfig = defaults): GeneratedFile[] {
  const overview = agentOverviewDashboard(config);
  const health = sidecarHealthDashboard(config);
  return [
    { path: DASHBOARD_FILES.agentOverview, contents: renderJson(forImport(overview)) },
    { path: DASHBOARD_FILES.sidecarHealth, contents: renderJson(forImport(health)) },
    { path: PROVISIONED_DASHBOARD_FILES.agentOverview, contents: renderJson(forProvisioning(overview)) },
    { path: PROVISIONED_DASHBOARD_FILES.sidecarHealth, contents: renderJson(forProvisioning(health)) },
  ];
}

export function ruleFiles(config: MonitoringConfig = defaults): GeneratedFile[] {
  return [
    { path: RULE_FILES.alerts, contents: renderAlertRules(alertGroups(config)) },
    { path: RULE_FILES.recording, contents: renderRecordingRules(recordingGroups(config)) },
    { path: RULE_FILES.sloRecording, contents: renderRecordingRules(sloRecordingGroups(config)) },
    { path: RULE_FILES.sloAlerts, contents: renderAlertRules(sloAlertGroups(config)) },
  ];
}

/** promtool unit tests of the SLO and budget rules, with expectations computed for this configuration. */
export function ruleTestFiles(config: MonitoringConfig = defaults): GeneratedFile[] {
  return [...sloRuleTestFiles(config), ...budgetRuleTestFiles(config)];
}

export const ALERTMANAGER_FILE = 'alertmanager.yml';

export function configFiles(receivers?: Receivers): GeneratedFile[] {
  return [
    { path: 'prometheus.yml', contents: prometheusConfig() },
    { path: ALERTMANAGER_FILE, contents: renderAlertmanagerConfig(receivers) },
    { path: 'dashboards/provisioning/datasources/prometheus.yml', contents: grafanaDatasource() },
    { path: 'dashboards/provisioning/dashboards/hermes.yml', contents: grafanaDashboardProvider() },
  ];
}

export function generatedFiles(config: MonitoringConfig = defaults, receivers?: Receivers): GeneratedFile[] {
  return [...dashboardFiles(config), ...ruleFiles(config), ...ruleTestFiles(config), ...configFiles(receivers)];
}
