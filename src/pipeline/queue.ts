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

  /** Queues the task unless the queue is full; false means the caller must refuse the work. */
  tryEnqueue(task: () => void): boolean {
    if (this.depth >= this.capacity) return false;
    // The task is synchronous and catches its own errors; the promise cannot reject.
    void this.queue.add(task);
    return true;
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
