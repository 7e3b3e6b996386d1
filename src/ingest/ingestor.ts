/**
 * The door between the HTTP routes and the queue: refuses work when the queue is full or the
 * sidecar is shutting down (counting every refused event), and otherwise queues the batch and
 * counts what it accepted.
 */
import type { EventSource, ObserverEvent } from '../contract/events.js';
import { eventLabel } from '../contract/hooks.js';
import type { Metrics } from '../metrics/registry.js';
import type { Dispatcher } from '../correlate/dispatcher.js';
import type { IngestQueue } from './queue.js';

export type Refusal = 'queue_full' | 'shutting_down';

/** Either a refusal, or the promise that the accepted batch has been applied. */
export type Admission = { readonly refused: Refusal } | { readonly refused: undefined; readonly applied: Promise<void> };

const APPLIED: Admission = { refused: undefined, applied: Promise.resolve() };

export class Ingestor {
  private draining = false;

  constructor(
    private readonly queue: IngestQueue,
    private readonly dispatcher: Dispatcher,
    private readonly metrics: Metrics,
  ) {}

  get accepting(): boolean {
    return !this.draining;
  }

  submit(events: readonly ObserverEvent[], source: EventSource): Admission {
    if (this.draining) return this.refuse(events.length, 'shutting_down');
    if (events.length === 0) return APPLIED;
    const applied = this.queue.tryEnqueue(() => this.dispatcher.applyBatch(events));
    if (applied === undefined) return this.refuse(events.length, 'queue_full');
    this.countReceived(events, source);
    return { refused: undefined, applied };
  }

  /** Stops accepting and resolves once everything accepted has been applied. */
  async drain(): Promise<void> {
    this.draining = true;
    this.queue.resume();
    await this.queue.drained();
  }

  private refuse(count: number, refused: Refusal): Admission {
    this.metrics.eventsDropped.inc({ reason: refused === 'queue_full' ? 'queue_full' : 'shutdown' }, count);
    return { refused };
  }

  private countReceived(events: readonly ObserverEvent[], source: EventSource): void {
    const perEvent = new Map<string, number>();
    for (const event of events) {
      const label = eventLabel(event.name);
      perEvent.set(label, (perEvent.get(label) ?? 0) + 1);
    }
    for (const [event, count] of perEvent) this.metrics.eventsReceived.inc({ source, event }, count);
  }
}
