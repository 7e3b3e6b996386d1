/**
 * Dashboard lint, after grafana/dashboard-linter's rules: templated datasource, multi-select
 * job/instance variables, a unit and a description on every panel, $__rate_interval in every
 * rate, and the job/instance selection on every series. Then what an on-call engineer needs to
 * read a dashboard in ten seconds: thresholds on every stat, gauge and bar gauge (an error ratio
 * red at its alert's level, a spent budget red, no figure red merely above 80), burn-rate lines at
 * the alerts' factors, a first screen that says what is broken, since when, where and what it
 * cost, everything else collapsed, panels on the 24-column grid without overlap, read-only
 * dashboards, Grafana's own unit ids, and an instance list that keeps a down sidecar.
 */
import { describe, expect, it } from 'vitest';
import { defaults, grafana } from '../../monitoring/config.js';
import { BURN_ALERTS } from '../../monitoring/rules/slos.js';
import {
  dashboardTargets,
  loadDashboards,
  visualPanels,
  type DashboardJson,
  type DataSourceRef,
  type GridPos,
  type Panel,
  type Variable,
} from './bundle.js';
import { GRAFANA_UNITS } from './grafana-units.js';
import { PROVISIONED_DASHBOARD_FILES } from '../../monitoring/files.js';
import { parse as parseYaml } from 'yaml';
import { readRepoFile } from './bundle.js';
import { labelValuesSelector, vectorSelectors } from './promql.js';

const DATASOURCE_VARIABLE = '${datasource}';
/** Each dashboard's label_values variables, all of which must follow the job selection. */
const SCOPED_VARIABLES = new Map([
  ['hermes-agent-overview', ['instance', 'provider', 'model']],
  ['hermes-sidecar-health', ['instance']],
]);
const JOB_MATCHER = 'job=~"$job"';
const INSTANCE_MATCHER = 'instance=~"$instance"';

/** Every `datasource` object anywhere in the dashboard (panels, targets, variables). */
function datasourceRefs(value: unknown): DataSourceRef[] {
  if (Array.isArray(value)) return value.flatMap(datasourceRefs);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, entry]) =>
    key === 'datasource' && entry !== null && typeof entry === 'object'
      ? [entry as DataSourceRef]
      : datasourceRefs(entry),
  );
}

function variable(dashboard: DashboardJson, name: string): Variable | undefined {
  return dashboard.templating.list.find((candidate) => candidate.name === name);
}

