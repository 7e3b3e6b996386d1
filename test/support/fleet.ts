/**
 * A fleet, as docs/scale-out.md describes it, with real components on 127.0.0.1, around a central
 * store the caller starts (test/deploy/fleet*.deploy.ts):
 *
 *   3 sidecars ◄─scrape─ Prometheus in agent mode ─remote_write─► central store
 *   (hosts a, b, c)       (sets job, instance, site)              (the shipped rules/)
 *                                                                          │ alerts
 *                                                                          ▼
 *                                                   prometheus-alertmanager ─► webhook receiver (this test)
 *
 * An error burst on host a must reach the receiver as HermesApiErrorRatioHigh for instance a only;
 * hosts b and c stay silent; the dashboards' fleet queries sum the three hosts exactly.
 *
 * The rules are the shipped files, except that HermesApiErrorRatioHigh's `for:` (15m)
 * becomes 10s so the test fits in a minute or two; monitoring/config.ts has no knob for `for:`
 * (it sets thresholds), so the test derives the variant from rules/hermes-alerts.yml and changes
 * nothing else. Every other alert keeps its shipped `for:` of 5 minutes or more, so none can fire
 * during the test: anything the receiver gets besides that alert is a failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { sendTraffic, TrafficModel } from '../../tools/traffic.js';
import { parseSamples } from './exposition.js';
import { startSidecarProcess, type SidecarProcess } from './process.js';
import { candidatePort, isAddressInUse, loggedListenAddress, retryOnAddressInUse } from './ports.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
const HOSTS = ['hermes-a', 'hermes-b', 'hermes-c'] as const;
const BURST_HOST = 'hermes-a';
const ALERT = 'HermesApiErrorRatioHigh';

interface WebhookAlert {
  readonly status: string;
  readonly labels: Record<string, string>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(500);
  }
}

export class Processes {
  private readonly children: { child: ChildProcess; stderr: () => string }[] = [];

  /**
   * Starts a program that binds 127.0.0.1:0 itself (`args` say so) and resolves with the address
   * it logs, and a reader of its log.
   */
  async listening(name: string, binary: string, args: string[]): Promise<{ address: string; stderr: () => string }> {
    const stderr = this.start(name, binary, args);
    const child = this.children.at(-1)!.child;
    return { address: await loggedListenAddress(child, name).address, stderr };
  }

  /**
   * Starts a program that cannot bind port 0 and tell which port it got (VictoriaMetrics logs
   * the address it was given): on a candidate port, until `ready` answers 200; started again on
   * another port when it exits because the port was taken.
   */
  async onCandidatePort(name: string, binary: string, args: (address: string) => string[], ready: string): Promise<{ address: string; stderr: () => string }> {
    return retryOnAddressInUse(async () => {
      const address = `127.0.0.1:${candidatePort()}`;
      const stderr = this.start(name, binary, args(address));
      const child = this.children.at(-1)!.child;
      const exited = new Promise<never>((_resolve, reject) =>
        child.once('exit', () => reject(new Error(`${name} exited before answering: ${stderr().slice(-2000)}`))),
      );
      exited.catch(() => undefined);
      await Promise.race([waitReady(`http://${address}${ready}`, stderr), exited]);
      return { address, stderr };
    });
  }

  start(name: string, binary: string, args: string[]): () => string {
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
    });
    child.once('exit', (code, signal) => {
      if (code !== 0 && signal === null && !isAddressInUse(stderr)) console.error(`${name} exited with ${code}: ${stderr.slice(-2000)}`);
    });
    this.children.push({ child, stderr: () => stderr });
    return () => stderr;
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      this.children.map(
        ({ child }) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
  }
}

export async function waitReady(url: string, stderr: () => string): Promise<void> {
  await eventually(`${url} to answer 200 (${stderr().slice(-500)})`, 60_000, async () => ((await fetch(url)).status === 200 ? true : undefined));
}

