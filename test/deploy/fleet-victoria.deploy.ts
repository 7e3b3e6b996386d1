/**
 * The fleet (test/support/fleet.ts) with VictoriaMetrics as the central store: Debian's
 * victoria-metrics receives the agent's remote_write at /api/v1/write and answers the Prometheus
 * query API; vmalert evaluates the shipped rules against it (MetricsQL), writes recording rule
 * results and ALERTS back to it, and sends alerts to Alertmanager.
 *
 * Neither program logs the port it bound when given port 0, so each starts on a candidate port
 * and again on another when that one was taken (test/support/ports.ts).
 *
 * The agreement checks are exact: VictoriaMetrics stores the float64 samples it is sent, so the
 * sum of a counter across the fleet equals the sum of the sidecars' own values. MetricsQL's
 * rate() does not extrapolate to the window's edges as PromQL's does, which changes a rate's
 * value but not that the fleet rate is the sum of the per-host rates at the same instant.
 */
import { join } from 'node:path';
import { describe } from 'vitest';
import { describeFleet } from '../support/fleet.js';
import { locate } from '../support/tools.js';

const tools = [
  locate('prometheus', "install Debian's prometheus package"),
  locate('prometheus-alertmanager', "install Debian's prometheus-alertmanager package"),
  locate('victoria-metrics', "install Debian's victoria-metrics package"),
  locate('vmalert', "install Debian's vmalert package (victoria-metrics)"),
];
const skipReason = tools.find((tool) => tool.skipReason !== undefined)?.skipReason;

describe.skipIf(skipReason !== undefined)(`fleet (${skipReason ?? 'prometheus agent, victoria-metrics, vmalert, prometheus-alertmanager'})`, () => {
  describeFleet('fleet: agents, central VictoriaMetrics with vmalert, Alertmanager', async ({ processes, scratch, alertmanager, ruleFiles }) => {
    const store = await processes.onCandidatePort(
      'victoria-metrics',
      'victoria-metrics',
      (address) => [
        `-httpListenAddr=${address}`,
        `-storageDataPath=${join(scratch, 'victoria-metrics')}`,
        // Samples are visible to queries at once (30 s by default), so the final counts can be awaited.
        '-search.latencyOffset=0s',
        '-loggerLevel=INFO',
      ],
      '/health',
    );
    const url = `http://${store.address}`;
    await processes.onCandidatePort(
      'vmalert',
      'vmalert',
      (address) => [
        `-httpListenAddr=${address}`,
        ...ruleFiles.map((file) => `-rule=${file}`),
        `-datasource.url=${url}`,
        `-remoteWrite.url=${url}`,
        `-remoteRead.url=${url}`,
        `-notifier.url=http://${alertmanager}`,
        '-evaluationInterval=1s',
        '-remoteWrite.flushInterval=1s',
        '-loggerLevel=INFO',
      ],
      '/health',
    );
    return { queryUrl: url, writeUrl: `${url}/api/v1/write` };
  });
});
