/**
 * Webhook delivery keys (contract/webhook.ts deliveryKey: the signed delivery_id or the digest of
 * the signed body, so each key is short): a bounded set of recently applied ids (the oldest is forgotten first),
 * and the ids whose delivery is being applied now. An id is remembered only once its delivery
 * has been applied: a delivery refused (429/503) or failed must be applied when it is retried.
 */
export type DeliveryClaim = 'new' | 'duplicate' | 'in_progress';

export class RecentIds {
  private readonly applied = new Set<string>();
  private readonly pending = new Set<string>();

  constructor(private readonly capacity: number) {}

  /** Claims the id for one delivery: 'new' must be followed by commit() or release(). */
  claim(id: string): DeliveryClaim {
    if (this.applied.has(id)) return 'duplicate';
    if (this.pending.has(id)) return 'in_progress';
    this.pending.add(id);
    return 'new';
  }

  /** The delivery was applied: later ones with this id are replays. */
  commit(id: string): void {
    this.pending.delete(id);
    if (this.applied.size >= this.capacity) {
      const oldest = this.applied.values().next();
      if (oldest.done !== true) this.applied.delete(oldest.value);
    }
    this.applied.add(id);
  }

  /** The delivery was not applied: a retry of it is new. */
  release(id: string): void {
    this.pending.delete(id);
  }
}
