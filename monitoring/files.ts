/**
 * Every file the monitoring bundle generates, as path → contents. build.ts writes them; the
 * test suite regenerates them in memory and compares with the committed bytes.
 */
import { renderAlertmanagerConfig, type Receivers } from './alertmanager.js';
import { agentOverviewDashboard } from './dashboards/agent-overview.js';
import { sidecarHealthDashboard } from './dashboards/sidecar-health.js';
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

export const DASHBOARD_FILES = {
  agentOverview: 'dashboards/hermes-agent-overview.json',
  sidecarHealth: 'dashboards/hermes-sidecar-health.json',
} as const;

export const RULE_FILES = {
  alerts: 'rules/hermes-alerts.yml',
  recording: 'rules/hermes-recording.yml',
  sloRecording: 'rules/hermes-slo-recording.yml',
  sloAlerts: 'rules/hermes-slo-alerts.yml',
} as const;

export function dashboardFiles(config: MonitoringConfig = defaults): GeneratedFile[] {
  return [
    { path: DASHBOARD_FILES.agentOverview, contents: renderJson(agentOverviewDashboard(config)) },
    { path: DASHBOARD_FILES.sidecarHealth, contents: renderJson(sidecarHealthDashboard(config)) },
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
