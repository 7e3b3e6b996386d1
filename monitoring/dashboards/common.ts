/**
 * Dashboard building blocks on top of @grafana/grafana-foundation-sdk.
 *
 * Panels are declared as plain data (PanelSpec) and turned into SDK builders here, so every
 * panel gets the same datasource variable, legend, tooltip and id scheme, and the dashboard
 * files stay short enough to read as a list of questions an on-call engineer asks.
 */
import * as common from '@grafana/grafana-foundation-sdk/common';
import type { Builder, Dataquery } from '@grafana/grafana-foundation-sdk/cog';
import {
  DashboardBuilder,
  DashboardCursorSync,
  DashboardLinkBuilder,
  DashboardLinkType,
  DatasourceVariableBuilder,
  MappingType,
  QueryVariableBuilder,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  VariableRefresh,
  VariableSort,
  type Dashboard,
  type DataSourceRef,
  type GridPos,
  type Panel,
  type ThresholdsConfig,
  type ValueMapping,
  type VariableModel,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as BarGaugePanelBuilder } from '@grafana/grafana-foundation-sdk/bargauge';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatPanelBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { grafana } from '../config.js';
import { histogramSeries, quantileLabels, series, type HistogramKind } from '../promql.js';
import { GRID_COLUMNS, pack } from './layout.js';
import type { Steps } from './thresholds.js';

/** Every panel and query reads from the data source the viewer picked; no uid is hard-coded. */
export const DATASOURCE: DataSourceRef = { type: 'prometheus', uid: '${datasource}' };

/**
 * PromQL over the sidecars a dashboard shows: the bundle's selector (monitoring/config.ts) plus
 * the viewer's job/instance selection, on every series.
 */
export interface Promql {
  /** `name{selector, job=~"$job", instance=~"$instance", ...extra}` */
  selected(name: string, ...extra: readonly string[]): string;
  /** `rate(name{selection}[$__rate_interval])` */
  rateOf(name: string, ...extra: readonly string[]): string;
  /** Quantile of a catalogue histogram over the selected sidecars, split by `labels`. */
  quantileOf(quantile: number, histogram: string, labels: readonly string[], ...extra: readonly string[]): string;
  /** The histograms the queries read (classic buckets or native histograms). */
  readonly histograms: HistogramKind;
}

/** The viewer's job/instance selection, after the bundle's selector. */
export const SELECTION = ['job=~"$job"', 'instance=~"$instance"'] as const;

/** Grafana's window for rate(): at least four scrape intervals, so it never comes out empty. */
export const RATE_INTERVAL = '$__rate_interval';

/** The dashboard's whole time range: the window of an instant query that ranks over it. */
export const RANGE = '$__range';

export function promql(selector: string, histograms: HistogramKind = 'classic'): Promql {
  const selected = (name: string, ...extra: readonly string[]): string => series(name, selector, ...SELECTION, ...extra);
  const rateOf = (name: string, ...extra: readonly string[]): string => `rate(${selected(name, ...extra)}[${RATE_INTERVAL}])`;
  return {
    selected,
    rateOf,
    histograms,
    quantileOf: (quantile, histogram, labels, ...extra) =>
      `histogram_quantile(${quantile}, ${sumBy(quantileLabels(labels, histograms), rateOf(histogramSeries(histogram, histograms), ...extra))})`,
  };
}

/** `sum by (labels) (inner)`; a bare `sum(inner)` when no label is kept. */
export function sumBy(labels: readonly string[], inner: string): string {
  return labels.length === 0 ? `sum(${inner})` : `sum by (${labels.join(', ')}) (${inner})`;
}

export interface Query {
  readonly expr: string;
  readonly legend: string;
  /** Instant queries suit "right now" stats; range is the default. */
  readonly instant?: boolean;
}

interface PanelBase {
  readonly title: string;
  readonly description: string;
  readonly unit: string;
  readonly queries: readonly Query[];
  readonly width?: number;
  readonly height?: number;
  readonly min?: number;
  readonly max?: number;
}

export interface TimeseriesSpec extends PanelBase {
  readonly kind: 'timeseries';
  readonly stacked?: boolean;
  /** Drawn as horizontal lines (alert levels, burn-rate factors). */
  readonly thresholdLines?: Steps;
}

export interface StatSpec extends PanelBase {
  readonly kind: 'stat';
  /** `name` shows the legend instead of the value (build info). */
  readonly show?: 'value' | 'name';
  readonly mappings?: readonly ValueMapping[];
  /** Required: Grafana's default (red at 80) means nothing for any figure here. */
  readonly thresholds: Steps;
}

/** A ranking at one instant: every query runs as an instant query (a range query of topk ranks each step apart). */
export interface BarGaugeSpec extends PanelBase {
  readonly kind: 'bargauge';
  readonly thresholds: Steps;
}

export type PanelSpec = TimeseriesSpec | StatSpec | BarGaugeSpec;

