/**
 * Section 5b, host CPU: the real plugin delivering to the real sidecar against in-process
 * prometheus_client doing the same updates in the same Python process (bench/plugin_host_cpu.py,
 * which starts the binary itself, lets the variants take turns every 400 logical events and
 * checks equal work or fails).
 */
import { spawnSync } from 'node:child_process';
import { fmt, runProcess, type RunOptions, type SectionResult } from '../lib.js';
import { skipped } from './plugin.js';

const SCRIPT = 'bench/plugin_host_cpu.py';
const RESULT_PREFIX = 'HOSTCPU_RESULT ';
const TITLE = '5b. Plugin host CPU';

interface HostCpuResult {
  readonly ratio: { readonly up: number; readonly down: number };
  readonly agent_net_us: { readonly up: number; readonly down: number };
  readonly cpu_net_us: { readonly up: number; readonly down: number; readonly prometheus_client: number };
  readonly met: { readonly ratio_up: boolean; readonly ratio_down: boolean; readonly agent: boolean };
}

/** The interpreter that sees Debian's python3-prometheus-client (the baseline needs it). */
function pythonWithPrometheusClient(): string | undefined {
  return ['/usr/bin/python3', 'python3'].find(
    (candidate) => spawnSync(candidate, ['-c', 'import prometheus_client'], { stdio: 'ignore' }).status === 0,
  );
}

export async function hostCpuSection(options: RunOptions): Promise<SectionResult> {
  const python = pythonWithPrometheusClient();
  if (python === undefined) return skipped('hostcpu', TITLE, 'no python3 with prometheus_client (apt-get install python3-prometheus-client)');
  // Twenty-five rounds of ~3 s: the agent-thread figure is a difference of two medians of a few
  // microseconds, and the ratio is a median of per-round ratios (0.70–1.08× within one run at
  // load 6).
  const args = options.smoke ? ['--quick'] : ['--rounds', '25'];
  const run = await runProcess(python, [SCRIPT, ...args]);
  if (run.status !== 0) throw new Error(`${SCRIPT} exited with ${String(run.status)}: ${run.stderr}${run.stdout}`);
  const lines = run.stdout.trim().split('\n');
  const resultLine = lines.find((line) => line.startsWith(RESULT_PREFIX));
  if (resultLine === undefined) throw new Error(`${SCRIPT} printed no result line`);
  const result = JSON.parse(resultLine.slice(RESULT_PREFIX.length)) as HostCpuResult;
  const report = lines.filter((line) => !line.startsWith(RESULT_PREFIX)).join('\n');
  return {
    key: 'hostcpu',
    title: TITLE,
    summary:
      `plugin/prometheus_client CPU ${fmt(result.ratio.up)}x (sidecar up), ${fmt(result.ratio.down)}x (down); ` +
      `agent thread ${fmt(Math.max(result.agent_net_us.up, result.agent_net_us.down))} µs per logical event`,
    markdown: [`\`${python} ${SCRIPT} ${args.join(' ')}\`:`, '', report].join('\n'),
    targets: [
      {
        name: 'Plugin whole-process CPU / in-process prometheus_client (sidecar up)',
        target: '≤ 0.7×',
        measured: `${fmt(result.ratio.up)}× (median of the rounds' ratios; net medians ${fmt(result.cpu_net_us.up)} vs ${fmt(result.cpu_net_us.prometheus_client)} µs)`,
        met: result.met.ratio_up,
      },
      {
        name: 'Plugin whole-process CPU / in-process prometheus_client (sidecar down)',
        target: '≤ 0.7×',
        measured: `${fmt(result.ratio.down)}× (median of the rounds' ratios; net medians ${fmt(result.cpu_net_us.down)} vs ${fmt(result.cpu_net_us.prometheus_client)} µs)`,
        met: result.met.ratio_down,
      },
      {
        name: 'Plugin agent-thread CPU per logical event (median)',
        target: '≤ 2 µs',
        measured: `${fmt(Math.max(result.agent_net_us.up, result.agent_net_us.down))} µs`,
        met: result.met.agent,
      },
    ],
  };
}
