/**
 * The monitoring bundle as a library, in the manner of kubernetes-mixin's `_config+::`: build the
 * dashboards, rules and configuration files for your own selector, thresholds and runbook
 * without editing the sources.
 *
 *   import { build } from './monitoring/index.js';  // a script at the root of a clone, run with tsx
 *   for (const file of build({ selector: 'cluster="eu1", job="agents"', thresholds: { costUsdPerHour: 50 } })) {
 *     writeFileSync(file.path, file.contents);
 *   }
 *
 * It is used from a clone (README, "Monitoring bundle"): it needs the Grafana foundation SDK, a
 * development dependency, so the npm package ships the generated files, not this library.
 *
 * `build()` with no options produces exactly the committed files.
 */
import { defaults, type MonitoringConfig, type Thresholds } from './config.js';
import { generatedFiles, type GeneratedFile } from './files.js';
import type { HistogramKind } from './promql.js';

export interface BuildOptions {
  /** PromQL label matchers of the sidecar's series (default `job="hermes-sidecar"`). */
  readonly selector?: string;
  /** Overrides of single thresholds; the others keep their defaults. */
  readonly thresholds?: Partial<Thresholds>;
  /** Base URL of the runbook; each alert links to `<runbookBase>#<alertname lowercased>`. */
  readonly runbookBase?: string;
  /**
   * `native`: histogram queries read native histograms (a Prometheus scraping with
   * `--enable-feature=native-histograms`); default `classic`, the `_bucket` series.
   */
  readonly histograms?: HistogramKind;
}

export function resolveConfig(options: BuildOptions = {}): MonitoringConfig {
  return {
    selector: options.selector ?? defaults.selector,
    thresholds: { ...defaults.thresholds, ...options.thresholds },
    runbookBase: options.runbookBase ?? defaults.runbookBase,
    histograms: options.histograms ?? defaults.histograms,
  };
}

/** Every generated file (dashboards, rules, prometheus.yml, Grafana provisioning) for these options. */
export function build(options: BuildOptions = {}): GeneratedFile[] {
  return generatedFiles(resolveConfig(options));
}

export { defaults, type GeneratedFile, type HistogramKind, type MonitoringConfig, type Thresholds };
