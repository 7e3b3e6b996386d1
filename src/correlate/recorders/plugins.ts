/**
 * What each bridge plugin instance says about itself in its heartbeat: the Hermes version of its
 * host, its own version and its Hermes profile (hermes_plugin_info counts the live instances of
 * each combination, so a fleet shows which versions and profiles report), and the values its
 * boundary grammar kept inside Hermes, by field (cumulative in the heartbeat, turned into deltas
 * per instance here, as the drop counters are).
 *
 * The instance id is never a label: it only keys this table, which is bounded (the least
 * recently heard instance is forgotten first, and counted as an eviction of instance_reports).
 */
import type { EventData } from '../../contract/events.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Families } from '../../metrics/registry.js';
import type { Collectable, RecorderContext } from './context.js';
import { VALUES } from '../../contract/vocabulary.js';
import { OPEN, counter, gauge, type Declarations } from '../../metrics/declare.js';

/** The families this module writes (and all it is handed). */
export const PLUGIN_REPORT_FAMILIES = {
  pluginInfo: gauge('hermes_plugin_info', { hermes_version: OPEN, plugin_version: OPEN, profile: OPEN }, 'delivery',
    'Live bridge plugin instances (heartbeat within 3 intervals) by the Hermes version of their host, their own version and their Hermes profile, from their heartbeats.'),
  pluginValuesRefused: counter('hermes_plugin_values_refused_total', { field: VALUES.refused_field }, 'delivery',
    'String values the bridge plugin kept inside Hermes because they did not match their field\'s grammar (an id or an identifier), from its heartbeats (sum of deltas across plugin instances), by field.'),
} as const satisfies Declarations;

type Heartbeat = Extract<EventData, { type: 'plugin_heartbeat' }>;

type InfoLabels = {
  readonly hermes_version: string;
  readonly plugin_version: string;
  readonly profile: string;
};

interface InstanceReport {
  labels: InfoLabels;
  heartbeatAt: number;
  intervalSeconds: number;
  /** Cumulative refused counts by (folded) field, as last reported. */
  readonly refused: Map<string, number>;
}

/** As hermes_plugin_instances: live while the next two heartbeats may still be late. */
const LIVE_HEARTBEAT_INTERVALS = 3;
const DEFAULT_HEARTBEAT_INTERVAL_SECONDS = 5;
const REFUSED_FIELDS = new Set(VALUES.refused_field);

// Guarded label values hold no control characters, so NUL separates them unambiguously.
function infoKey(labels: InfoLabels): string {
  return `${labels.hermes_version}\u0000${labels.plugin_version}\u0000${labels.profile}`;
}

export class PluginReportRecorder implements Collectable {
  // Re-inserted on each heartbeat, so iteration runs from the least recently heard instance.
  private readonly instances = new Map<string, InstanceReport>();
  /**
   * The label combinations the next scrape writes even with no live instance: those the last
   * scrape reported and those heard since, so one whose instances went quiet or were evicted
   * reads 0. Keyed by combination, not instance (instances are only in `instances`), so eviction
   * leaves nothing here to clean up; rebuilt from the live instances at each scrape.
   */
  private readonly reported = new Map<string, InfoLabels>();

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof PLUGIN_REPORT_FAMILIES>,
    private readonly maxInstances: number,
  ) {}

  heartbeat(instance: string, heartbeat: Heartbeat): void {
    const labels = this.infoLabels(heartbeat);
    let report = this.instances.get(instance);
    if (report === undefined) {
      if (this.instances.size >= this.maxInstances) this.forgetOldest();
      report = { labels, heartbeatAt: this.context.clock(), intervalSeconds: DEFAULT_HEARTBEAT_INTERVAL_SECONDS, refused: new Map() };
    } else {
      this.instances.delete(instance);
    }
    this.instances.set(instance, report);
    report.labels = labels;
    // The arrival time: an observed_at from a skewed host clock must not decide liveness.
    report.heartbeatAt = this.context.clock();
    report.intervalSeconds = heartbeat.intervalSeconds ?? report.intervalSeconds;
    // The next scrape reports this combination even if the instance has gone quiet by then (as 0).
    this.reported.set(infoKey(labels), labels);
    this.countRefused(report, heartbeat);
  }

  /** Live instances per (hermes_version, plugin_version, profile), counted from the table. */
  collect(): void {
    const now = this.context.clock();
    const live = new Map<string, { readonly labels: InfoLabels; count: number }>();
    for (const report of this.instances.values()) {
      if (now - report.heartbeatAt > LIVE_HEARTBEAT_INTERVALS * report.intervalSeconds) continue;
      const key = infoKey(report.labels);
      const entry = live.get(key);
      if (entry === undefined) live.set(key, { labels: report.labels, count: 1 });
      else entry.count += 1;
    }
    // A combination no live instance reports any more reads 0 rather than its last count.
    for (const [key, labels] of this.reported) {
      if (!live.has(key)) this.metrics.pluginInfo.set(labels, 0);
    }
    this.reported.clear();
    for (const [key, { labels, count }] of live) {
      this.metrics.pluginInfo.set(labels, count);
      this.reported.set(key, labels);
    }
  }

  private infoLabels(heartbeat: Heartbeat): InfoLabels {
    const { labels } = this.context;
    return {
      hermes_version: labels.value('hermes_version', heartbeat.hermesVersion),
      plugin_version: labels.value('plugin_version', heartbeat.pluginVersion),
      profile: labels.value('profile', heartbeat.profile),
    };
  }

  /** Deltas of the cumulative refused counts; a smaller total is a counter that started over. */
  private countRefused(report: InstanceReport, heartbeat: Heartbeat): void {
    const totals = new Map<string, number>();
    for (const { field, total } of heartbeat.refused) {
      const key = closedLabel(REFUSED_FIELDS, field);
      totals.set(key, (totals.get(key) ?? 0) + total);
    }
    for (const [field, total] of totals) {
      const previous = report.refused.get(field) ?? 0;
      const delta = total >= previous ? total - previous : total;
      report.refused.set(field, total);
      if (delta > 0) this.metrics.pluginValuesRefused.inc({ field: field as (typeof VALUES.refused_field)[number] }, delta);
    }
  }

  private forgetOldest(): void {
    const oldest = this.instances.keys().next();
    if (oldest.done === true) return;
    this.instances.delete(oldest.value);
    this.context.evicted('instance_reports');
  }
}
