/**
 * Hand-shaped configuration files for Prometheus and Grafana, rendered from config.ts so the job
 * name, target and data source exist in one place. Templates rather than a YAML library keep
 * the explanatory comments that users read when they adapt these files.
 */
import { grafana, jobName, scrapeInterval, sidecarTarget } from './config.js';
import { GENERATED_NOTICE } from './render.js';

/** prometheus.yml at the repository root; rule_files is relative to this file. */
export function prometheusConfig(): string {
  return `# ${GENERATED_NOTICE}
#
# Scrapes the Hermes sidecar and loads its alerting and recording rules.
# Check with: promtool check config prometheus.yml

global:
  scrape_interval: ${scrapeInterval}
  evaluation_interval: ${scrapeInterval}

rule_files:
  - rules/*.yml

scrape_configs:
  - job_name: ${jobName}
    scrape_interval: ${scrapeInterval}
    metrics_path: /metrics
    static_configs:
      - targets:
          - ${sidecarTarget}
    # Exceeding sample_limit fails the whole scrape (up = 0), so keep it well above the
    # sidecar's own series caps: the sidecar bounds its series, this is only a backstop.
    # sample_limit: 50000
`;
}

/** Grafana data source provisioning: the uid is referenced by nothing but this file. */
export function grafanaDatasource(): string {
  return `# ${GENERATED_NOTICE}
#
# Grafana data source for the Hermes dashboards. Panels never name this uid: they use the
# dashboards' $datasource variable, so any Prometheus data source works.
apiVersion: 1

datasources:
  - name: ${grafana.datasourceName}
    type: prometheus
    uid: ${grafana.datasourceUid}
    access: proxy
    url: ${grafana.datasourceUrl}
    isDefault: true
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
# Loads the Hermes dashboards from files. Mount or copy this repository's dashboards/
# directory to the path below (for example in Docker:
#   -v "$PWD/dashboards:${grafana.dashboardsPath}:ro"
#   -v "$PWD/dashboards/provisioning:/etc/grafana/provisioning:ro").
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
