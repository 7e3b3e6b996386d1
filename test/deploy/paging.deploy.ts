/**
 * One incident, one page, end to end with the real tools: a real Prometheus evaluates the
 * bundle's rules over series a fake exporter serves, and sends its alerts to a real Alertmanager
 * running the shipped alertmanager.yml with its receivers pointed at this test's webhooks.
 *
 * Five incidents, each on its own host and provider (or tool), all at once:
 *
 *   hermes-total    anthropic   every logical call fails after three retries
 *   hermes-partial  openai      half the calls fail
 *   hermes-slow     google      every call succeeds, slower than the latency SLO's 81.92 s
 *   hermes-hung     mistral     calls stay in flight and none finishes
 *   hermes-tools    (terminal)  every tool call fails
 *
 * Time is compressed: 1 s scrapes and evaluations, the hung-call window 1 minute instead of
 * 10 (`thresholds.hungCallMinutes`), warnings' `for:` 45 s instead of 15 minutes, Alertmanager's
 * group_wait and group_interval seconds instead of minutes. The order that matters is kept: each
 * page fires before its incident's warnings, as it does at the shipped durations.
 *
 * Checked: the paging receiver gets exactly one notification per incident, holding that
 * incident's page and nothing else; the warnings of the incidents fire in Prometheus but never
 * reach a receiver (inhibited); nothing else is sent.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { alertmanagerConfig, RECEIVER_NAMES } from '../../monitoring/alertmanager.js';
import { RULE_FILES } from '../../monitoring/files.js';
import { build } from '../../monitoring/index.js';
import { eventually, Processes, startAlertmanager, waitReady } from '../support/fleet.js';
import { locate } from '../support/tools.js';

const tools = [
  locate('prometheus', "install Debian's prometheus package"),
  locate('prometheus-alertmanager', "install Debian's prometheus-alertmanager package"),
];
const skipReason = tools.find((tool) => tool.skipReason !== undefined)?.skipReason;

interface Incident {
  readonly name: string;
  readonly instance: string;
  /** The group key labels: provider or tool. */
  readonly group: Readonly<Record<string, string>>;
  /** The one alert that must page. */
  readonly page: string;
  /** Warnings of the same incident that must fire in Prometheus and reach nobody. */
  readonly warnings: readonly string[];
}

const INCIDENTS: readonly Incident[] = [
  { name: 'total provider outage', instance: 'hermes-total', group: { provider: 'anthropic' }, page: 'HermesApiAvailabilityBudgetBurn', warnings: ['HermesApiErrorRatioHigh', 'HermesApiRetryStorm'] },
  { name: 'partial provider outage', instance: 'hermes-partial', group: { provider: 'openai' }, page: 'HermesApiAvailabilityBudgetBurn', warnings: ['HermesApiErrorRatioHigh'] },
  { name: 'latency outage', instance: 'hermes-slow', group: { provider: 'google' }, page: 'HermesApiLatencyBudgetBurn', warnings: ['HermesApiLatencyHigh'] },
  { name: 'hung calls', instance: 'hermes-hung', group: { provider: 'mistral' }, page: 'HermesApiCallsHung', warnings: [] },
  { name: 'tool outage', instance: 'hermes-tools', group: { tool: 'terminal' }, page: 'HermesToolSuccessBudgetBurn', warnings: ['HermesToolFailureRatioHigh'] },
];

