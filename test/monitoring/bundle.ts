/**
 * Read access to the committed monitoring bundle (dashboards, rules, rule tests) for the tests.
 * The tests lint what ships; generated-files.test.ts proves it equals a fresh build.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { DASHBOARD_FILES, RULE_FILES } from '../../monitoring/files.js';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function readRepoFile(path: string): string {
  return readFileSync(join(repoRoot, path), 'utf8');
}

export function listRepoDir(dir: string, suffix: string): string[] {
  return readdirSync(join(repoRoot, dir))
    .filter((name) => name.endsWith(suffix))
    .sort()
    .map((name) => `${dir}/${name}`);
}

/* ---------------------------------------------------------------- dashboards */

export interface DataSourceRef {
  readonly type?: string;
  readonly uid?: string;
}

export interface Target {
  readonly expr: string;
  readonly refId?: string;
  readonly datasource?: DataSourceRef;
  readonly instant?: boolean;
  readonly range?: boolean;
}

export interface GridPos {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface ThresholdStep {
  readonly value: number | null;
  readonly color: string;
}

export interface Panel {
  readonly id?: number;
  readonly type: string;
  readonly title: string;
  readonly description?: string;
  readonly datasource?: DataSourceRef;
  readonly gridPos?: GridPos;
  readonly collapsed?: boolean;
  readonly fieldConfig?: {
    readonly defaults?: {
      readonly unit?: string;
      readonly thresholds?: { readonly mode?: string; readonly steps?: readonly ThresholdStep[] };
      readonly custom?: { readonly thresholdsStyle?: { readonly mode?: string } };
    };
  };
  readonly targets?: readonly Target[];
  readonly panels?: readonly Panel[];
}

export interface Variable {
  readonly name: string;
  readonly type: string;
  readonly query?: unknown;
  readonly definition?: string;
  readonly current?: { readonly text?: unknown; readonly value?: unknown };
  readonly datasource?: DataSourceRef;
  readonly multi?: boolean;
  readonly includeAll?: boolean;
  readonly allValue?: string;
}

export interface DashboardJson {
  readonly uid: string;
  readonly title: string;
  readonly editable?: boolean;
  readonly schemaVersion?: number;
  readonly __inputs?: readonly { readonly name: string; readonly type: string; readonly pluginId: string }[];
  readonly __requires?: readonly { readonly type: string; readonly id: string; readonly version: string }[];
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly Variable[] };
}

export interface LoadedDashboard {
  readonly file: string;
  readonly json: DashboardJson;
}

export function loadDashboards(): LoadedDashboard[] {
  return Object.values(DASHBOARD_FILES).map((file) => ({
    file,
    json: JSON.parse(readRepoFile(file)) as DashboardJson,
  }));
}

/** Every non-row panel, including panels nested in collapsed rows. */
export function visualPanels(dashboard: DashboardJson): Panel[] {
  const flatten = (panels: readonly Panel[]): Panel[] =>
    panels.flatMap((panel) =>
      panel.type === 'row' ? flatten(panel.panels ?? []) : [panel],
    );
  return flatten(dashboard.panels);
}

export interface LocatedTarget {
  readonly where: string;
  readonly target: Target;
}

export function dashboardTargets(): LocatedTarget[] {
  return loadDashboards().flatMap(({ file, json }) =>
    visualPanels(json).flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({
        where: `${file} › ${panel.title} › ${target.refId ?? '?'}`,
        target,
      })),
    ),
  );
}

/* ---------------------------------------------------------------- rules */

export interface AlertRuleYaml {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export interface RecordingRuleYaml {
  readonly record: string;
  readonly expr: string;
}

interface RuleFileYaml<Rule> {
  readonly groups: readonly { readonly name: string; readonly rules: readonly Rule[] }[];
}

function rulesOf<Rule>(file: string): Rule[] {
  const parsed = parse(readRepoFile(file)) as RuleFileYaml<Rule>;
  return parsed.groups.flatMap((group) => group.rules);
}

export function alertRules(): AlertRuleYaml[] {
  return [...rulesOf<AlertRuleYaml>(RULE_FILES.alerts), ...rulesOf<AlertRuleYaml>(RULE_FILES.sloAlerts)];
}

/** The level:metric:operation recording rules of rules/hermes-recording.yml. */
export function recordingRules(): RecordingRuleYaml[] {
  return rulesOf<RecordingRuleYaml>(RULE_FILES.recording);
}

/** The SLO recording rules, named as sloth names them (rules/hermes-slo-recording.yml). */
export function sloRecordingRules(): (RecordingRuleYaml & { readonly labels?: Record<string, string> })[] {
  return rulesOf(RULE_FILES.sloRecording);
}

/* ---------------------------------------------------------------- rule tests */

export interface AlertRuleTestYaml {
  readonly eval_time: string;
  readonly alertname: string;
  readonly exp_alerts?: readonly {
    readonly exp_labels?: Record<string, string>;
    readonly exp_annotations?: Record<string, string>;
  }[];
}

interface RuleTestFileYaml {
  readonly tests: readonly { readonly name: string; readonly alert_rule_test?: readonly AlertRuleTestYaml[] }[];
}

export const RULE_TEST_DIR = 'rules/tests';

export function alertRuleTests(): AlertRuleTestYaml[] {
  return listRepoDir(RULE_TEST_DIR, '.yml').flatMap((file) => {
    const parsed = parse(readRepoFile(file)) as RuleTestFileYaml;
    return parsed.tests.flatMap((test) => test.alert_rule_test ?? []);
  });
}
