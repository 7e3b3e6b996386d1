/**
 * Hand-shaped configuration files for Prometheus and Grafana, rendered from config.ts so the job
 * name, target and data source exist in one place. Templates rather than a YAML library keep
 * the explanatory comments that users read when they adapt these files.
 */
import { grafana, jobName, scrapeInterval, sidecarTarget } from './config.js';
import { GENERATED_NOTICE } from './render.js';
import { scrapeLimitArithmetic, scrapeLimits } from './limits.js';
import { MIN_GRAFANA_VERSION } from './dashboards/variants.js';

/** Alertmanager's default listen address: where the shipped alertmanager.yml's Alertmanager runs. */
export const alertmanagerTarget = 'localhost:9093';

/** `# ` comment lines of at most ~100 columns, indented by `indent`. */
function commentLines(text: string, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + word.length + 1 > 96) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.map((text) => `${indent}# ${text}`).join('\n');
}

/** prometheus.yml at the repository root; rule_files is relative to this file. */
export function prometheusConfig(): string {
  const limits = scrapeLimits();
  const arithmetic = scrapeLimitArithmetic()
    .map((limit) => commentLines(`${limit.setting} ${limit.value}: ${limit.why}.`, '    '))
    .join('\n');
  return `# ${GENERATED_NOTICE}
#
# Scrapes the Hermes sidecar, loads its alerting and recording rules and sends alerts to
# Alertmanager (alertmanager.yml beside this file).
# Check with: promtool check config prometheus.yml

global:
  scrape_interval: ${scrapeInterval}
  evaluation_interval: ${scrapeInterval}

rule_files:
  - rules/*.yml

alerting:
  alertmanagers:
    - static_configs:
        - targets:
            - ${alertmanagerTarget}

scrape_configs:
  - job_name: ${jobName}
    scrape_interval: ${scrapeInterval}
    metrics_path: /metrics
    static_configs:
      - targets:
          - ${sidecarTarget}
    # Backstops, derived from the sidecar's own bounds at its defaults (monitoring/limits.ts),
    # with room for the target labels a deployment adds (docs/scale-out.md, "Scrape limits").
    # A scrape past a limit fails whole (up = 0, every series lost): raise sample_limit with
    # --metrics.max-series or wider bucket sets, label_limit with more target labels.
${arithmetic}
    sample_limit: ${limits.sampleLimit}
    label_limit: ${limits.labelLimit}
    label_name_length_limit: ${limits.labelNameLengthLimit}
    label_value_length_limit: ${limits.labelValueLengthLimit}
`;
}

/** Grafana data source provisioning: the provisioned dashboards default their $datasource variable to this uid. */
export function grafanaDatasource(): string {
  return `# ${GENERATED_NOTICE}
#
# Grafana data source for the Hermes dashboards. Panels never name this uid: they use the
# dashboards' $datasource variable, which the provisioned dashboards (dashboards/provisioned/)
# default to this uid, so any Prometheus data source works. Not the default data source: a
# Grafana that has one keeps it (two provisioned defaults stop Grafana at startup).
apiVersion: 1

datasources:
  - name: ${grafana.datasourceName}
    type: prometheus
    uid: ${grafana.datasourceUid}
    access: proxy
    url: ${grafana.datasourceUrl}
    isDefault: false
    editable: false
    jsonData:
      # Must equal the scrape interval: Grafana derives $__rate_interval from it.
      timeInterval: ${scrapeInterval}
`;
}

/** Grafana dashboard provider: loads the generated JSON files from the dashboards directory. */
export function grafanaDashboardProvider(): string {
  return `# ${GENERATED_NOTICE}
#
# Loads the Hermes dashboards from files. Mount or copy this repository's dashboards/provisioned/
# directory (the dashboards defaulting to the data source above; dashboards/*.json are the
# copies for the import screen, with a data source input) to the path below, for example in
# Docker:
#   -v "$PWD/dashboards/provisioned:${grafana.dashboardsPath}:ro"
#   -v "$PWD/dashboards/provisioning:/etc/grafana/provisioning:ro"
# Grafana ${MIN_GRAFANA_VERSION.replace(/\.0$/, '')} or later (the dashboards are schemaVersion 42).
apiVersion: 1

providers:
  - name: hermes
    orgId: 1
    folder: ${grafana.folder}
    type: file
    disableDeletion: false
    # Dashboards are code: edit monitoring/dashboards/*.ts, not the Grafana UI.
    allowUiUpdates: false
    updateIntervalSeconds: 60
    options:
      path: ${grafana.dashboardsPath}
      foldersFromFilesStructure: false
`;
}
