/**
 * The ingest queue: decoded batches wait here, bounded in batches and in events, and one worker
 * (p-queue, concurrency 1) applies them in arrival order.
 *
 * A task is applied in slices that hand the event loop back between them, so while one large
 * batch is applied, scrapes are answered and newer batches arrive and wait: the depth is real,
 * and a full queue is refused (429) instead of showing up as slow answers.
 */
import PQueue from 'p-queue';
import { nextTurn } from '../slices.js';

export interface QueueCapacity {
  /** Most batches waiting or being applied. */
  readonly batches: number;
  /** Most events in those batches. */
  readonly events: number;
}

/** Applies a batch; resolves once every event of it has been applied. */
export type QueueTask = () => Promise<void>;

export class IngestQueue {
  private readonly queue = new PQueue({ concurrency: 1 });
  private queuedEvents = 0;

  constructor(readonly capacity: QueueCapacity) {}

  /** Batches waiting or being applied. */
  get depth(): number {
    return this.queue.size + this.queue.pending;
  }

  /** Events in those batches. */
  get events(): number {
    return this.queuedEvents;
  }

  /**
   * Queues the task unless it does not fit (undefined: the caller must refuse the work); the
   * promise resolves once the task has run. A batch larger than the whole event capacity still
   * fits an empty queue, so no valid request is refused forever.
   */
  tryEnqueue(events: number, task: QueueTask): Promise<void> | undefined {
    if (this.depth >= this.capacity.batches) return undefined;
    if (this.queuedEvents > 0 && this.queuedEvents + events > this.capacity.events) return undefined;
    this.queuedEvents += events;
    return this.queue.add(async () => {
      // Starting on a later turn keeps add() from running the first slice inside the request.
      await nextTurn();
      try {
        await task();
      } finally {
        this.queuedEvents -= events;
      }
    });
  }

  pause(): void {
    this.queue.pause();
  }

  resume(): void {
    this.queue.start();
  }

  /** Resolves once every queued batch has been applied. */
  drained(): Promise<void> {
    return this.queue.onIdle();
  }
}
