/** Delivery health: the plugin's drop reports, plugin instances, sequence gaps, duplicates and discards. */
import type { HostDelta } from '../instances.js';
import { foldedDropParts } from '../hostTotals.js';
import type { DropReport } from '../../contract/eventData.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Families } from '../../metrics/registry.js';
import { VALUES, type ValueOf } from '../../contract/vocabulary.js';
import { counter, gauge, type Declarations } from '../../metrics/declare.js';
import { fed } from '../../metrics/fedBy.js';

/** The closed value sets of this module's labels. */
export const DELIVERY_VALUES = {
  plugin_state: ['live', 'stale'],
  /** Why a plugin sequence number started a new epoch: a far jump, or a new numbering (restart). */
  sequence_reset_reason: ['jump', 'restart'],
  /** Why a plugin event answered 202 was not applied, other than being a duplicate. */
  discard_reason: ['after_lost', 'beyond_memory'],
  /** Why a plugin heartbeat was ignored as stale. */
  stale_heartbeat_reason: ['boot', 'acked_seq', 'dropped'],
} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const DELIVERY_FAMILIES = {
  pluginCallbacksDropped: fed(counter('hermes_plugin_callbacks_dropped_total', { hook: VALUES.plugin_hook, reason: VALUES.plugin_drop_reason }, 'delivery',
    'Hook callbacks the bridge plugin dropped inside Hermes, from its heartbeats (sum of deltas across plugin instances), by reason ({reason}).'),
    'plugin', '`plugin_heartbeat` `dropped` (deltas per plugin instance)'),
  pluginInstances: fed(gauge('hermes_plugin_instances', { state: DELIVERY_VALUES.plugin_state }, 'delivery',
    'Bridge plugin instances seen: live (heartbeat within 3 intervals) or stale.'),
    'plugin', '`plugin_heartbeat` arrival and `interval_seconds`'),
  pluginLastSeen: fed(gauge('hermes_plugin_last_seen_timestamp_seconds', {}, 'delivery',
    'Time the newest heartbeat or event from any bridge plugin instance arrived.'),
    'plugin', 'any plugin line or heartbeat'),
  eventsLost: fed(counter('hermes_sidecar_events_lost_total', {}, 'delivery',
    'Gaps in plugin sequence numbers: events that left Hermes but never arrived. A gap is counted once settled (see Sequence accounting below); an event arriving before that is applied and counted as late instead.'),
    'plugin', 'gaps in the plugin lines\' `instance`/`seq`, and heartbeats\' `acked_seq`'),
  eventsLate: fed(counter('hermes_sidecar_events_late_total', {}, 'delivery',
    'Plugin events that arrived after a higher sequence number of their instance, inside a still-open gap: applied once, not counted as lost.'),
    'plugin', 'an `instance`/`seq` inside an open gap'),
  eventsDuplicate: fed(counter('hermes_sidecar_events_duplicate_total', {}, 'delivery',
    'Events already applied (a retried plugin batch, or a webhook delivery id applied before); not applied again.'),
    'plugin', 'repeated `instance`/`seq`'),
  sequenceResets: fed(counter('hermes_sidecar_sequence_resets_total', { reason: DELIVERY_VALUES.sequence_reset_reason }, 'delivery',
    'New epochs of plugin sequence numbers ({reason}): jump, a number (or heartbeat acked_seq) more than --sequence.window away from every epoch of its instance (nothing is counted lost or duplicate for the jump); restart, a new numbering under the same instance (a new heartbeat boot, or acked_seq 0 without one).'),
    'plugin', '`seq` or heartbeat `acked_seq` further than `--sequence.window` from every epoch; heartbeat `boot`'),
  eventsDiscarded: fed(counter('hermes_sidecar_events_discarded_total', { reason: DELIVERY_VALUES.discard_reason }, 'delivery',
    'Plugin events answered 202 but not applied, by reason ({reason}): after_lost, its seq had already been counted lost, so applying it would make lost + applied disagree; beyond_memory, its seq is older than what the sidecar remembers of its instance (below an epoch floor, a forgotten range, or before an eviction), so it may have been applied already.'),
    'plugin', '`instance`/`seq` settled lost or beyond memory'),
  heartbeatsStale: fed(counter('hermes_sidecar_heartbeats_stale_total', { reason: DELIVERY_VALUES.stale_heartbeat_reason }, 'delivery',
    'Plugin heartbeats ignored as stale (delayed or replayed), by reason ({reason}): boot, an earlier boot of the instance; acked_seq, lower than one already seen; dropped, a drop or refused-value total lower than stored. They change nothing: no gap settles, no total, host description or liveness moves.'),
    'plugin', 'heartbeat `boot`, `acked_seq`, `dropped` and `refused_fields` totals'),
  heartbeatKeysFolded: fed(counter('hermes_sidecar_heartbeat_keys_folded_total', { key: VALUES.drop_key_part }, 'self',
    'Plugin heartbeat drop reports whose {key} is not a known one, folded into "other" before they are stored.'),
    'plugin', 'heartbeat `dropped` keys with an unknown hook or reason'),
} as const satisfies Declarations;