/** The series of the five hosts after `seconds` of their incidents (counters grow linearly). */
function exposition(seconds: number): string {
  const t = seconds;
  const lines: string[] = [];
  const counter = (name: string, labels: Record<string, string>, value: number) => {
    const text = Object.entries({ ...labels }).map(([key, entry]) => `${key}="${entry}"`).join(',');
    lines.push(`${name}{${text}} ${String(value)}`);
  };
  const call = (instance: string, provider: string) => ({ instance, kind: 'main', provider, model: 'model-1' });
  // Total outage: 2 logical calls a second, each 4 attempts (3 retried), all failing.
  const total = call('hermes-total', 'anthropic');
  counter('hermes_api_requests_total', { ...total, outcome: 'error' }, 8 * t);
  counter('hermes_api_errors_total', { ...total, reason: 'server_error', error_class: 'server', status_code: '503', retryable: 'true' }, 8 * t);
  counter('hermes_api_retries_total', { ...total, reason: 'server_error' }, 6 * t);
  counter('hermes_api_retries_exhausted_total', { ...total, reason: 'server_error' }, 2 * t);
  // Partial outage: half of 4 calls a second fail, no retries.
  const partial = call('hermes-partial', 'openai');
  counter('hermes_api_requests_total', { ...partial, outcome: 'success' }, 2 * t);
  counter('hermes_api_requests_total', { ...partial, outcome: 'error' }, 2 * t);
  counter('hermes_api_errors_total', { ...partial, reason: 'server_error', error_class: 'server', status_code: '500', retryable: 'false' }, 2 * t);
  // Latency outage: 2 successful calls a second, every one slower than 163.84 s.
  const slow = call('hermes-slow', 'google');
  counter('hermes_api_requests_total', { ...slow, outcome: 'success' }, 2 * t);
  for (const le of ['81.92', '163.84']) counter('hermes_api_request_duration_seconds_bucket', { ...slow, outcome: 'success', le }, 0);
  counter('hermes_api_request_duration_seconds_bucket', { ...slow, outcome: 'success', le: '+Inf' }, 2 * t);
  counter('hermes_api_request_duration_seconds_count', { ...slow, outcome: 'success' }, 2 * t);
  counter('hermes_api_request_duration_seconds_sum', { ...slow, outcome: 'success' }, 400 * t);
  // Hung calls: 100 calls finish in the first 20 s (Prometheus starts within them), then three
  // stay in flight and none finishes.
  const hung = call('hermes-hung', 'mistral');
  counter('hermes_api_requests_total', { ...hung, outcome: 'success' }, Math.min(100, 5 * t));
  counter('hermes_api_requests_in_flight', { instance: 'hermes-hung', kind: 'main', provider: 'mistral' }, 3);
  // Tool outage: 2 terminal calls a second, all failing.
  counter('hermes_tool_calls_total', { instance: 'hermes-tools', tool: 'terminal', status: 'error' }, 2 * t);
  return `${lines.join('\n')}\n`;
}

interface Notification {
  readonly receiver: string;
  readonly status: string;
  readonly groupLabels: Record<string, string>;
  readonly alerts: { readonly status: string; readonly labels: Record<string, string> }[];
}

/** The bundle's rules with the hung-call window at 1 minute and every non-zero `for:` at 45 s. */
function compressedRules(dir: string): string[] {
  const files = build({ thresholds: { hungCallMinutes: 1 } });
  return Object.values(RULE_FILES).map((path) => {
    const file = files.find((candidate) => candidate.path === path);
    if (file === undefined) throw new Error(`${path} not built`);
    const rules = parseYaml(file.contents) as { groups: { rules: { for?: string }[] }[] };
    for (const rule of rules.groups.flatMap((group) => group.rules)) if (rule.for !== undefined && rule.for !== '0m') rule.for = '45s';
    const target = join(dir, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, stringifyYaml(rules));
    return target;
  });
}

/** A copy of the shipped alertmanager.yml: receivers at the webhook, timers in seconds. */
function testAlertmanagerConfig(webhook: string): string {
  const config = alertmanagerConfig({
    paging: { webhook_configs: [{ url: `${webhook}/paging`, send_resolved: false }] },
    ticket: { webhook_configs: [{ url: `${webhook}/ticket`, send_resolved: false }] },
  }) as { route: { routes: Record<string, unknown>[] } };
  for (const route of config.route.routes) {
    route.group_wait = route.receiver === RECEIVER_NAMES.paging ? '1s' : '5s';
    route.group_interval = '10s';
    route.repeat_interval = '1h';
  }
  return stringifyYaml(config);
}

