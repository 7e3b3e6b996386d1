/** Delivery health: the plugin's drop reports, sequence gaps and duplicates. */
import { eventLabel } from '../../contract/hooks.js';
import type { DropDelta } from '../instances.js';
import { closedLabel } from '../../metrics/labels.js';
import type { Metrics } from '../../metrics/registry.js';

export const DROP_REASONS: readonly string[] = [
  'queue_full',
  'serialize_error',
  'callback_error',
  'send_failed',
  'shutdown',
];
const KNOWN_DROP_REASONS: ReadonlySet<string> = new Set(DROP_REASONS);

export class DeliveryRecorder {
  constructor(private readonly metrics: Metrics) {}

  dropped(deltas: readonly DropDelta[]): void {
    for (const { hook, reason, delta } of deltas) {
      this.metrics.pluginCallbacksDropped.inc(
        { hook: eventLabel(hook), reason: closedLabel(KNOWN_DROP_REASONS, reason) },
        delta,
      );
    }
  }

  lost(events: number): void {
    if (events > 0) this.metrics.eventsLost.inc({}, events);
  }

  duplicate(): void {
    this.metrics.eventsDuplicate.inc({});
  }

  pluginSeen(at: number): void {
    this.metrics.pluginLastSeen.set({}, at);
  }
}