/** `rate(`, `irate(` or `increase(` directly applied to a range selector. */
const RANGE_FUNCTION = /\b(?:rate|irate|increase)\(\s*[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?\[([^\]]*)\]/g;

const dashboards = loadDashboards();
const targets = dashboardTargets();

describe('dashboards', () => {
  it('ships the two dashboards with stable uids', () => {
    expect(dashboards.map(({ json }) => json.uid)).toEqual(['hermes-agent-overview', 'hermes-sidecar-health']);
  });

  it.each(dashboards.map(({ file, json }) => [file, json] as const))(
    '%s has a prometheus datasource variable and multi-select job/instance variables',
    (_file, json) => {
      expect(variable(json, 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
      for (const name of ['job', 'instance']) {
        expect(variable(json, name), name).toMatchObject({
          type: 'query',
          multi: true,
          includeAll: true,
          allValue: '.+',
          datasource: { uid: DATASOURCE_VARIABLE },
        });
      }
    },
  );

  it('gives the agent overview provider and model variables', () => {
    const overview = dashboards.find(({ json }) => json.uid === 'hermes-agent-overview')?.json;
    expect(overview).toBeDefined();
    for (const name of ['provider', 'model']) {
      expect(variable(overview as DashboardJson, name), name).toMatchObject({
        type: 'query',
        datasource: { uid: DATASOURCE_VARIABLE },
      });
    }
  });

  it.each(dashboards.map(({ file, json }) => [file, json] as const))(
    '%s references data sources only through $datasource',
    (_file, json) => {
      const refs = datasourceRefs(json);
      expect(refs.length).toBeGreaterThan(0);
      expect(refs.filter((ref) => ref.uid !== DATASOURCE_VARIABLE)).toEqual([]);
      expect(refs.some((ref) => ref.uid === grafana.datasourceUid)).toBe(false);
    },
  );

  describe.each(dashboards.map(({ file, json }) => [file, json] as const))('%s panels', (_file, json) => {
    const panels = visualPanels(json);

    it('have unique ids', () => {
      const ids = panels.map((panel) => panel.id);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it.each(panels.map((panel) => [panel.title, panel] as const))('%s: unit, description, datasource, targets', (_title, panel) => {
      expect(panel.fieldConfig?.defaults?.unit ?? '', 'unit').not.toBe('');
      expect(panel.description ?? '', 'description').not.toBe('');
      expect(panel.datasource?.uid, 'panel datasource').toBe(DATASOURCE_VARIABLE);
      expect(panel.targets?.length ?? 0, 'targets').toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        expect(target.datasource?.uid, 'target datasource').toBe(DATASOURCE_VARIABLE);
      }
    });
  });
});

describe('dashboard queries', () => {
  it.each(targets.map(({ where, target }) => [where, target.expr, target.instant === true] as const))(
    '%s uses $__rate_interval and the job/instance selection',
    (_where, expr, instant) => {
      // A range query reads rates over $__rate_interval; an instant query may also total the
      // dashboard's range ($__range) or the last hour (spend).
      const windows = instant ? ['$__rate_interval', '$__range', '1h'] : ['$__rate_interval'];
      const selectors = vectorSelectors(expr);
      expect(selectors.length).toBeGreaterThan(0);
      for (const selector of selectors) {
        expect(selector.matchers, selector.name).toContain(JOB_MATCHER);
        expect(selector.matchers, selector.name).toContain(INSTANCE_MATCHER);
        // Recording-rule series are already rates (5m); they never carry a range here.
        if (selector.range !== undefined) expect(windows, selector.name).toContain(selector.range);
      }
      for (const [, range] of expr.matchAll(RANGE_FUNCTION)) expect(windows).toContain(range);
    },
  );

  it.each(dashboards.map(({ file, json }) => [file, json] as const))('%s scopes its query variables to the selected job', (_file, json) => {
    const names = SCOPED_VARIABLES.get(json.uid);
    expect(names, `the variables ${json.uid} must scope`).toBeDefined();
    for (const name of names ?? []) {
      const query = variable(json, name)?.query;
      expect(query, `${json.uid} has a ${name} variable`).toBeDefined();
      expect(labelValuesSelector(typeof query === 'string' ? query : JSON.stringify(query)), `${json.uid} ${name}`).toContain(JOB_MATCHER);
    }
  });
});

/* ---------------------------------------------------------------- on-call reading */

/** What Grafana applies to a panel that sets no thresholds: red above 80, whatever the figure. */
const GRAFANA_DEFAULT_STEPS = [
  { color: 'green', value: null },
  { color: 'red', value: 80 },
];
const COLORED_KINDS = new Set(['stat', 'gauge', 'bargauge']);
const RANKING_KINDS = new Set(['bargauge', 'table', 'barchart', 'piechart']);
const GRID_COLUMNS = 24;
/** Lines of the grid an on-call engineer sees without scrolling. */
const FIRST_SCREEN = 20;
const RED = new Set(['red', 'dark-red', 'semi-dark-red']);

interface Finding {
  readonly rule: string;
  readonly where: string;
}

const steps = (panel: Panel) => panel.fieldConfig?.defaults?.thresholds?.steps ?? [];
const redAt = (panel: Panel): (number | null)[] => steps(panel).filter((step) => RED.has(step.color)).map((step) => step.value);
const linesShown = (panel: Panel) => ['line', 'dashed', 'line+area', 'dashed+area'].includes(panel.fieldConfig?.defaults?.custom?.thresholdsStyle?.mode ?? 'off');

function overlaps(a: GridPos, b: GridPos): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** Pairs of panels sharing a grid cell. */
function overlapping(panels: readonly Panel[]): string[] {
  const found: string[] = [];
  panels.forEach((panel, index) => {
    for (const other of panels.slice(index + 1)) {
      if (panel.gridPos !== undefined && other.gridPos !== undefined && overlaps(panel.gridPos, other.gridPos)) found.push(`${panel.title} / ${other.title}`);
    }
  });
  return found;
}

/** The alert level at which a ratio panel must turn red, by what its title names. */
function alertLevelOf(title: string): number | undefined {
  if (/error ratio/i.test(title)) return defaults.thresholds.apiErrorRatioCritical;
  if (/failure ratio/i.test(title)) return defaults.thresholds.toolFailureRatio;
  return undefined;
}

const burnFactors = BURN_ALERTS.flatMap((level) => level.pairs.map((pair) => pair.factor)).sort((a, b) => a - b);

/** Every finding of the on-call rules on one dashboard; each rule's test expects none. */
function lint(json: DashboardJson): Finding[] {
  const findings: Finding[] = [];
  const add = (rule: string, where: string) => findings.push({ rule, where: `${json.uid} › ${where}` });
  const panels = visualPanels(json);
  if (json.editable !== false) add('editable', 'dashboard');
  for (const panel of panels) {
    const unit = panel.fieldConfig?.defaults?.unit ?? '';
    if (!GRAFANA_UNITS.has(unit)) add('unit', `${panel.title}: ${unit}`);
    const own = steps(panel);
    if (COLORED_KINDS.has(panel.type) && (own.length === 0 || JSON.stringify(own) === JSON.stringify(GRAFANA_DEFAULT_STEPS))) add('thresholds', panel.title);
    const level = alertLevelOf(panel.title);
    if (level !== undefined && (!redAt(panel).includes(level) || (panel.type === 'timeseries' && !linesShown(panel)))) add('ratio-red-at-alert', panel.title);
    if (/budget left/i.test(panel.title)) {
      const [first, ...rest] = own;
      if (!RED.has(first?.color ?? '') || first?.value !== null || !rest.some((step) => step.value === 0 && !RED.has(step.color))) add('budget-red-below-0', panel.title);
    }
    if (/^burn rate/i.test(panel.title)) {
      const values = own.map((step) => step.value).filter((value): value is number => value !== null).sort((a, b) => a - b);
      if (!linesShown(panel) || JSON.stringify(values) !== JSON.stringify(burnFactors)) add('burn-rate-lines', panel.title);
    }
    for (const target of panel.targets ?? []) {
      if (RANKING_KINDS.has(panel.type) && target.instant !== true) add('ranking-instant', `${panel.title} ${target.refId ?? ''}`);
      if (/\btopk\(/.test(target.expr) && panel.type !== 'timeseries' && target.instant !== true) add('ranking-instant', `${panel.title} ${target.refId ?? ''}`);
    }
  }
  for (const panel of [...json.panels, ...panels]) {
    const pos = panel.gridPos;
    if (pos === undefined || pos.x < 0 || pos.w < 1 || pos.x + pos.w > GRID_COLUMNS) add('grid-bounds', `${panel.title} ${JSON.stringify(pos)}`);
  }
  for (const pair of overlapping(json.panels)) add('overlap', pair);
  const rows = json.panels.filter((panel) => panel.type === 'row');
  for (const row of rows) {
    for (const pair of overlapping(row.panels ?? [])) add('overlap', `${row.title}: ${pair}`);
    for (const nested of row.panels ?? []) if ((nested.gridPos?.y ?? 0) <= (row.gridPos?.y ?? 0)) add('overlap', `${row.title}: ${nested.title} above its row`);
  }
  rows.forEach((row, index) => {
    if ((index === 0) === (row.collapsed === true)) add('rows-collapsed', `${row.title} collapsed=${String(row.collapsed)}`);
  });
  for (const panel of json.panels) {
    if (panel.type !== 'row' && (panel.gridPos?.y ?? 0) + (panel.gridPos?.h ?? 0) > FIRST_SCREEN) add('rows-collapsed', `${panel.title} open below the first screen`);
  }
  const instance = variable(json, 'instance');
  const query = typeof instance?.query === 'string' ? instance.query : JSON.stringify(instance?.query ?? '');
  if (!/^label_values\(up\{[^}]*\}, instance\)$/.test(query)) add('instance-from-up', query);
  return findings;
}

const RULES = ['editable', 'unit', 'thresholds', 'ratio-red-at-alert', 'budget-red-below-0', 'burn-rate-lines', 'ranking-instant', 'grid-bounds', 'overlap', 'rows-collapsed', 'instance-from-up'];

describe('dashboards an on-call engineer reads in ten seconds', () => {
  const findings = dashboards.flatMap(({ json }) => lint(json));

  it.each(RULES)('%s: no finding', (rule) => {
    expect(findings.filter((finding) => finding.rule === rule).map((finding) => finding.where)).toEqual([]);
  });

  it('checks the panels the rules are about (they exist, so no rule passes empty)', () => {
    const all = dashboards.flatMap(({ json }) => visualPanels(json));
    expect(all.filter((panel) => /error ratio/i.test(panel.title)).length).toBeGreaterThanOrEqual(2);
    expect(all.filter((panel) => /failure ratio/i.test(panel.title)).length).toBeGreaterThanOrEqual(2);
    expect(all.filter((panel) => /budget left/i.test(panel.title)).length).toBeGreaterThanOrEqual(2);
    expect(all.filter((panel) => /^burn rate/i.test(panel.title)).length).toBe(3);
    expect(all.filter((panel) => COLORED_KINDS.has(panel.type)).length).toBeGreaterThan(10);
  });

  it('answers on the agent overview\'s first screen: broken, since when, which provider, model and tool, the last hour\'s spend', () => {
    const overview = dashboards.find(({ json }) => json.uid === 'hermes-agent-overview')?.json as DashboardJson;
    const firstScreen = overview.panels.filter((panel) => panel.type !== 'row');
    const exprs = firstScreen.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
    // Is it broken: the alerting ratios and the budget, coloured.
    expect(firstScreen.filter((panel) => panel.type === 'stat' && alertLevelOf(panel.title) !== undefined).length).toBe(2);
    expect(firstScreen.some((panel) => /budget left/i.test(panel.title))).toBe(true);
    // Since when: the ratios over time.
    expect(firstScreen.filter((panel) => panel.type === 'timeseries' && alertLevelOf(panel.title) !== undefined).length).toBe(2);
    // Which provider, model and tool.
    for (const label of ['provider', 'model', 'tool']) expect(exprs.some((expr) => new RegExp(`by \\([^)]*\\b${label}\\b`).test(expr)), label).toBe(true);
    // The money of the last hour, counted (increase over 1h), not a rate scaled by 3600.
    const spend = exprs.filter((expr) => expr.includes('hermes_cost_usd_total'));
    expect(spend.length).toBeGreaterThan(0);
    for (const expr of spend) expect(expr).toMatch(/increase\(hermes_cost_usd_total\{[^}]*\}\[1h\]\)/);
  });

  it('opens with few queries: only the first screen runs until a row is expanded', () => {
    for (const { json } of dashboards) {
      const open = json.panels.filter((panel) => panel.type !== 'row').flatMap((panel) => panel.targets ?? []);
      // Before the rows were collapsed, 76 panels and about 100 queries ran every refresh.
      expect(open.length, json.uid).toBeLessThanOrEqual(16);
    }
  });
});

/* ---------------------------------------------------------------- import and provisioning */

describe('Grafana import and provisioning', () => {
  const provisioned = Object.values(PROVISIONED_DASHBOARD_FILES).map((file) => ({ file, json: JSON.parse(readRepoFile(file)) as DashboardJson }));
  const datasourceDefault = (json: DashboardJson) => variable(json, 'datasource')?.current?.value;

  it.each(dashboards.map(({ file, json }) => [file, json] as const))('%s offers a Prometheus data source choice on import', (_file, json) => {
    expect(json.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    // Grafana writes the chosen data source wherever ${DS_PROMETHEUS} stands: the datasource variable's default.
    expect(datasourceDefault(json)).toBe('${DS_PROMETHEUS}');
    const requires = json.__requires ?? [];
    expect(requires.find((requirement) => requirement.type === 'grafana')?.version).toMatch(/^12\.3\./);
    expect(requires.some((requirement) => requirement.type === 'datasource' && requirement.id === 'prometheus')).toBe(true);
    const panelTypes = new Set(visualPanels(json).map((panel) => panel.type));
    expect(new Set(requires.filter((requirement) => requirement.type === 'panel').map((requirement) => requirement.id))).toEqual(panelTypes);
    expect(json.schemaVersion).toBe(42);
  });

  it.each(provisioned.map(({ file, json }) => [file, json] as const))('%s defaults to the provisioned data source and is otherwise the import copy', (file, json) => {
    expect(json.__inputs).toBeUndefined();
    expect(datasourceDefault(json)).toBe(grafana.datasourceUid);
    const imported = dashboards.find(({ json: candidate }) => candidate.uid === json.uid)?.json;
    expect(imported, file).toBeDefined();
    const { __inputs: _inputs, __requires: _requires, templating: _importTemplating, ...importRest } = imported as DashboardJson;
    const { templating: _templating, ...provisionedRest } = json;
    expect(provisionedRest).toEqual(importRest);
  });

  it('provisions a data source that is not the default, with the uid the provisioned dashboards use', () => {
    const config = parseYaml(readRepoFile('dashboards/provisioning/datasources/prometheus.yml')) as { datasources: { uid: string; isDefault: boolean }[] };
    expect(config.datasources).toEqual([expect.objectContaining({ uid: grafana.datasourceUid, isDefault: false })]);
    const provider = readRepoFile('dashboards/provisioning/dashboards/hermes.yml');
    expect(provider).toContain(`path: ${grafana.dashboardsPath}`);
    expect(provider).toContain(`dashboards/provisioned:${grafana.dashboardsPath}`);
  });
});
