/**
 * The fleet (test/support/fleet.ts) with a central Prometheus: Debian's prometheus with
 * --web.enable-remote-write-receiver, evaluating the shipped rules itself and sending alerts to
 * Alertmanager.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { describeFleet, waitReady } from '../support/fleet.js';
import { locate } from '../support/tools.js';

const tools = [
  locate('prometheus', "install Debian's prometheus package"),
  locate('prometheus-alertmanager', "install Debian's prometheus-alertmanager package"),
];
const skipReason = tools.find((tool) => tool.skipReason !== undefined)?.skipReason;

describe.skipIf(skipReason !== undefined)(`fleet (${skipReason ?? 'prometheus, prometheus-alertmanager'})`, () => {
  describeFleet('fleet: agents, central Prometheus rules, Alertmanager', async ({ processes, scratch, alertmanager, ruleFiles }) => {
    // Central: the shipped recording rules as they are, the alert rules with the short `for:`.
    const config = join(scratch, 'central.yml');
    writeFileSync(
      config,
      stringifyYaml({
        global: { evaluation_interval: '1s' },
        rule_files: ruleFiles,
        alerting: { alertmanagers: [{ static_configs: [{ targets: [alertmanager] }] }] },
      }),
    );
    const central = await processes.listening('central prometheus', 'prometheus', [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(scratch, 'central')}`,
      '--web.listen-address=127.0.0.1:0',
      '--web.enable-remote-write-receiver',
      '--log.level=info',
    ]);
    await waitReady(`http://${central.address}/-/ready`, central.stderr);
    return { queryUrl: `http://${central.address}`, writeUrl: `http://${central.address}/api/v1/write` };
  });
});
