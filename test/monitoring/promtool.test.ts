/**
 * The real Prometheus tooling: rule files parse, rule unit tests pass, prometheus.yml is valid,
 * and every dashboard query parses as PromQL (dashboard-linter's target-promql-rule).
 * Skipped with a printed reason when promtool is missing (an error under CI).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { promtool } from '../support/tools.js';
import { dashboardTargets, listRepoDir, loadDashboards, repoRoot, RULE_TEST_DIR } from './bundle.js';
import { labelValuesSelector } from './promql.js';

const tool = promtool();

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

  it('passes the rule unit tests', () => {
    const files = listRepoDir(RULE_TEST_DIR, '.yml');
    expect(files.length).toBeGreaterThan(0);
    expect(run(['test', 'rules', ...files])).toContain('SUCCESS');
  });

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
