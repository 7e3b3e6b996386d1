/**
 * The real Prometheus tooling: rule files parse, rule unit tests pass, prometheus.yml is valid,
 * every dashboard query parses as PromQL (dashboard-linter's target-promql-rule), and amtool
 * accepts alertmanager.yml. Skipped with a printed reason when a tool is missing (an error under CI).
 *
 * One vitest test per rule-test file, each with a timeout of three times its promtool run
 * measured with both cores busy (rules/tests/*.yml; the numbers are in RULE_TEST_SECONDS).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { amtool, promtool } from '../support/tools.js';
import { dashboardTargets, listRepoDir, loadDashboards, repoRoot, RULE_TEST_DIR } from './bundle.js';
import { labelValuesSelector } from './promql.js';

const tool = promtool();
const am = amtool();

/**
 * Seconds `promtool test rules <file>` took with both cores busy (load average 20 on the
 * 2-core machine), rounded up; each test gets three times that.
 */
const RULE_TEST_SECONDS: Readonly<Record<string, number>> = {
  'agent-alerts.yml': 8,
  'hermes-slos-bursty.yml': 20,
  'hermes-slos-outage.yml': 10,
  'hermes-slos-quiet.yml': 10,
  'hermes-slos-steady.yml': 15,
  'recording.yml': 2,
  'sidecar-alerts.yml': 5,
};

function run(args: readonly string[]): string {
  try {
    return execFileSync(tool.path as string, args, { cwd: repoRoot, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
  }
}

/** Grafana's variables replaced by what Prometheus would receive. */
function asPlainPromql(expr: string): string {
  // $__range: the dashboard's default time range (3 hours).
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$__range', '3h');
}

describe.skipIf(!tool.path)(`promtool ${tool.skipReason ?? ''}`.trim(), () => {
  const scratch = mkdtempSync(join(tmpdir(), 'hermes-monitoring-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('checks the rule files', () => {
    const files = listRepoDir('rules', '.yml');
    expect(files.length).toBeGreaterThanOrEqual(2);
    expect(run(['check', 'rules', ...files])).toContain('SUCCESS');
  });

  it('has a timeout budget for every rule-test file', () => {
    const files = listRepoDir(RULE_TEST_DIR, '.yml').map((file) => file.replace(`${RULE_TEST_DIR}/`, ''));
    expect(files.sort()).toEqual(Object.keys(RULE_TEST_SECONDS).sort());
  });

  for (const [file, seconds] of Object.entries(RULE_TEST_SECONDS)) {
    it(`passes the rule unit tests of ${file}`, () => {
      expect(run(['test', 'rules', `${RULE_TEST_DIR}/${file}`])).toContain('SUCCESS');
    }, 3 * seconds * 1000);
  }

  it('checks prometheus.yml', () => {
    expect(run(['check', 'config', 'prometheus.yml'])).toContain('SUCCESS');
  });

  it('parses every dashboard query as PromQL', () => {
    const expressions = [
      ...dashboardTargets().map(({ target }) => target.expr),
      ...loadDashboards().flatMap(({ json }) =>
        json.templating.list
          .filter((variable) => variable.type === 'query')
          .map((variable) => labelValuesSelector(String(variable.query))),
      ),
    ];
    const rules = expressions.map((expr, index) => ({
      record: `dashboard_query_${index}`,
      expr: asPlainPromql(expr),
    }));
    const file = join(scratch, 'dashboard-queries.yml');
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard-queries', rules }] }));
    expect(run(['check', 'rules', file])).toContain(`SUCCESS: ${rules.length} rules found`);
  });
});

describe.skipIf(!am.path)(`amtool ${am.skipReason ?? ''}`.trim(), () => {
  it('checks alertmanager.yml', () => {
    const output = execFileSync(am.path as string, ['check-config', 'alertmanager.yml'], { cwd: repoRoot, encoding: 'utf8', stdio: 'pipe' });
    expect(output).toContain('SUCCESS');
    expect(output).toContain('3 receivers');
    expect(output).toContain('4 inhibit rules');
  });
});
