/** Delivery health: the plugin's drop reports, plugin instances, sequence gaps, duplicates and discards. */
import type { DropDelta } from '../instances.js';
import { VALUES, type ValueOf } from '../../metrics/catalogue.js';
import { closedLabel } from '../../metrics/labels.js';
import type { OwnedMetrics } from '../../metrics/registry.js';
import type { Collectable } from './context.js';

const HOOKS = new Set(VALUES.plugin_hook);
const DROP_REASONS = new Set(VALUES.plugin_drop_reason);

/** Plugin instances by liveness, read at scrape time. */
export type Liveness = () => { readonly live: number; readonly stale: number };

export class DeliveryRecorder implements Collectable {
  constructor(
    private readonly metrics: OwnedMetrics<'correlate/recorders/delivery'>,
    private readonly liveness: Liveness,
  ) {}

  dropped(deltas: readonly DropDelta[]): void {
    for (const { hook, reason, delta } of deltas) {
      this.metrics.pluginCallbacksDropped.inc({ hook: closedLabel(HOOKS, hook), reason: closedLabel(DROP_REASONS, reason) }, delta);
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
  sequenceReset(reason: ValueOf<'sequence_reset_reason'>): void {
    this.metrics.sequenceResets.inc({ reason });
  }

  /** A plugin event answered 202 and not applied, for a reason other than being a duplicate. */
  discarded(reason: ValueOf<'discard_reason'>): void {
    this.metrics.eventsDiscarded.inc({ reason });
  }

  /** A plugin heartbeat ignored as stale. */
  staleHeartbeat(reason: ValueOf<'stale_heartbeat_reason'>): void {
    this.metrics.heartbeatsStale.inc({ reason });
  }

  /** A heartbeat drop key whose hook or reason was folded into `other`. */
  folded(key: ValueOf<'drop_key_part'>): void {
    this.metrics.heartbeatKeysFolded.inc({ key });
  }

  pluginSeen(at: number): void {
    this.metrics.pluginLastSeen.set({}, at);
  }

  collect(): void {
    const { live, stale } = this.liveness();
    this.metrics.pluginInstances.set({ state: 'live' }, live);
    this.metrics.pluginInstances.set({ state: 'stale' }, stale);
  }
}