export interface RowSpec {
  readonly title: string;
  readonly panels: readonly PanelSpec[];
}

/** The line a first screen ends above: what an on-call engineer sees without scrolling. */
export const FIRST_SCREEN_LINES = 20;

export function timeseries(spec: Omit<TimeseriesSpec, 'kind'>): TimeseriesSpec {
  return { kind: 'timeseries', ...spec };
}

export function stat(spec: Omit<StatSpec, 'kind'>): StatSpec {
  return { kind: 'stat', ...spec };
}

export function bargauge(spec: Omit<BarGaugeSpec, 'kind'>): BarGaugeSpec {
  return { kind: 'bargauge', ...spec };
}

/** Value mapping for 0/1 health series such as `up`. */
export function upDownMapping(): ValueMapping {
  return {
    type: MappingType.ValueToText,
    options: {
      '0': { text: 'DOWN', color: 'red', index: 0 },
      '1': { text: 'UP', color: 'green', index: 1 },
    },
  };
}

const DEFAULT_WIDTH = 8;
const DEFAULT_HEIGHT = 8;
const STAT_HEIGHT = 4;

function refId(index: number): string {
  return String.fromCharCode('A'.charCodeAt(0) + index);
}

function target(query: Query, index: number, instant: boolean): DataqueryBuilder {
  const builder = new DataqueryBuilder()
    .refId(refId(index))
    .datasource(DATASOURCE)
    .expr(query.expr)
    .legendFormat(query.legend);
  return instant || query.instant === true ? builder.instant() : builder.range();
}

function thresholdsConfig(steps: Steps): ThresholdsConfigBuilder {
  return new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(steps.map((step) => ({ ...step })));
}

/** Settings shared by every panel kind (their builders share these method names). */
function applyCommon<
  B extends {
    id(id: number): B;
    title(title: string): B;
    description(description: string): B;
    unit(unit: string): B;
    datasource(ref: DataSourceRef): B;
    gridPos(gridPos: GridPos): B;
    min(min: number): B;
    max(max: number): B;
    thresholds(thresholds: Builder<ThresholdsConfig>): B;
    withTarget(target: Builder<Dataquery>): B;
  },
>(builder: B, spec: PanelSpec, id: number, gridPos: GridPos): B {
  let panel = builder
    .id(id)
    .title(spec.title)
    .description(spec.description)
    .unit(spec.unit)
    .datasource(DATASOURCE)
    .gridPos(gridPos);
  if (spec.min !== undefined) panel = panel.min(spec.min);
  if (spec.max !== undefined) panel = panel.max(spec.max);
  const steps = spec.kind === 'timeseries' ? spec.thresholdLines : spec.thresholds;
  if (steps !== undefined) panel = panel.thresholds(thresholdsConfig(steps));
  spec.queries.forEach((query, index) => {
    panel = panel.withTarget(target(query, index, spec.kind === 'bargauge'));
  });
  return panel;
}

function timeseriesPanel(spec: TimeseriesSpec, id: number, gridPos: GridPos): Builder<Panel> {
  let panel = applyCommon(new TimeseriesPanelBuilder(), spec, id, gridPos)
    .legend(
      new common.VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(common.LegendDisplayMode.List)
        .placement(common.LegendPlacement.Bottom),
    )
    .tooltip(
      new common.VizTooltipOptionsBuilder()
        .mode(common.TooltipDisplayMode.Multi)
        .sort(common.SortOrder.Descending),
    )
    .lineWidth(1)
    .fillOpacity(spec.stacked === true ? 30 : 10);
  if (spec.thresholdLines !== undefined) {
    panel = panel.thresholdsStyle(new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Line));
  }
  return spec.stacked === true
    ? panel.stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal))
    : panel;
}

function lastValue(): common.ReduceDataOptionsBuilder {
  return new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false);
}

function statPanel(spec: StatSpec, id: number, gridPos: GridPos): Builder<Panel> {
  const panel = applyCommon(new StatPanelBuilder(), spec, id, gridPos)
    .reduceOptions(lastValue())
    .graphMode(spec.show === 'name' ? common.BigValueGraphMode.None : common.BigValueGraphMode.Area)
    .colorMode(common.BigValueColorMode.Value)
    .textMode(spec.show === 'name' ? common.BigValueTextMode.Name : common.BigValueTextMode.Value);
  return spec.mappings === undefined ? panel : panel.mappings([...spec.mappings]);
}

function barGaugePanel(spec: BarGaugeSpec, id: number, gridPos: GridPos): Builder<Panel> {
  return applyCommon(new BarGaugePanelBuilder(), spec, id, gridPos)
    // Instant queries: one value per bar, ranked once (the query says over which window).
    .reduceOptions(lastValue())
    .displayMode(common.BarGaugeDisplayMode.Gradient)
    .orientation(common.VizOrientation.Horizontal);
}

