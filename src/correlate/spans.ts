/**
 * A bounded table of open spans with a time-to-live, on an injected clock.
 *
 * The correlator's in-flight maps are all of this kind: an entry opens on a `pre_*` event and
 * closes on its terminal event. An entry that outlives the TTL, or that is evicted because the
 * table is full (oldest first), is handed to `onOrphan`, which counts it. Gauges of open spans are
 * counted from the table at scrape time, so nothing needs undoing.
 */
import type { Clock } from '../clock.js';

/** Why a span left the table without its terminal event. */
export type OrphanCause = 'expired' | 'evicted' | 'replaced';

interface Entry<V> {
  readonly value: V;
  readonly openedAt: number;
}

export interface SpanTableOptions<V> {
  readonly clock: Clock;
  readonly ttlSeconds: number;
  readonly maxEntries: number;
  readonly onOrphan: (value: V, cause: OrphanCause) => void;
}

export class SpanTable<V> {
  // Map iteration follows insertion order, so the first entry is always the oldest.
  private readonly entries = new Map<string, Entry<V>>();

  constructor(private readonly options: SpanTableOptions<V>) {}

  get size(): number {
    return this.entries.size;
  }

  /** Opens a span; an open span under the same key is orphaned first (its terminal event never came). */
  open(key: string, value: V): void {
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.options.onOrphan(previous.value, 'replaced');
    }
    if (this.entries.size >= this.options.maxEntries) this.evictOldest();
    this.entries.set(key, { value, openedAt: this.options.clock() });
  }

  /** Closes the span and returns its value; undefined when it is not open. */
  close(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    return entry.value;
  }

  /** Restarts the TTL of an open span (activity on an idle-expiring entry such as a session). */
  touch(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.entries.set(key, { value: entry.value, openedAt: this.options.clock() });
  }

  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** The open spans' values, oldest first. */
  *values(): IterableIterator<V> {
    for (const entry of this.entries.values()) yield entry.value;
  }

  /** Orphans every span older than the TTL. */
  sweep(): void {
    const expiredBefore = this.options.clock() - this.options.ttlSeconds;
    for (const [key, entry] of this.entries) {
      if (entry.openedAt > expiredBefore) break;
      this.entries.delete(key);
      this.options.onOrphan(entry.value, 'expired');
    }
  }

  private evictOldest(): void {
    const oldest = this.entries.entries().next();
    if (oldest.done === true) return;
    const [key, entry] = oldest.value;
    this.entries.delete(key);
    this.options.onOrphan(entry.value, 'evicted');
  }
}
