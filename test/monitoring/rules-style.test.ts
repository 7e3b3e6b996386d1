/**
 * Alert and recording-rule conventions (monitoring-mixins style guide), the runbook that backs
 * every alert, and rule-test coverage: every alert has a "not yet" and a "fires" case.
 */
import { describe, expect, it } from 'vitest';
import { defaults } from '../../monitoring/config.js';
import { SPEND_ALERT } from '../../monitoring/rules/budget.js';

const { runbookBase, selector } = defaults;
import { alertRules, alertRuleTests, loadDashboards, readRepoFile, recordingRules, sloRecordingRules, visualPanels } from './bundle.js';
import { vectorSelectors } from './promql.js';

const SEVERITIES = ['critical', 'warning', 'info'];
const RECORDING_NAME = /^[a-z][a-z0-9_]*:[a-z][a-z0-9_]*:[a-z][a-z0-9_]*$/;
const ALERT_NAME = /^Hermes[A-Z][A-Za-z0-9]*$/;

/** GitHub's heading anchor: lower-case, punctuation dropped, spaces to hyphens. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function runbookAnchors(): Set<string> {
  const headings = readRepoFile('docs/runbook.md')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => line.replace(/^#+ /, ''));
  return new Set(headings.map(githubAnchor));
}

const alerts = alertRules();
const alertNames = [...new Set(alerts.map((rule) => rule.alert))];

describe('alerting rules', () => {
  it.each(alerts.map((rule) => [`${rule.alert} (${rule.labels?.severity})`, rule] as const))(
    '%s follows the style guide',
    (_name, rule) => {
      expect(rule.alert).toMatch(ALERT_NAME);
      expect(SEVERITIES).toContain(rule.labels?.severity);
      // The SLO burn alerts also carry sloth's labels: its dashboard's page and ticket stats select on them.
      const expected = rule.alert?.endsWith('BudgetBurn') === true ? ['severity', 'sloth_service', 'sloth_severity'] : ['severity'];
      expect(Object.keys(rule.labels ?? {}).sort()).toEqual(expected);
      if (rule.alert?.endsWith('BudgetBurn') === true) expect(rule.labels?.sloth_severity).toBe(rule.labels?.severity === 'critical' ? 'page' : 'ticket');
      expect(Object.keys(rule.annotations ?? {}).sort()).toEqual(['description', 'runbook_url', 'summary']);
      expect(rule.annotations?.summary).toMatch(/^[A-Z].*\.$/);
      expect(rule.annotations?.summary).not.toContain('{{');
      expect(rule.annotations?.description).toContain('{{ $labels.');
      expect(rule.annotations?.runbook_url).toBe(`${runbookBase}#${rule.alert.toLowerCase()}`);
      expect(rule.for).toMatch(/^\d+[mh]$/);
    },
  );

  it('pairs severities only under one name, warning with critical', () => {
    const severitiesOf = (name: string) => alerts.filter((rule) => rule.alert === name).map((rule) => rule.labels?.severity);
    const paired = alertNames.filter((name) => severitiesOf(name).length > 1);
    // The SLO burns page and ticket under one name; without a pair this test would check nothing.
    expect(paired).toContain('HermesApiAvailabilityBudgetBurn');
    for (const name of paired) expect(severitiesOf(name).sort(), name).toEqual(['critical', 'warning']);
  });

  it('selects the sidecar job on every series, raw and recorded', () => {
    for (const rule of [...alerts, ...recordingRules(), ...sloRecordingRules()]) {
      for (const found of vectorSelectors(rule.expr)) {
        expect(found.matchers, `${found.name} in ${rule.expr}`).toContain(selector);
      }
    }
  });

  it('has a runbook section for every alert', () => {
    const anchors = runbookAnchors();
    expect(alertNames.filter((name) => !anchors.has(name.toLowerCase()))).toEqual([]);
  });

  it('points the runbook only at dashboards and panels that exist', () => {
    const dashboards = loadDashboards();
    const known = new Set([
      ...dashboards.map(({ json }) => json.title),
      ...dashboards.flatMap(({ json }) => visualPanels(json).map((panel) => panel.title)),
    ]);
    // Panels are cited in italics, optionally after the dashboard: *Agent overview → Panel*.
    const withoutCode = readRepoFile('docs/runbook.md').replace(/`[^`]*`/g, '');
    const cited = [...withoutCode.matchAll(/(?<!\*)\*([^*]+)\*(?!\*)/g)].map(
      ([, text = '']) => text.split('→').pop()?.replace(/\s+/g, ' ').trim() ?? '',
    );
    expect(cited.length).toBeGreaterThan(20);
    expect(cited.filter((title) => !known.has(title))).toEqual([]);
  });

  it('has a runbook section only for alerts that exist', () => {
    const sections = readRepoFile('docs/runbook.md')
      .split('\n')
      .filter((line) => line.startsWith('## '))
      .map((line) => line.slice(3).trim());
    // The spend budget alert exists once thresholds.monthlyBudgetUsd is set (slos.test.ts builds it).
    expect(sections.filter((section) => !alertNames.includes(section) && section !== SPEND_ALERT)).toEqual([]);
    expect(sections).toContain(SPEND_ALERT);
  });
});

describe('rule unit tests', () => {
  const cases = alertRuleTests();

  it.each(alertNames.map((name) => [name] as const))('%s has a "not firing" and a "firing" case', (name) => {
    const ofAlert = cases.filter((test) => test.alertname === name);
    expect(ofAlert.some((test) => (test.exp_alerts ?? []).length === 0), 'not firing').toBe(true);
    const firing = ofAlert.flatMap((test) => test.exp_alerts ?? []);
    expect(firing.length, 'firing').toBeGreaterThan(0);
    for (const expected of firing) {
      expect(Object.keys(expected.exp_annotations ?? {}).sort()).toEqual(['description', 'runbook_url', 'summary']);
      expect(expected.exp_labels?.severity).toBeDefined();
    }
  });

  it('covers both severities of paired alerts', () => {
    for (const name of alertNames) {
      const severities = new Set(alerts.filter((rule) => rule.alert === name).map((rule) => rule.labels?.severity));
      const tested = new Set(
        cases
          .filter((test) => test.alertname === name)
          .flatMap((test) => test.exp_alerts ?? [])
          .map((expected) => expected.exp_labels?.severity),
      );
      expect([...severities].filter((severity) => !tested.has(severity)), name).toEqual([]);
    }
  });
});

describe('recording rules', () => {
  it.each(recordingRules().map((rule) => [rule.record] as const))('%s is named level:metric:operation', (name) => {
    expect(name).toMatch(RECORDING_NAME);
    const [, metric = ''] = name.split(':');
    expect(metric.startsWith('hermes_'), 'metric part names a hermes metric').toBe(true);
    expect(metric.endsWith('_total'), 'strip _total after rate()').toBe(false);
  });
});
