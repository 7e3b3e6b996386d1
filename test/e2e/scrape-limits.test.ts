/**
 * The shipped prometheus.yml's scrape limits in Debian's real Prometheus, with the target labels
 * a site adds: a sidecar exporting its widest series (hermes_api_errors_total with all seven
 * labels, and the semconv families with the longest label names) is scraped by the shipped
 * scrape job plus two target labels, `site` and the 26-character `app_kubernetes_io_instance`.
 * `up` must be 1 and the widest series stored with both labels. A second job with the label
 * limit set to the widest sample exactly (no room) scrapes the same sidecar and fails, which
 * shows the scrape reached the limit the first job's headroom absorbs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { jobName } from '../../monitoring/config.js';
import { maxLabels, scrapeLimits } from '../../monitoring/limits.js';
import { prometheusConfig } from '../../monitoring/provisioning.js';
import { TrafficModel } from '../../tools/traffic.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';
import type { RunningPrometheus } from '../support/prometheus.js';
import { startConfiguredPrometheus } from '../support/prometheusModes.js';
import { prometheus as prometheusTool } from '../support/tools.js';

const tool = prometheusTool();
const TARGET_LABELS = { site: 'site1', app_kubernetes_io_instance: 'hermes-01' } as const;
const NO_HEADROOM_JOB = 'no-headroom';
const WIDEST = 'hermes_api_errors_total';

interface ScrapeConfig {
  job_name: string;
  scrape_interval?: string;
  static_configs: { targets: string[]; labels?: Record<string, string> }[];
  label_limit: number;
  [setting: string]: unknown;
}

/** The shipped scrape job, pointed at `target` with the two extra labels, and its no-headroom twin. */
function configWithTargetLabels(target: string): string {
  const shipped = parseYaml(prometheusConfig()) as { scrape_configs: ScrapeConfig[] };
  const job = shipped.scrape_configs.find((config) => config.job_name === jobName);
  if (job === undefined) throw new Error(`the shipped prometheus.yml has no ${jobName} job`);
  const labelled: ScrapeConfig = { ...job, scrape_interval: '1s', static_configs: [{ targets: [target], labels: { ...TARGET_LABELS } }] };
  return stringifyYaml({
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    scrape_configs: [labelled, { ...labelled, job_name: NO_HEADROOM_JOB, label_limit: maxLabels() }],
  });
}

/** Posts generated traffic until the sidecar exposes its widest series and the semconv families. */
async function exposeWidestSeries(sidecar: SidecarProcess): Promise<void> {
  const model = new TrafficModel({ seed: 3, agents: 4, errorRate: 0.5 });
  for (let round = 0; round < 50; round += 1) {
    const lines = [...model.heartbeats(), ...model.batch(200)];
    const answer = await fetch(`${sidecar.ingest}/v1/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson' },
      body: lines.map((line) => JSON.stringify(line)).join('\n'),
    });
    expect(answer.status).toBe(202);
    const text = await (await fetch(`${sidecar.web}/metrics`)).text();
    const widest = text.split('\n').some((line) => line.startsWith(`${WIDEST}{`) && (line.match(/="/g) ?? []).length === maxLabels() - 3);
    if (widest && text.includes('gen_ai_operation_name="')) return;
  }
  throw new Error(`the traffic never exposed ${WIDEST} with every label`);
}

describe.skipIf(tool.path === undefined)(`shipped scrape limits in a real Prometheus${tool.skipReason ? ` (${tool.skipReason})` : ''}`, () => {
  let sidecar: SidecarProcess;
  let prometheus: RunningPrometheus;

  const upOf = async (job: string): Promise<string | undefined> => {
    const answer = await prometheus.query(`up{job="${job}"}`);
    return (answer.data?.result[0] as { value: [number, string] } | undefined)?.value[1];
  };

  beforeAll(async () => {
    sidecar = await startSidecarProcess(['--metrics.semconv=true']);
    await exposeWidestSeries(sidecar);
    prometheus = await startConfiguredPrometheus({ binary: tool.path ?? 'prometheus', mode: 'server', config: configWithTargetLabels(new URL(sidecar.web).host) });
    // Both jobs scraped at least once (a scrape past a limit still records up = 0).
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      if ((await upOf(jobName)) !== undefined && (await upOf(NO_HEADROOM_JOB)) !== undefined) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, 60_000);

  afterAll(async () => {
    await prometheus?.stop();
    await sidecar?.stop();
  });

  it('scrapes the widest series with two added target labels (up = 1)', async () => {
    expect(scrapeLimits().labelLimit).toBeGreaterThanOrEqual(maxLabels() + Object.keys(TARGET_LABELS).length);
    expect(await upOf(jobName)).toBe('1');
    const widest = await prometheus.query(`${WIDEST}{job="${jobName}", site="site1", app_kubernetes_io_instance="hermes-01"}`);
    const stored = (widest.data?.result ?? []) as { metric: Record<string, string> }[];
    expect(stored.length).toBeGreaterThan(0);
    // __name__, job, instance, the seven own labels and the two added ones.
    expect(Math.max(...stored.map((series) => Object.keys(series.metric).length))).toBe(maxLabels() + 2);
    const semconv = await prometheus.query(`count({__name__=~"gen_ai_.+", job="${jobName}", app_kubernetes_io_instance="hermes-01", gen_ai_operation_name!=""})`);
    expect(Number((semconv.data?.result[0] as { value: [number, string] } | undefined)?.value[1] ?? 0)).toBeGreaterThan(0);
  });

  it('fails the same scrape when label_limit equals the widest sample (the defect the headroom prevents)', async () => {
    expect(await upOf(NO_HEADROOM_JOB)).toBe('0');
    const stored = await prometheus.query(`${WIDEST}{job="${NO_HEADROOM_JOB}"}`);
    expect(stored.data?.result ?? []).toEqual([]);
  });
});