const HOOKS = new Set(VALUES.plugin_hook);
const DROP_REASONS = new Set(VALUES.plugin_drop_reason);
const DROP_KEY_PARTS: readonly ValueOf<'drop_key_part'>[] = VALUES.drop_key_part;

/** Plugin instances by liveness, counted at scrape time (PluginInstances.liveness). */
export interface Liveness {
  readonly live: number;
  readonly stale: number;
}

/**
 * Delivery health: what the sequence accounting and the heartbeats report. Built before the
 * plugin instance table, which reports to it.
 */
export class DeliveryRecorder {
  constructor(private readonly metrics: Families<typeof DELIVERY_FAMILIES>) {}

  /** Counts the dropped-callback rises among a heartbeat's host deltas. */
  dropped(deltas: readonly HostDelta[]): void {
    for (const delta of deltas) {
      if (delta.total !== 'dropped') continue;
      const { hook, reason } = delta;
      this.metrics.pluginCallbacksDropped.inc({ hook: closedLabel(HOOKS, hook), reason: closedLabel(DROP_REASONS, reason) }, delta.delta);
    }
  }

  lost(events: number): void {
    if (events > 0) this.metrics.eventsLost.inc({}, events);
  }

  /** An event already applied: a plugin line whose seq was seen, or a webhook delivery id seen before. */
  duplicate(): void {
    this.metrics.eventsDuplicate.inc({});
  }

  /** A plugin event that filled an open sequence gap: applied, not lost. */
  late(): void {
    this.metrics.eventsLate.inc({});
  }

  /** A new epoch: a far jump of a sequence number (or acked_seq), or a new numbering under the same instance. */
  sequenceReset(reason: (typeof DELIVERY_VALUES)['sequence_reset_reason'][number]): void {
    this.metrics.sequenceResets.inc({ reason });
  }

  /** A plugin event answered 202 and not applied, for a reason other than being a duplicate. */
  discarded(reason: (typeof DELIVERY_VALUES)['discard_reason'][number]): void {
    this.metrics.eventsDiscarded.inc({ reason });
  }

  /** A plugin heartbeat ignored as stale. */
  staleHeartbeat(reason: (typeof DELIVERY_VALUES)['stale_heartbeat_reason'][number]): void {
    this.metrics.heartbeatsStale.inc({ reason });
  }

  /** Counts a heartbeat's drop reports whose hook (or reason) the instance table folds into `other`. */
  dropReports(reports: readonly DropReport[]): void {
    const folded = foldedDropParts(reports);
    for (const key of DROP_KEY_PARTS) if (folded[key] > 0) this.metrics.heartbeatKeysFolded.inc({ key }, folded[key]);
  }

  pluginSeen(at: number): void {
    this.metrics.pluginLastSeen.set({}, at);
  }

  /** Sets the instance gauges from the table's liveness at scrape time. */
  instancesSeen({ live, stale }: Liveness): void {
    this.metrics.pluginInstances.set({ state: 'live' }, live);
    this.metrics.pluginInstances.set({ state: 'stale' }, stale);
  }
}
