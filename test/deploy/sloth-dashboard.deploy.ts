/**
 * sloth's Grafana dashboard (grafana.com 14348) reads the shipped SLO rules: its queries, copied
 * verbatim into test/fixtures/sloth/dashboard-14348-queries.json, run against a real Prometheus
 * evaluating rules/ over a target with two providers and two tools (so every per-host series
 * exists twice): no query errs ("many-to-one matching must be explicit" was the month panels'
 * error), the variables list the service and its SLOs, the 30-day and month stats return one
 * value per SLO, and the page and ticket stats see the burn alerts through `sloth_severity`.
 * Skipped with a printed reason when prometheus is missing (an error under CI). In test:deploy:
 * the long-window group runs once a minute, so the test waits about a minute and a half.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../monitoring/index.js';
import { sliDefinitions, SLO_SERVICE } from '../../monitoring/rules/slos.js';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { prometheus as prometheusTool } from '../support/tools.js';

interface Fixture {
  readonly variables: { readonly sli_window: readonly string[]; readonly min_burning_rate: string };
  readonly panels: readonly { readonly title: string; readonly expr: string }[];
}

const fixture = JSON.parse(readFileSync(new URL('../fixtures/sloth/dashboard-14348-queries.json', import.meta.url), 'utf8')) as Fixture;
const tool = prometheusTool();
const SLOS = sliDefinitions(resolveConfig()).map((sli) => sli.name);

/** anthropic: every call fails; openai: every call succeeds fast; terminal fails, read_file works. */
function exposition(seconds: number): string {
  const t = seconds;
  const call = 'kind="main",model="m1"';
  return [
    `hermes_api_requests_total{${call},provider="anthropic",outcome="error"} ${String(2 * t)}`,
    `hermes_api_requests_total{${call},provider="openai",outcome="success"} ${String(2 * t)}`,
    `hermes_api_request_duration_seconds_bucket{${call},provider="openai",outcome="success",le="81.92"} ${String(2 * t)}`,
    `hermes_api_request_duration_seconds_bucket{${call},provider="openai",outcome="success",le="+Inf"} ${String(2 * t)}`,
    `hermes_api_request_duration_seconds_count{${call},provider="openai",outcome="success"} ${String(2 * t)}`,
    `hermes_api_request_duration_seconds_sum{${call},provider="openai",outcome="success"} ${String(4 * t)}`,
    `hermes_tool_calls_total{tool="terminal",status="error"} ${String(2 * t)}`,
    `hermes_tool_calls_total{tool="read_file",status="ok"} ${String(2 * t)}`,
    '',
  ].join('\n');
}

/**
 * Grafana's variables as the dashboard sends them. One change: the month panels' hourly subquery
 * step becomes a minute, since this Prometheus holds a minute or two of the long-window series
 * and an hourly step finds none; the vector matching (what failed on the old rules) is untouched.
 */
function substitute(expr: string, slo: string, window = '1h'): string {
  return expr
    .replaceAll('[32d:1h]', '[32d:1m]')
    .replaceAll('${service}', SLO_SERVICE)
    .replaceAll('${slo}', slo)
    .replaceAll('${sli_window}', window)
    .replaceAll('${min_burning_rate}', fixture.variables.min_burning_rate)
    .replaceAll('${__to:date:M}', String(new Date().getUTCMonth() + 1));
}

interface Sample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

describe.skipIf(!tool.path)(`sloth's dashboard 14348 on the shipped rules ${tool.skipReason ?? ''}`.trim(), () => {
  let server: Server;
  let prometheus: RunningPrometheus;
  const started = Date.now();

  const query = async (expr: string): Promise<Sample[]> => {
    const answer = await prometheus.query(expr);
    if (answer.status !== 'success') throw new Error(`${expr}: ${answer.error ?? answer.status}`);
    return answer.data?.result as Sample[];
  };

  beforeAll(async () => {
    server = createServer((_request, response) => response.end(exposition((Date.now() - started) / 1000)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    prometheus = await startPrometheus(tool.path as string, `127.0.0.1:${String((server.address() as AddressInfo).port)}`, 1);
  });

  afterAll(async () => {
    await prometheus.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers every panel for every SLO and window: one series per SLO, and the page and ticket stats', async () => {
    // The long-window group runs once a minute: wait until it has recorded the fleet 1 h ratio
    // twice (so a subquery step finds it) and both burn alerts fire.
    for (const deadline = Date.now() + 170_000; ; ) {
      const ready = (await query(`count_over_time(slo:sli_error:ratio_rate1h{sloth_service="${SLO_SERVICE}"}[10m]) >= 2`)).length === SLOS.length;
      const alerts = await query(`ALERTS{alertstate="firing", sloth_slo="provider-availability"}`);
      if (ready && new Set(alerts.map((alert) => alert.metric.sloth_severity)).size === 2) break;
      if (Date.now() > deadline) throw new Error('the fleet ratios or the availability burn alerts never appeared');
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const services = (await (await fetch(`${prometheus.url}/api/v1/label/sloth_service/values?match[]=slo:objective:ratio`)).json()) as { data: string[] };
    expect(services.data).toEqual([SLO_SERVICE]);

    for (const slo of SLOS) {
      for (const panel of fixture.panels) {
        const windows = panel.expr.includes('${sli_window}') ? fixture.variables.sli_window : ['1h'];
        for (const window of windows) {
          const result = await query(substitute(panel.expr, slo, window));
          if (panel.title.startsWith('Remaining error budget')) {
            expect(result, `${panel.title} ${slo}`).toHaveLength(1);
            expect(result[0]?.metric.sloth_id ?? result[0]?.metric.sloth_slo, `${panel.title} ${slo}: the SLO's own series, not the fallback`).toBeDefined();
          }
          if (panel.title === 'SLI' || panel.title.startsWith('Current')) expect(result, `${panel.title} ${slo} ${window}`).toHaveLength(1);
        }
      }
    }
    const stat = async (title: string, slo: string) => {
      const panel = fixture.panels.find((candidate) => candidate.title === title);
      return (await query(substitute(panel?.expr ?? '', slo))).map((sample) => sample.value[1]);
    };
    expect(await stat('Critical alert', 'provider-availability')).toEqual(['1']);
    expect(await stat('Warning alert', 'provider-availability')).toEqual(['1']);
    expect(await stat('Critical alert', 'tool-success')).toEqual(['1']);
    expect(await stat('Critical alert', 'provider-latency')).toEqual(['0']);
    // anthropic fails every call, openai none: the fleet's 30-day ratio is a half.
    const budget = await query(substitute(fixture.panels.find((panel) => panel.title === 'Remaining error budget (30d window)')?.expr ?? '', 'provider-availability'));
    expect(Number(budget[0]?.value[1])).toBeCloseTo(1 - 0.5 / 0.005, 0);
  }, 220_000);
});
