/**
 * The two shapes a dashboard ships in. Imported through Grafana's *Dashboards → Import*, a
 * dashboard declares its data source as an input (`__inputs`): the import screen offers a choice
 * of Prometheus data source and writes the chosen uid wherever `${DS_PROMETHEUS}` stands (here,
 * the default of the `datasource` variable), and `__requires` names the Grafana version and
 * plugins it needs. Provisioning from files does no such substitution, so the provisioned copy
 * defaults the `datasource` variable to the provisioned data source's uid instead; both keep
 * the variable, so a viewer can switch data sources either way.
 */
import { VariableType, type Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { grafana } from '../config.js';

/** The import input every panel's data source comes from. */
export const DATASOURCE_INPUT = 'DS_PROMETHEUS';

/**
 * Oldest Grafana the dashboards are stated for: they are schemaVersion 42, the last schema of
 * Grafana's v1 dashboard API (grafana/grafana#110517, September 2025), current in Grafana 12.3.
 */
export const MIN_GRAFANA_VERSION = '12.3.0';

export interface ImportInput {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly type: 'datasource';
  readonly pluginId: 'prometheus';
  readonly pluginName: 'Prometheus';
}

export interface Requirement {
  readonly type: 'grafana' | 'datasource' | 'panel';
  readonly id: string;
  readonly name: string;
  readonly version: string;
}

export type ImportableDashboard = Dashboard & { readonly __inputs: ImportInput[]; readonly __requires: Requirement[] };

const PANEL_NAMES: Readonly<Record<string, string>> = { stat: 'Stat', timeseries: 'Time series', bargauge: 'Bar gauge', row: 'Row' };

/** The dashboard with its `datasource` variable defaulting to `uid` (shown as `text`). */
function withDatasourceDefault(dashboard: Dashboard, uid: string, text: string): Dashboard {
  const list = (dashboard.templating?.list ?? []).map((variable) =>
    variable.type === VariableType.Datasource ? { ...variable, current: { selected: true, text, value: uid } } : variable,
  );
  return { ...dashboard, templating: { ...dashboard.templating, list } };
}

/** Panel types used, nested panels of collapsed rows included, rows left out (a core layout element). */
function panelTypes(dashboard: Dashboard): string[] {
  const types = new Set<string>();
  const walk = (panels: readonly { type?: string; panels?: readonly unknown[] }[]) => {
    for (const panel of panels) {
      if (panel.type !== undefined && panel.type !== 'row') types.add(panel.type);
      walk((panel.panels ?? []) as { type?: string }[]);
    }
  };
  walk(dashboard.panels ?? []);
  return [...types].sort();
}

/** The file for Grafana's import screen (dashboards/*.json). */
export function forImport(dashboard: Dashboard): ImportableDashboard {
  const placeholder = `\${${DATASOURCE_INPUT}}`;
  return {
    __inputs: [
      {
        name: DATASOURCE_INPUT,
        label: 'Prometheus',
        description: 'The Prometheus (or compatible store) holding the Hermes sidecars\' series and the bundle\'s recording rules.',
        type: 'datasource',
        pluginId: 'prometheus',
        pluginName: 'Prometheus',
      },
    ],
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: MIN_GRAFANA_VERSION },
      { type: 'datasource', id: 'prometheus', name: 'Prometheus', version: '1.0.0' },
      ...panelTypes(dashboard).map((type): Requirement => ({ type: 'panel', id: type, name: PANEL_NAMES[type] ?? type, version: '' })),
    ],
    ...withDatasourceDefault(dashboard, placeholder, placeholder),
  };
}

/** The file the provisioning provider loads (dashboards/provisioned/*.json): the provisioned data source by uid. */
export function forProvisioning(dashboard: Dashboard): Dashboard {
  return withDatasourceDefault(dashboard, grafana.datasourceUid, grafana.datasourceName);
}
