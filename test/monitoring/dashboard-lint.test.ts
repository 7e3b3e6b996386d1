/**
 * Dashboard lint, after grafana/dashboard-linter's rules: templated datasource, multi-select
 * job/instance variables, a unit and a description on every panel, $__rate_interval in every
 * rate, and the job/instance selection on every series.
 */
import { describe, expect, it } from 'vitest';
import { grafana } from '../../monitoring/config.js';
import {
  dashboardTargets,
  loadDashboards,
  visualPanels,
  type DashboardJson,
  type DataSourceRef,
  type Variable,
} from './bundle.js';
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
  it.each(targets.map(({ where, target }) => [where, target.expr] as const))(
    '%s uses $__rate_interval and the job/instance selection',
    (_where, expr) => {
      const selectors = vectorSelectors(expr);
      expect(selectors.length).toBeGreaterThan(0);
      for (const selector of selectors) {
        expect(selector.matchers, selector.name).toContain(JOB_MATCHER);
        expect(selector.matchers, selector.name).toContain(INSTANCE_MATCHER);
        // Recording-rule series are already rates (5m); they never carry a range here.
        if (selector.range !== undefined) expect(selector.range, selector.name).toBe('$__rate_interval');
      }
      for (const [, range] of expr.matchAll(RANGE_FUNCTION)) expect(range).toBe('$__rate_interval');
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
