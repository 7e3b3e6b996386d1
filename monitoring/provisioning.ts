/**
 * Hand-shaped configuration files for Prometheus and Grafana, rendered from config.ts so the job
 * name, target and data source exist in one place. Templates rather than a YAML library keep
 * the explanatory comments that users read when they adapt these files.
 */
import { grafana, jobName, scrapeInterval, sidecarTarget } from './config.js';
import { GENERATED_NOTICE } from './render.js';
import { scrapeLimits } from './limits.js';

/** prometheus.yml at the repository root; rule_files is relative to this file. */
export function prometheusConfig(): string {
  const limits = scrapeLimits();
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
    # Backstops, derived from the sidecar's own bounds at its defaults (monitoring/limits.ts):
    # ${limits.sampleLimit} samples is --metrics.max-series (10000) series of the widest agent
    # histogram, every overflow series, every pipeline series and the runtime metrics, rounded
    # up. A scrape past a limit fails whole (up = 0): raise sample_limit with --metrics.max-series
    # or wider bucket sets. The label value limit is in bytes: a guarded value is at most 128
    # characters; the instance address must fit too.
    sample_limit: ${limits.sampleLimit}
    label_limit: ${limits.labelLimit}
    label_name_length_limit: ${limits.labelNameLengthLimit}
    label_value_length_limit: ${limits.labelValueLengthLimit}
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
