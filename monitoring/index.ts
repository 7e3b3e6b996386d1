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
import { defaultReceivers, type Receivers } from './alertmanager.js';
import { defaults, type MonitoringConfig, type Slos, type Thresholds } from './config.js';
import { generatedFiles, type GeneratedFile } from './files.js';
import { validateConfig } from './validate.js';
import type { HistogramKind } from './promql.js';

/** Overrides of single SLO fields; the others keep their defaults. */
export type SloOptions = { readonly [Name in keyof Slos]?: Partial<Slos[Name]> };

export interface BuildOptions {
  /** PromQL label matchers of the sidecar's series (default `job="hermes-sidecar"`). */
  readonly selector?: string;
  /** Overrides of single thresholds; the others keep their defaults. */
  readonly thresholds?: Partial<Thresholds>;
  /** Overrides of SLO objectives, traffic guards and the latency threshold. */
  readonly slos?: SloOptions;
  /** Base URL of the runbook; each alert links to `<runbookBase>#<alertname lowercased>`. */
  readonly runbookBase?: string;
  /**
   * `native`: histogram queries read native histograms (a Prometheus scraping with
   * `--enable-feature=native-histograms`); default `classic`, the `_bucket` series.
   */
  readonly histograms?: HistogramKind;
  /**
   * Alertmanager receivers (bodies without `name`, e.g. `{ pagerduty_configs: [...] }`) for
   * alertmanager.yml: `paging` gets critical alerts, `ticket` warnings. Default: placeholders.
   */
  readonly receivers?: Partial<Receivers>;
}

function resolveSlos(options: SloOptions = {}): Slos {
  return {
    providerAvailability: { ...defaults.slos.providerAvailability, ...options.providerAvailability },
    toolSuccess: { ...defaults.slos.toolSuccess, ...options.toolSuccess },
    providerLatency: { ...defaults.slos.providerLatency, ...options.providerLatency },
  };
}

/** The defaults with these overrides; throws a MonitoringConfigError on a value no rule can use. */
export function resolveConfig(options: BuildOptions = {}): MonitoringConfig {
  return validateConfig({
    selector: options.selector ?? defaults.selector,
    thresholds: { ...defaults.thresholds, ...options.thresholds },
    slos: resolveSlos(options.slos),
    runbookBase: options.runbookBase ?? defaults.runbookBase,
    histograms: options.histograms ?? defaults.histograms,
  });
}

/** Every generated file (dashboards, rules, prometheus.yml, alertmanager.yml, Grafana provisioning) for these options. */
export function build(options: BuildOptions = {}): GeneratedFile[] {
  return generatedFiles(resolveConfig(options), { ...defaultReceivers, ...options.receivers });
}

export { defaults, type Receivers, type GeneratedFile, type HistogramKind, type MonitoringConfig, type Slos, type Thresholds };
export { MonitoringConfigError } from './validate.js';
