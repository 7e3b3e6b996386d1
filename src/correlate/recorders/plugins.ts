/**
 * What each bridge plugin instance says about itself in its heartbeat, as metrics: the Hermes
 * version of its host, its own version and its Hermes profile (hermes_plugin_info counts the live
 * instances of each combination, so a fleet shows which versions and profiles report), and the
 * values its boundary grammar kept inside Hermes, by field.
 *
 * The state behind both is the one instance table (../instances.ts): it keeps each instance's
 * host description, judges liveness and turns cumulative totals into per-boot deltas; this
 * recorder guards the label values and writes what the table returns. The instance id is never a
 * label.
 */
import type { EventData } from '../../contract/events.js';
import { UNKNOWN } from '../../wireText.js';
import type { Families } from '../../metrics/registry.js';
import type { RecorderContext } from './context.js';
import { VALUES } from '../../contract/vocabulary.js';
import { OPEN, counter, gauge, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';
import { hostKey, type HostCount, type HostDelta, type HostLabels } from '../instances.js';
import { refusedField } from '../hostTotals.js';

/** The families this module writes (and all it is handed). */
export const PLUGIN_REPORT_FAMILIES = {
  pluginInfo: fed(gauge('hermes_plugin_info', { hermes_version: OPEN, plugin_version: OPEN, profile: OPEN }, 'delivery',
    'Live bridge plugin instances (heartbeat within 3 intervals, as hermes_plugin_instances) by the Hermes version of their host, their own version and their Hermes profile, from their last heartbeat that was not stale; an instance that sent events but no heartbeat yet counts as unknown.'),
    'plugin', '`plugin_heartbeat`: `hermes_version`, `plugin_version`, `profile` (Hermes 0.21 `ctx.profile_name`) of the instances whose heartbeat is live'),
  pluginValuesRefused: fed(counter('hermes_plugin_values_refused_total', { field: VALUES.refused_field }, 'delivery',
    'String values the bridge plugin kept inside Hermes because they did not match their field\'s grammar (an id or an identifier), from its heartbeats (sum of deltas across plugin instances), by field.'),
    'plugin', '`plugin_heartbeat` `refused_fields` (deltas per plugin instance)'),
} as const satisfies Declarations;

type Heartbeat = Extract<EventData, { type: 'plugin_heartbeat' }>;

/** The labels of an instance that has sent events but no heartbeat yet. */
const UNDESCRIBED: HostLabels = { hermes_version: UNKNOWN, plugin_version: UNKNOWN, profile: UNKNOWN };

export class PluginReportRecorder {
  /**
   * The combinations the last scrape reported: the next one writes 0 for those no live instance
   * reports any more, rather than leaving their last count. Bounded by the label caps.
   */
  private reported = new Map<string, HostLabels>();

  constructor(
    private readonly context: RecorderContext,
    private readonly metrics: Families<typeof PLUGIN_REPORT_FAMILIES>,
  ) {}

  /** A heartbeat's host description as guarded label values (unknown where absent). */
  hostLabels(heartbeat: Heartbeat): HostLabels {
    const { labels } = this.context;
    return {
      hermes_version: labels.value('hermes_version', heartbeat.hermesVersion),
      plugin_version: labels.value('plugin_version', heartbeat.pluginVersion),
      profile: labels.value('profile', heartbeat.profile),
    };
  }

  /** Counts the refused-value rises among a heartbeat's host deltas. */
  refused(deltas: readonly HostDelta[]): void {
    for (const delta of deltas) {
      if (delta.total === 'refused') this.metrics.pluginValuesRefused.inc({ field: refusedField(delta) }, delta.delta);
    }
  }

  /** Sets hermes_plugin_info from the instance table's liveness pass (live instances by host). */
  hostsSeen(hosts: readonly HostCount[]): void {
    // An instance without a heartbeat and one whose heartbeat named nothing share the unknown labels.
    const seen = new Map<string, { readonly labels: HostLabels; live: number }>();
    for (const { host, live } of hosts) {
      const labels = host ?? UNDESCRIBED;
      const key = hostKey(labels);
      const count = seen.get(key);
      if (count === undefined) seen.set(key, { labels, live });
      else count.live += live;
    }
    for (const [key, labels] of this.reported) if (!seen.has(key)) this.metrics.pluginInfo.set(labels, 0);
    this.reported = new Map();
    for (const [key, { labels, live }] of seen) {
      this.metrics.pluginInfo.set(labels, live);
      this.reported.set(key, labels);
    }
  }
}
