/**
 * The door between the HTTP routes and the queue: refuses work when the queue is full or the
 * sidecar is shutting down, and otherwise queues the batch for the queue's worker, which applies
 * it in slices. It owns the accounting of events past decoding: received (by source and name),
 * dropped (refused, or failed to apply) and the queue gauges.
 */
import type { ObserverEvent } from '../contract/events.js';
import { eventLabel } from '../contract/hooks.js';
import type { Families } from '../metrics/registry.js';
import type { Dispatcher } from '../correlate/dispatcher.js';
import type { IngestQueue } from './queue.js';
import { applyInSlices, eventLoopSlicer, type Slicer } from '../slices.js';
import { VALUES } from '../contract/vocabulary.js';
import { counter, gauge, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';

/** The closed value sets of this module's labels. */
export const INGESTOR_VALUES = {
  /** Why accepted-looking events were not applied; the sender is told to retry the first two. */
  drop_reason: ['queue_full', 'shutdown', 'internal_error'],
} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const INGESTOR_FAMILIES = {
  eventsReceived: fed(counter('hermes_sidecar_events_received_total', { source: VALUES.event_source, event: VALUES.event }, 'self',
    'Events taken from the ingest queue to be applied, by source ({source}) and hook name.',
    // Sources × event names would be 200 zero series; a source appears with its first event.
    { preinit: false }),
    'sidecar', 'ingest'),
  eventsDropped: fed(counter('hermes_sidecar_events_dropped_total', { reason: INGESTOR_VALUES.drop_reason }, 'self',
    'Events not applied, by reason ({reason}): the queue was full or the sidecar was shutting down (the sender is told to retry), or applying the event failed.'),
    'sidecar', 'ingest'),
  queueDepth: fed(gauge('hermes_sidecar_queue_depth', {}, 'self',
    'Batches waiting in the ingest queue or being applied.'),
    'sidecar', 'ingest queue'),
  queueCapacity: fed(gauge('hermes_sidecar_queue_capacity', {}, 'self',
    'Configured bound of the ingest queue, in batches.'),
    'sidecar', 'configuration'),
  queueEvents: fed(gauge('hermes_sidecar_queue_events', {}, 'self',
    'Events in the batches waiting in the ingest queue or being applied.'),
    'sidecar', 'ingest queue'),
  queueEventsCapacity: fed(gauge('hermes_sidecar_queue_events_capacity', {}, 'self',
    'Configured bound of the ingest queue, in events (--ingest.queue-max-events).'),
    'sidecar', 'configuration'),
} as const satisfies Declarations;

export type Refusal = 'queue_full' | 'shutting_down';

/** Either a refusal, or the promise that the accepted batch has been applied. */
export type Admission = { readonly refused: Refusal } | { readonly refused: undefined; readonly applied: Promise<void> };

const APPLIED: Admission = { refused: undefined, applied: Promise.resolve() };

export class Ingestor {
  private draining = false;

  constructor(
    private readonly queue: IngestQueue,
    private readonly dispatcher: Dispatcher,
    private readonly metrics: Families<typeof INGESTOR_FAMILIES>,
    private readonly slicer: Slicer = eventLoopSlicer(),
  ) {
    metrics.queueCapacity.set({}, queue.capacity.batches);
    metrics.queueEventsCapacity.set({}, queue.capacity.events);
  }

  get accepting(): boolean {
    return !this.draining;
  }

  submit(events: readonly ObserverEvent[]): Admission {
    if (this.draining) return this.refuse(events.length, 'shutting_down');
    if (events.length === 0) return APPLIED;
    const applied = this.queue.tryEnqueue(events.length, () =>
      applyInSlices(events.length, (from, to) => this.apply(events.slice(from, to)), this.slicer),
    );
    if (applied === undefined) return this.refuse(events.length, 'queue_full');
    return { refused: undefined, applied };
  }

  /** The queue depth, read at scrape time. */
  collect(): void {
    this.metrics.queueDepth.set({}, this.queue.depth);
    this.metrics.queueEvents.set({}, this.queue.events);
  }

  /**
   * Counted as received in the same step that applies (or counts as duplicate or discarded), so
   * received = applied + duplicates + discarded holds at every scrape, not only once the queue is
   * empty: a batch still waiting is visible in hermes_sidecar_queue_events instead.
   */
  private apply(events: readonly ObserverEvent[]): void {
    this.countReceived(events);
    const failed = this.dispatcher.applyBatch(events);
    if (failed > 0) this.metrics.eventsDropped.inc({ reason: 'internal_error' }, failed);
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

  private countReceived(events: readonly ObserverEvent[]): void {
    const perSeries = new Map<string, { labels: { source: ObserverEvent['source']; event: ReturnType<typeof eventLabel> }; count: number }>();
    for (const event of events) {
      const labels = { source: event.source, event: eventLabel(event.name) };
      const key = `${labels.source}\u0000${labels.event}`;
      const entry = perSeries.get(key);
      if (entry === undefined) perSeries.set(key, { labels, count: 1 });
      else entry.count += 1;
    }
    for (const { labels, count } of perSeries.values()) this.metrics.eventsReceived.inc(labels, count);
  }
}
