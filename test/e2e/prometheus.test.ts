/**
 * Real Prometheus end to end: the sidecar binary, the traffic generator and Debian's prometheus
 * with the shipped rules. Through Prometheus' HTTP API, every dashboard panel query and every
 * recording rule parses and returns data, every rule group is healthy, and the critical API
 * error-ratio alert goes pending when the generator injects a burst of errors.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { sendTraffic, TrafficModel } from '../../tools/traffic.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';
import { RULES_DIR, ruleFiles, startPrometheus, substituteVariables, type RunningPrometheus } from '../support/prometheus.js';
import { prometheus as prometheusTool } from '../support/tools.js';

const tool = prometheusTool();
const DASHBOARDS = ['hermes-agent-overview.json', 'hermes-sidecar-health.json'];


interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

function panelQueries(): { panel: string; expr: string }[] {
  const queries: { panel: string; expr: string }[] = [];
  const walk = (panels: Panel[], dashboard: string) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        if (target.expr !== undefined) queries.push({ panel: `${dashboard}: ${panel.title ?? '?'}`, expr: substituteVariables(target.expr) });
      }
      walk(panel.panels ?? [], dashboard);
    }
  };
  for (const file of DASHBOARDS) {
    const dashboard = JSON.parse(readFileSync(new URL(`../../dashboards/${file}`, import.meta.url), 'utf8')) as { panels: Panel[] };
    walk(dashboard.panels, file);
  }
  return queries;
}

function recordingRules(): string[] {
  const names: string[] = [];
  for (const file of ruleFiles()) {
    const doc = parseYaml(readFileSync(file, 'utf8')) as { groups: { rules: { record?: string }[] }[] };
    for (const group of doc.groups) for (const rule of group.rules) if (rule.record !== undefined) names.push(rule.record);
  }
  return names;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(tool.path === undefined)(`real Prometheus end to end${tool.skipReason ? ` (${tool.skipReason})` : ''}`, () => {
  let sidecar: SidecarProcess;
  let prometheus: RunningPrometheus;
  const model = new TrafficModel({ seed: 7, agents: 6, errorRate: 0.05, faults: true });
  const traffic = new AbortController();
  let sending: Promise<void>;
  let trafficStartedAt = Date.now();
  const configDir = mkdtempSync(join(tmpdir(), 'sidecar-e2e-'));

  /** True once every panel query and recording rule has data and every rule has been evaluated. */
  const everythingAnswers = async (): Promise<boolean> => {
    for (const expr of [...panelQueries().map((query) => query.expr), ...recordingRules()]) {
      if (((await prometheus.query(expr)).data?.result.length ?? 0) === 0) return false;
    }
    const body = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as { data: { groups: { rules: { health: string }[] }[] } };
    return body.data.groups.every((group) => group.rules.every((rule) => rule.health !== 'unknown'));
  };

  beforeAll(async () => {
    // A small tool cap so the generator's tool-name churn trips the cardinality guard; a price for
    // one model only (the auxiliary one, also an agent's main model), so the cost panels see priced
    // and unpriced calls, and that agent's sessions (every token type priced) a session cost.
    writeFileSync(
      join(configDir, 'config.yaml'),
      'labels:\n  tool:\n    cap: 10\nprices:\n  openrouter:\n    google/gemini-3.5-flash: {input: 0.3, output: 2.5, cache_read: 0.075, cache_write: 0.3}\n',
    );
    // semconv on: the OpenTelemetry GenAI row and its recording rule need data too.
    sidecar = await startSidecarProcess([`--config.file=${join(configDir, 'config.yaml')}`, '--correlator.span-ttl=2', '--correlator.sweep-interval=1', '--metrics.semconv=true']);
    sending = sendTraffic({ url: `${sidecar.ingest}/v1/events`, model, rate: 600, batchSize: 60, signal: traffic.signal });
    trafficStartedAt = Date.now();
    prometheus = await startPrometheus(tool.path ?? 'prometheus', new URL(sidecar.web).host);
    // Enough scrapes and rule evaluations for every rate() window to hold two samples: waited for
    // as a condition (with a deadline), so the tests below report exactly what has no data.
    for (const deadline = Date.now() + 75_000; Date.now() < deadline && !(await everythingAnswers()); ) await sleep(1000);
  }, 90_000);

  afterAll(async () => {
    traffic.abort();
    await sending;
    await prometheus?.stop();
    await sidecar?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  it('answers every dashboard panel query with data', async () => {
    const queries = panelQueries();
    expect(queries.length).toBeGreaterThan(50);
    const failures: string[] = [];
    for (const { panel, expr } of queries) {
      const answer = await prometheus.query(expr);
      if (answer.status !== 'success') failures.push(`${panel}: ${answer.error ?? 'error'} in ${expr}`);
      else if ((answer.data?.result.length ?? 0) === 0) failures.push(`${panel}: no data for ${expr}`);
    }
    expect(failures).toEqual([]);
  });

  it('answers every recording rule with data', async () => {
    const names = recordingRules();
    expect(names.length).toBeGreaterThan(10);
    const empty: string[] = [];
    for (const name of names) if (((await prometheus.query(name)).data?.result.length ?? 0) === 0) empty.push(name);
    expect(empty).toEqual([]);
  });

  it('evaluates every rule group without errors', async () => {
    const body = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as {
      data: { groups: { name: string; file: string; rules: { name: string; health: string; lastError?: string }[] }[] };
    };
    const files = new Set(body.data.groups.map((group) => group.file.replace(RULES_DIR, '')));
    expect([...files].sort()).toEqual(ruleFiles().map((file) => file.replace(RULES_DIR, '')).sort());
    const unhealthy = body.data.groups.flatMap((group) =>
      group.rules.filter((rule) => rule.health !== 'ok').map((rule) => `${group.name}/${rule.name}: ${rule.health} ${rule.lastError ?? ''}`),
    );
    expect(unhealthy).toEqual([]);
  });

  it('takes the API error-ratio alert to pending when errors burst', async () => {
    // The 5-minute error ratio crosses the warning's 0.1 once the burst has lasted a sixteenth of
    // the healthy traffic before it (0.05 × healthy + 0.95 × burst > 0.1 × both); the deadline is generous.
    const healthySeconds = (Date.now() - trafficStartedAt) / 1000;
    model.setErrorRate(0.95);
    let state: string | undefined;
    for (const deadline = Date.now() + Math.min(healthySeconds * 1.2 + 30, 150) * 1000; Date.now() < deadline && state === undefined; ) {
      await sleep(1000);
      const body = (await (await fetch(`${prometheus.url}/api/v1/alerts`)).json()) as {
        data: { alerts: { labels: Record<string, string>; state: string }[] };
      };
      state = body.data.alerts.find((alert) => alert.labels.alertname === 'HermesApiErrorRatioHigh' && alert.labels.severity === 'warning')?.state;
    }
    model.setErrorRate(0.05);
    expect(['pending', 'firing']).toContain(state);
  }, 180_000);
});
