/**
 * Every file the monitoring bundle generates, as path → contents. build.ts writes them; the
 * test suite regenerates them in memory and compares with the committed bytes.
 */
import { agentOverviewDashboard } from './dashboards/agent-overview.js';
import { sidecarHealthDashboard } from './dashboards/sidecar-health.js';
import { grafanaDashboardProvider, grafanaDatasource, prometheusConfig } from './provisioning.js';
import { renderAlertRules, renderJson, renderRecordingRules } from './render.js';
import { ALERT_GROUPS } from './rules/alerts.js';
import { RECORDING_GROUPS } from './rules/recording.js';

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
} as const;

export function dashboardFiles(): GeneratedFile[] {
  return [
    { path: DASHBOARD_FILES.agentOverview, contents: renderJson(agentOverviewDashboard()) },
    { path: DASHBOARD_FILES.sidecarHealth, contents: renderJson(sidecarHealthDashboard()) },
  ];
}

export function ruleFiles(): GeneratedFile[] {
  return [
    { path: RULE_FILES.alerts, contents: renderAlertRules(ALERT_GROUPS) },
    { path: RULE_FILES.recording, contents: renderRecordingRules(RECORDING_GROUPS) },
  ];
}

export function configFiles(): GeneratedFile[] {
  return [
    { path: 'prometheus.yml', contents: prometheusConfig() },
    { path: 'dashboards/provisioning/datasources/prometheus.yml', contents: grafanaDatasource() },
    { path: 'dashboards/provisioning/dashboards/hermes.yml', contents: grafanaDashboardProvider() },
  ];
}

export function generatedFiles(): GeneratedFile[] {
  return [...dashboardFiles(), ...ruleFiles(), ...configFiles()];
}