function panelBuilder(spec: PanelSpec, id: number, gridPos: GridPos): Builder<Panel> {
  switch (spec.kind) {
    case 'timeseries':
      return timeseriesPanel(spec, id, gridPos);
    case 'stat':
      return statPanel(spec, id, gridPos);
    case 'bargauge':
      return barGaugePanel(spec, id, gridPos);
  }
}

function sizeOf(spec: PanelSpec): { width: number; height: number } {
  return { width: spec.width ?? DEFAULT_WIDTH, height: spec.height ?? (spec.kind === 'stat' ? STAT_HEIGHT : DEFAULT_HEIGHT) };
}

/* ---------------------------------------------------------------- variables */

export function datasourceVariable(): Builder<VariableModel> {
  return new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus');
}

/**
 * A multi-select label_values variable with "All" = `.+` (dashboard-linter's job/instance rule),
 * refreshed with the time range so recently appeared values show up.
 */
function labelValuesVariable(
  name: string,
  label: string,
  query: string,
  defaultValue?: string,
): Builder<VariableModel> {
  const variable = new QueryVariableBuilder(name)
    .label(label)
    .datasource(DATASOURCE)
    .query(query)
    .definition(query)
    .multi(true)
    .includeAll(true)
    .allValue('.+')
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc);
  // Multi-select variables keep their selection as arrays.
  const selection = defaultValue === undefined ? { text: ['All'], value: ['$__all'] } : { text: [defaultValue], value: [defaultValue] };
  return variable.current({ ...selection, selected: true });
}

/**
 * Jobs and instances come from `up`, which Prometheus writes for every target it tries to scrape:
 * a sidecar that is down stays in the list (with up = 0), where its build information would vanish.
 */
export function jobVariable(selector: string): Builder<VariableModel> {
  return labelValuesVariable('job', 'Job', `label_values(${series('up', selector)}, job)`);
}

export function instanceVariable(selector: string): Builder<VariableModel> {
  return labelValuesVariable('instance', 'Instance', `label_values(${series('up', selector, 'job=~"$job"')}, instance)`);
}

export function providerVariable(q: Promql): Builder<VariableModel> {
  return labelValuesVariable(
    'provider',
    'Provider',
    `label_values(${q.selected('hermes_api_requests_total')}, provider)`,
  );
}

export function modelVariable(q: Promql): Builder<VariableModel> {
  return labelValuesVariable(
    'model',
    'Model',
    `label_values(${q.selected('hermes_api_requests_total', 'provider=~"$provider"')}, model)`,
  );
}

/* ---------------------------------------------------------------- dashboard */

export interface DashboardSpec {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  readonly variables: readonly Builder<VariableModel>[];
  readonly rows: readonly RowSpec[];
}

/** Links to the other Hermes dashboards, keeping the time range and variables. */
function hermesDashboardsLink(): DashboardLinkBuilder {
  return new DashboardLinkBuilder('Hermes dashboards')
    .type(DashboardLinkType.Dashboards)
    .tags([grafana.tags[0]])
    .asDropdown(true)
    .includeVars(true)
    .keepTime(true)
    .targetBlank(false);
}

/**
 * Builds the dashboard; panel and row ids are numbered in layout order, starting at 1. The first
 * row is the first screen and stays open; every other row is collapsed, so a dashboard opened
 * runs the first screen's queries only.
 */
export function buildDashboard(spec: DashboardSpec): Dashboard {
  const dashboard = new DashboardBuilder(spec.title)
    .uid(spec.uid)
    .description(spec.description)
    .tags([...grafana.tags])
    // Dashboards are code (monitoring/dashboards/*.ts): an edit in the UI would be lost at the next build.
    .readonly()
    .tooltip(DashboardCursorSync.Crosshair)
    .time({ from: 'now-3h', to: 'now' })
    .timezone('browser')
    .refresh('1m')
    .link(hermesDashboardsLink())
    .variables([...spec.variables]);
  let nextId = 1;
  let top = 0;
  spec.rows.forEach((row, index) => {
    const collapsed = index > 0;
    const rowBuilder = new RowBuilder(row.title).id(nextId++).gridPos({ x: 0, y: top, w: GRID_COLUMNS, h: 1 }).collapsed(collapsed);
    const { positions, bottom } = pack(row.panels.map(sizeOf), top + 1);
    if (!collapsed && bottom > FIRST_SCREEN_LINES) throw new Error(`${spec.uid}: the open row "${row.title}" ends at line ${bottom}, below the first screen (${FIRST_SCREEN_LINES})`);
    const panels = row.panels.map((panel, panelIndex) => panelBuilder(panel, nextId++, positions[panelIndex] as GridPos));
    if (collapsed) {
      for (const panel of panels) rowBuilder.withPanel(panel);
      dashboard.withRow(rowBuilder);
      top += 1;
    } else {
      dashboard.withRow(rowBuilder);
      for (const panel of panels) dashboard.withPanel(panel);
      top = bottom;
    }
  });
  return dashboard.build();
}