interface QueryResult {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

/**
 * A real Alertmanager on `scratch`/alertmanager.yml, clustering off, on a port of the kernel's
 * choice (it logs it: "Listening on", info level); resolves once /-/ready answers.
 */
export async function startAlertmanager(processes: Processes, scratch: string): Promise<{ readonly address: string }> {
  const alertmanager = await processes.listening('alertmanager', 'prometheus-alertmanager', [
    `--config.file=${join(scratch, 'alertmanager.yml')}`,
    `--storage.path=${join(scratch, 'alertmanager')}`,
    '--web.listen-address=127.0.0.1:0',
    '--cluster.listen-address=',
    '--log.level=info',
  ]);
  await waitReady(`http://${alertmanager.address}/-/ready`, alertmanager.stderr);
  return alertmanager;
}

function dashboardExpr(title: string): string {
  interface Panel {
    readonly title?: string;
    readonly panels?: Panel[];
    readonly targets?: { readonly expr?: string }[];
  }
  const dashboard = JSON.parse(readFileSync(join(REPO, 'dashboards/hermes-agent-overview.json'), 'utf8')) as { panels: Panel[] };
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  const expr = panels.find((panel) => panel.title === title)?.targets?.[0]?.expr;
  if (expr === undefined) throw new Error(`no panel "${title}" in the overview dashboard`);
  return expr;
}

/** A dashboard expression with its variables set the way Grafana sends "All" (allValue .+). */
/** The series the overview's instance variable lists instances of, with every job selected. */
function instanceVariableSelector(): string {
  const dashboard = JSON.parse(readFileSync(join(REPO, 'dashboards/hermes-agent-overview.json'), 'utf8')) as {
    templating: { list: { name: string; query?: unknown }[] };
  };
  const query = dashboard.templating.list.find((variable) => variable.name === 'instance')?.query;
  const selector = /^label_values\((.+), instance\)$/.exec(typeof query === 'string' ? query : '')?.[1];
  if (selector === undefined) throw new Error(`the overview's instance variable is not a label_values query: ${String(query)}`);
  return selector.replaceAll('$job', 'hermes-sidecar');
}

const withVariables = (expr: string, instance = '.+'): string =>
  expr.replaceAll('$job', 'hermes-sidecar').replaceAll('$instance', instance).replaceAll('$provider', '.+').replaceAll('$model', '.+');

/** What the central store's starter is given, and what it hands back. */
export interface StoreSetup {
  readonly processes: Processes;
  readonly scratch: string;
  /** host:port of Alertmanager. */
  readonly alertmanager: string;
  /** The shipped recording rules, and the alert rules with the short `for:`. */
  readonly ruleFiles: readonly string[];
}

export interface CentralStore {
  /** Base URL of its Prometheus query API (`/api/v1/query`, `/api/v1/label/...`). */
  readonly queryUrl: string;
  /** Where the agent remote-writes. */
  readonly writeUrl: string;
}

/** The alert rules with HermesApiErrorRatioHigh's `for:` shortened (see the header), written to `scratch`. */
function shortenedAlertRules(scratch: string): string {
  const alerts = parseYaml(readFileSync(join(REPO, 'rules/hermes-alerts.yml'), 'utf8')) as { groups: { rules: Record<string, unknown>[] }[] };
  let shortened = 0;
  for (const rule of alerts.groups.flatMap((group) => group.rules)) {
    if (rule.alert === ALERT) {
      rule.for = '10s';
      shortened += 1;
    }
  }
  expect(shortened).toBe(1);
  const file = join(scratch, 'hermes-alerts.yml');
  writeFileSync(file, stringifyYaml(alerts));
  return file;
}

/**
 * The fleet around the central store `startStore` starts, with its two checks: the page for the
 * burst host only, and the dashboards' fleet queries as exact sums of the sidecars' own /metrics.
 */
export function describeFleet(title: string, startStore: (setup: StoreSetup) => Promise<CentralStore>): void {
  describe(title, () => {
    const processes = new Processes();
    const scratch = mkdtempSync(join(tmpdir(), 'sidecar-fleet-'));
    const sidecars = new Map<string, SidecarProcess>();
    const models = new Map<string, TrafficModel>();
    const traffic = new AbortController();
    const senders: Promise<void>[] = [];
    const received: WebhookAlert[] = [];
    let webhook: Server;
    let central = '';

    const query = async (expr: string, time?: number): Promise<QueryResult[]> => {
      const url = `${central}/api/v1/query?query=${encodeURIComponent(expr)}${time === undefined ? '' : `&time=${time}`}`;
      const body = (await (await fetch(url)).json()) as { status: string; data: { result: QueryResult[] }; error?: string };
      if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
      return body.data.result;
    };
    const scalar = async (expr: string, time?: number): Promise<number> => Number((await query(expr, time))[0]?.value[1] ?? Number.NaN);

    beforeAll(async () => {
      const started = Date.now();
      // The on-call end: a webhook receiver that records every alert it is sent.
      webhook = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        request.on('end', () => {
          received.push(...(JSON.parse(body) as { alerts: WebhookAlert[] }).alerts);
          response.end('ok');
        });
      });
      await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
      const webhookPort = (webhook.address() as AddressInfo).port;

      writeFileSync(
        join(scratch, 'alertmanager.yml'),
        stringifyYaml({
          route: { receiver: 'on-call', group_by: ['alertname', 'instance', 'severity'], group_wait: '1s', group_interval: '1s', repeat_interval: '1h' },
          receivers: [{ name: 'on-call', webhook_configs: [{ url: `http://127.0.0.1:${webhookPort}/alerts`, send_resolved: false }] }],
        }),
      );
      const alertmanager = await startAlertmanager(processes, scratch);

      const store = await startStore({
        processes,
        scratch,
        alertmanager: alertmanager.address,
        ruleFiles: [join(REPO, 'rules/hermes-recording.yml'), shortenedAlertRules(scratch)],
      });
      central = store.queryUrl;

      // The hosts: one sidecar each, nothing host-specific in their configuration.
      for (const host of HOSTS) sidecars.set(host, await startSidecarProcess());

      // Site Prometheus in agent mode: job, instance and site come from its scrape config.
      writeFileSync(
        join(scratch, 'agent.yml'),
        stringifyYaml({
          global: { scrape_interval: '1s' },
          scrape_configs: [
            {
              job_name: 'hermes-sidecar',
              static_configs: HOSTS.map((host) => ({
                targets: [new URL(sidecars.get(host)!.web).host],
                labels: { instance: host, site: 'lab' },
              })),
            },
          ],
          remote_write: [{ url: store.writeUrl, queue_config: { batch_send_deadline: '1s' } }],
        }),
      );
      const agent = await processes.listening('agent prometheus', 'prometheus', [
        '--enable-feature=agent',
        `--config.file=${join(scratch, 'agent.yml')}`,
        `--storage.agent.path=${join(scratch, 'agent')}`,
        '--web.listen-address=127.0.0.1:0',
        '--log.level=info',
      ]);
      await waitReady(`http://${agent.address}/-/ready`, agent.stderr);

      // Normal traffic everywhere; host a already has a few provider errors (5 %, below the 10 % threshold).
      HOSTS.forEach((host, index) => {
        const model = new TrafficModel({ seed: 7 + index, agents: 4, errorRate: host === BURST_HOST ? 0.05 : 0 });
        models.set(host, model);
        senders.push(sendTraffic({ url: `${sidecars.get(host)!.ingest}/v1/events`, model, rate: 40, batchSize: 20, signal: traffic.signal }));
      });
      await eventually('all three hosts to reach the central store', 60_000, async () =>
        (await query('up{job="hermes-sidecar", site="lab"} == 1')).length === 3 ? true : undefined,
      );
      console.log(`${title}: up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }, 5 * 60_000);

    afterAll(async () => {
      traffic.abort();
      await Promise.all(senders);
      await Promise.all([...sidecars.values()].map((sidecar) => sidecar.stop()));
      await processes.stopAll();
      await new Promise((resolve) => webhook?.close(resolve));
      rmSync(scratch, { recursive: true, force: true });
    }, 60_000);

    it('pages on-call with HermesApiErrorRatioHigh for the host with the error burst, and for no other host', async () => {
      const burst = Date.now();
      models.get(BURST_HOST)!.setErrorRate(0.9);
      const paged = await eventually(`${ALERT} for ${BURST_HOST} at the webhook receiver`, 4 * 60_000, async () =>
        received.find((alert) => alert.labels.alertname === ALERT && alert.labels.instance === BURST_HOST && alert.status === 'firing'),
      );
      console.log(`${title}: ${ALERT} reached the receiver ${((Date.now() - burst) / 1000).toFixed(1)} s after the burst began`);
      expect(paged.labels).toMatchObject({ job: 'hermes-sidecar', site: 'lab', instance: BURST_HOST });
      expect(['warning', 'critical']).toContain(paged.labels.severity);

      // Give the healthy hosts the same time again to misbehave before judging them.
      await sleep(Math.min(Date.now() - burst, 30_000));
      const firing = await query(`ALERTS{alertstate="firing"}`);
      expect(firing.length).toBeGreaterThan(0);
      expect(new Set(firing.map((alert) => `${alert.metric.alertname} ${alert.metric.instance}`))).toEqual(new Set([`${ALERT} ${BURST_HOST}`]));
      const pagedHosts = new Set(received.map((alert) => alert.labels.instance));
      expect([...pagedHosts]).toEqual([BURST_HOST]);
      expect(new Set(received.map((alert) => alert.labels.alertname))).toEqual(new Set([ALERT]));
      // The healthy hosts had traffic the whole time: silence is not for want of data.
      for (const host of ['hermes-b', 'hermes-c']) {
        expect(await scalar(`sum(provider:hermes_api_requests:rate5m{instance="${host}"})`)).toBeGreaterThan(0);
        expect(await scalar(`max(provider:hermes_api_requests:error_ratio_rate5m{instance="${host}"})`)).toBe(0);
      }
    });

    it('answers the dashboards fleet queries with the sum across the three hosts', async () => {
      traffic.abort();
      await Promise.all(senders);
      // Quiet now: wait until the central store holds each sidecar's final counts.
      const finalCounts = new Map<string, Map<string, number>>();
      for (const host of HOSTS) finalCounts.set(host, new Map(parseSamples(await (await fetch(`${sidecars.get(host)!.web}/metrics`)).text())));
      const own = (host: string, name: string) =>
        [...finalCounts.get(host)!].filter(([series]) => series === name || series.startsWith(`${name}{`)).reduce((sum, [, value]) => sum + value, 0);
      const requestsEverywhere = HOSTS.reduce((sum, host) => sum + own(host, 'hermes_api_requests_total'), 0);
      await eventually('the final counts at the central store', 60_000, async () =>
        (await scalar('sum(hermes_api_requests_total{job="hermes-sidecar"})')) === requestsEverywhere ? true : undefined,
      );

      // The instance variable lists the fleet (its own label_values selector, from up).
      const instances = (await (
        await fetch(`${central}/api/v1/label/instance/values?match[]=${encodeURIComponent(instanceVariableSelector())}`)
      ).json()) as { data: string[] };
      expect([...instances.data].sort()).toEqual([...HOSTS]);

      // A gauge panel: exactly the sum of what the three sidecars serve.
      const sessions = HOSTS.reduce((sum, host) => sum + own(host, 'hermes_sessions_active'), 0);
      expect(sessions).toBeGreaterThan(0);
      expect(await scalar(withVariables(dashboardExpr('Active sessions')))).toBe(sessions);

      // Rate panels: the fleet value is the sum of the per-host values at the same instant.
      const at = Date.now() / 1000;
      const panel = 'API request rate';
      const fleet = await scalar(withVariables(dashboardExpr(panel)), at);
      const perHost = await Promise.all(HOSTS.map((host) => scalar(withVariables(dashboardExpr(panel), host), at)));
      console.log(`${title}: "${panel}" = ${fleet} = ${perHost.join(' + ')}`);
      for (const value of perHost) expect(value).toBeGreaterThan(0);
      expect(fleet).toBeCloseTo(perHost.reduce((sum, value) => sum + value, 0), 9);
    });
  });
}
