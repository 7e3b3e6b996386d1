/**
 * A bounded table of open spans with a time-to-live, on an injected clock.
 *
 * The correlator's in-flight maps are all of this kind: an entry opens on a `pre_*` event and
 * closes on its terminal event. An entry that outlives the TTL, or that is evicted because the
 * table is full (oldest first), is handed to `onOrphan`, which counts it. Every span leaving the
 * table, by any path, goes through one place (`remove`, which calls `onRemove`), so the gauges of
 * open spans move as spans come and go, by any path, and a scrape reads them without a scan.
 *
 * Full means too many entries or too many bytes. Each entry is charged ENTRY_OVERHEAD_BYTES, its
 * key's bytes and the bytes of any client string its value keeps (`open`'s `extraBytes`, or
 * `charge` later), so ids of any length cannot hold more memory than the table's byte budget.
 *
 * Entries form a list, oldest first, beside the id map: finding the oldest entry (to evict it, or
 * to expire it) is one pointer, whatever was deleted before it. A Map alone keeps its deleted
 * entries as holes until it rehashes, and walking to its first live entry past them cost 50 µs
 * per eviction at 100,000 entries. Every operation is O(1) (a long id is hashed once per call).
 */
import type { Clock } from '../clock.js';
import { IdMap, isLongId, storedKey, stringBytes } from './idMap.js';

/** Why a span left the table without its terminal event. */
export type OrphanCause = 'expired' | 'evicted' | 'replaced';

/**
 * Bytes charged per entry besides its strings: the entry object, its slot in the id map, the
 * value object and the gauge bookkeeping, measured at 150–230 B of live heap per entry across the
 * recorders' tables (bench/tables.ts, "heap per entry"), rounded up.
 */
export const ENTRY_OVERHEAD_BYTES = 256;

interface Entry<V> {
  /** The key in the id map (the id, or its digest when long). */
  readonly key: string;
  readonly long: boolean;
  readonly value: V;
  openedAt: number;
  /** Bytes charged to this entry. */
  bytes: number;
  older: Entry<V> | undefined;
  newer: Entry<V> | undefined;
}

/** A table with a TTL sweep that can run in slices (slices.ts). */
export interface Sweepable {
  /** A sweep as of now, in steps: each call does a small, bounded piece of it and returns false once it is done. */
  sweepSteps(): () => boolean;
}

export interface SpanTableOptions<V> {
  readonly clock: Clock;
  readonly ttlSeconds: number;
  readonly maxEntries: number;
  /** Most bytes charged to the entries together (see ENTRY_OVERHEAD_BYTES). */
  readonly maxBytes: number;
  readonly onOrphan: (value: V, cause: OrphanCause) => void;
  /** Called once for every span that leaves the table, closed or orphaned (before onOrphan). */
  readonly onRemove?: (value: V) => void;
}

export class SpanTable<V> implements Sweepable {
  private readonly entries = new IdMap<Entry<V>>();
  private oldest: Entry<V> | undefined;
  private newest: Entry<V> | undefined;
  private charged = 0;

  constructor(private readonly options: SpanTableOptions<V>) {}

  get size(): number {
    return this.entries.size;
  }

  /** Bytes charged to the open entries. */
  get bytes(): number {
    return this.charged;
  }

  /**
   * Opens a span; an open span under the same key is orphaned first (its terminal event never
   * came). `extraBytes`: bytes of client strings the value keeps (a session id, say).
   */
  open(id: string, value: V, extraBytes = 0): void {
    const key = storedKey(id);
    const long = isLongId(id);
    const previous = this.entries.getStored(key, long);
    if (previous !== undefined) {
      this.remove(previous);
      this.options.onOrphan(previous.value, 'replaced');
    }
    const bytes = ENTRY_OVERHEAD_BYTES + stringBytes(key) + extraBytes;
    while (this.oldest !== undefined && (this.entries.size >= this.options.maxEntries || this.charged + bytes > this.options.maxBytes)) {
      this.evict(this.oldest);
    }
    const entry: Entry<V> = { key, long, value, openedAt: this.options.clock(), bytes, older: this.newest, newer: undefined };
    this.entries.setStored(key, long, entry);
    this.append(entry);
    this.charged += bytes;
  }

  /**
   * Charges an open span for a client string its value took on after it was opened; older spans
   * are evicted while the table is over its byte budget (never this one).
   */
  charge(id: string, bytes: number): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    entry.bytes += bytes;
    this.charged += bytes;
    while (this.charged > this.options.maxBytes) {
      const victim = this.oldest === entry ? entry.newer : this.oldest;
      if (victim === undefined) return;
      this.evict(victim);
    }
  }

  /** Closes the span and returns its value; undefined when it is not open. */
  close(id: string): V | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    this.remove(entry);
    return entry.value;
  }

  /**
   * Restarts the TTL of an open span (activity on an idle-expiring entry such as a session) and
   * returns its value; undefined when it is not open. One lookup for a caller that needs both.
   */
  touch(id: string): V | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    entry.openedAt = this.options.clock();
    if (entry !== this.newest) {
      this.unlink(entry);
      entry.older = this.newest;
      entry.newer = undefined;
      this.append(entry);
    }
    return entry.value;
  }

  get(id: string): V | undefined {
    return this.entries.get(id)?.value;
  }

  /** Orphans every span older than the TTL, in one go. */
  sweep(): void {
    const step = this.sweepSteps();
    while (step());
  }

  /**
   * A sweep as of now, one expired span per call: each call orphans the oldest span if it was
   * opened before the TTL, and returns false once none is left. Spans opened or touched while a
   * sliced sweep is under way are newer, so it ends where they start.
   */
  sweepSteps(): () => boolean {
    const expiredBefore = this.options.clock() - this.options.ttlSeconds;
    return () => {
      const oldest = this.oldest;
      if (oldest === undefined || oldest.openedAt > expiredBefore) return false;
      this.remove(oldest);
      this.options.onOrphan(oldest.value, 'expired');
      return true;
    };
  }

  private evict(entry: Entry<V>): void {
    this.remove(entry);
    this.options.onOrphan(entry.value, 'evicted');
  }

  private remove(entry: Entry<V>): void {
    this.entries.deleteStored(entry.key, entry.long);
    this.unlink(entry);
    this.charged -= entry.bytes;
    this.options.onRemove?.(entry.value);
  }

  private append(entry: Entry<V>): void {
    if (this.newest === undefined) this.oldest = entry;
    else this.newest.newer = entry;
    this.newest = entry;
  }

  private unlink(entry: Entry<V>): void {
    if (entry.older === undefined) this.oldest = entry.newer;
    else entry.older.newer = entry.newer;
    if (entry.newer === undefined) this.newest = entry.older;
    else entry.newer.older = entry.older;
  }
}
