/**
 * The ingest queue: p-queue with concurrency 1, so batches apply in arrival order, and an
 * explicit capacity because p-queue has no size limit of its own.
 */
import PQueue from 'p-queue';

export class IngestQueue {
  private readonly queue = new PQueue({ concurrency: 1 });

  constructor(readonly capacity: number) {}

  /** Batches waiting or being applied. */
  get depth(): number {
    return this.queue.size + this.queue.pending;
  }

  /**
   * Queues the task unless the queue is full (undefined: the caller must refuse the work);
   * the promise resolves once the task has run. The task catches its own errors.
   */
  tryEnqueue(task: () => void): Promise<void> | undefined {
    if (this.depth >= this.capacity) return undefined;
    return this.queue.add(task);
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