describe.skipIf(skipReason !== undefined)(`one incident, one page (${skipReason ?? 'prometheus, prometheus-alertmanager'})`, () => {
  const processes = new Processes();
  const scratch = mkdtempSync(join(tmpdir(), 'sidecar-paging-'));
  const notifications: Notification[] = [];
  const servers: Server[] = [];
  let prometheus = '';
  let started = 0;

  const listen = async (server: Server): Promise<string> => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  };

  beforeAll(async () => {
    const webhook = await listen(
      createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        request.on('end', () => {
          notifications.push({ ...(JSON.parse(body) as Notification), receiver: request.url?.slice(1) ?? '' });
          response.end('ok');
        });
      }),
    );
    writeFileSync(join(scratch, 'alertmanager.yml'), testAlertmanagerConfig(webhook));
    const alertmanager = await startAlertmanager(processes, scratch);

    started = Date.now();
    const exporter = await listen(createServer((_request, response) => response.end(exposition((Date.now() - started) / 1000))));
    writeFileSync(
      join(scratch, 'prometheus.yml'),
      stringifyYaml({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: compressedRules(scratch),
        alerting: { alertmanagers: [{ static_configs: [{ targets: [alertmanager.address] }] }] },
        scrape_configs: [{ job_name: 'hermes-sidecar', honor_labels: true, static_configs: [{ targets: [new URL(exporter).host] }] }],
      }),
    );
    const central = await processes.listening('prometheus', 'prometheus', [
      `--config.file=${join(scratch, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(scratch, 'data')}`,
      '--web.listen-address=127.0.0.1:0',
      '--log.level=info',
    ]);
    prometheus = `http://${central.address}`;
    await waitReady(`${prometheus}/-/ready`, central.stderr);
  });

  afterAll(async () => {
    await processes.stopAll();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    rmSync(scratch, { recursive: true, force: true });
  });

  const firing = async (): Promise<Record<string, string>[]> => {
    const url = `${prometheus}/api/v1/query?query=${encodeURIComponent('ALERTS{alertstate="firing"}')}`;
    const body = (await (await fetch(url)).json()) as { data: { result: { metric: Record<string, string> }[] } };
    return body.data.result.map((entry) => entry.metric);
  };

  it('pages each incident exactly once, with its page alone, and lets no warning of it through', async () => {
    // Every incident's warnings fire in Prometheus (so inhibition is what keeps them quiet).
    let missing: string[] = [];
    await eventually('every incident page and warning firing in Prometheus', 3 * 60_000, async () => {
      const names = new Set((await firing()).map((alert) => `${alert.alertname} ${alert.instance}`));
      const wanted = INCIDENTS.flatMap((incident) => [incident.page, ...incident.warnings].map((name) => `${name} ${incident.instance}`));
      missing = wanted.filter((name) => !names.has(name));
      return missing.length === 0 ? true : undefined;
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}; not firing: ${missing.join(', ')}`);
    });
    const paged = await eventually('a page for every incident', 60_000, async () => {
      const pages = notifications.filter((notification) => notification.receiver === 'paging');
      return INCIDENTS.every((incident) => pages.some((page) => page.alerts.some((alert) => alert.labels.instance === incident.instance))) ? pages : undefined;
    });
    console.log(`one incident, one page: all five pages arrived ${((Date.now() - started) / 1000).toFixed(0)} s after the incidents began`);
    // Long enough for the ticket route's group_wait (5 s) and two group intervals (10 s) to pass.
    await new Promise((resolve) => setTimeout(resolve, 25_000));

    const pages = notifications.filter((notification) => notification.receiver === 'paging');
    expect(pages.length, JSON.stringify(pages.map((page) => page.groupLabels))).toBe(INCIDENTS.length);
    expect(paged.length).toBeLessThanOrEqual(pages.length);
    for (const incident of INCIDENTS) {
      const mine = pages.filter((page) => page.alerts.some((alert) => alert.labels.instance === incident.instance));
      expect(mine, incident.name).toHaveLength(1);
      expect(mine[0]?.groupLabels, incident.name).toEqual({ job: 'hermes-sidecar', ...incident.group });
      expect(mine[0]?.alerts.map((alert) => `${alert.labels.alertname} ${alert.labels.severity} ${alert.status}`), incident.name).toEqual([`${incident.page} critical firing`]);
    }
    expect(notifications.filter((notification) => notification.receiver !== 'paging'), 'tickets').toEqual([]);

    // What each rule group costs per evaluation here (five hosts, minutes of data), for the record.
    const url = `${prometheus}/api/v1/query?query=${encodeURIComponent('prometheus_rule_group_last_duration_seconds')}`;
    const durations = (await (await fetch(url)).json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
    for (const { metric, value } of durations.data.result) console.log(`rule group ${metric.rule_group?.split(';').at(-1) ?? ''}: ${(Number(value[1]) * 1000).toFixed(2)} ms`);
  }, 6 * 60_000);
});
