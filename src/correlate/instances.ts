/**
 * The table of bridge-plugin instances: per instance its sequence accounting (sequence/tracker.ts;
 * the rules are in docs/metrics.md, "Sequence accounting"), heartbeat drop totals turned into
 * deltas, and liveness.
 *
 * The table is bounded in entries and bytes (least recently seen evicted, counted), and idle
 * instances are forgotten after the TTL. A forgotten or evicted instance that applied events
 * leaves a tombstone (its boot and each epoch's [floor, highest]) in a bounded tombstone table,
 * so a batch it retries after coming back is not applied twice: its old numbers are beyond
 * memory (counted), its new ones count as usual.
 *
 * Heartbeat drop reports are keyed by hook and reason; both are folded into closed sets (known
 * hooks and reasons, else `other`), so the stored keys per instance are bounded by those sets.
 */
import type { Clock } from '../clock.js';
import {
  BYTES,
  InstanceTracker,
  type ResetReason,
  type SequenceVerdict,
  type StaleReason,
  type Tombstone,
  type TrackerContext,
} from './sequence/tracker.js';
import { STATE_VALUES } from './tables.js';
import { VALUES } from '../contract/vocabulary.js';

export { MAX_OPEN_GAPS, MAX_INTERVALS } from './sequence/epoch.js';
export { MAX_EPOCHS, MAX_FORGOTTEN_RANGES, MAX_PAST_BOOTS, type SequenceVerdict } from './sequence/tracker.js';

/** Re-ordering the table on every event is wasted work: once a second per instance is plenty. */
const REORDER_AFTER_SECONDS = 1;

/** A heartbeat is "live" while the next two may still be late. */
const LIVE_HEARTBEAT_INTERVALS = 3;
const DEFAULT_HEARTBEAT_INTERVAL_SECONDS = 5;

/** Bytes charged per table entry beyond its state: map slots, timestamps, the entry object. */
const ENTRY_BYTES = 128;

/** The hooks and reasons the bridge plugin reports drops for; anything else folds into `other`. */
const DROP_HOOKS: ReadonlySet<string> = new Set(VALUES.plugin_hook);
const KNOWN_DROP_REASONS: ReadonlySet<string> = new Set(VALUES.plugin_drop_reason);
const OTHER = 'other';

interface InstanceState {
  lastSeenAt: number;
  lastHeartbeatAt: number | undefined;
  intervalSeconds: number;
  readonly tracker: InstanceTracker;
  /** Bytes charged to the table for this entry (id included), as of its last change. */
  bytes: number;
}

interface StoredTombstone {
  readonly tombstone: Tombstone;
  readonly bytes: number;
}

export interface DropDelta {
  readonly hook: string;
  readonly reason: string;
  readonly delta: number;
}

export interface Heartbeat {
  readonly intervalSeconds?: number | undefined;
  readonly ackedSeq?: number | undefined;
  /** The sender's numbering run: a new one under the same instance is a restart. */
  readonly boot?: string | undefined;
  readonly dropped: readonly { hook: string; reason: string; total: number }[];
}

/** The state tables this module bounds (the `table` label of the evictions counter). */
export type InstanceTable = Extract<(typeof STATE_VALUES)['state_table'][number], `plugin_${string}`>;

export interface InstancesOptions {
  readonly clock: Clock;
  readonly ttlSeconds: number;
  readonly maxInstances: number;
  /** Most tombstones kept (default 4 × maxInstances). */
  readonly maxTombstones?: number;
  /** Bytes the instance table may hold (default 64 MiB); tombstones get a quarter more. */
  readonly maxBytes?: number;
  /** Largest plausible jump of a sequence number (default 100,000). */
  readonly windowSize?: number;
  /** How long a gap waits for late events before it is lost (default 30 s). */
  readonly reorderSeconds?: number;
  /** Called when a bounded table drops its oldest entry: an instance, a tombstone, an interval, a forgotten range. */
  readonly onEvict: (table: InstanceTable) => void;
  /** Events settled as lost. */
  readonly onLost?: (events: number) => void;
  /** A new epoch (a far jump) or a new numbering under the same instance (a restart). */
  readonly onReset?: (reason: ResetReason) => void;
  /** A heartbeat ignored as stale (an earlier boot, a lower acked_seq or a lower drop total). */
  readonly onStale?: (reason: StaleReason) => void;
  /** A heartbeat drop key folded into `other`. */
  readonly onFolded?: (key: 'hook' | 'reason') => void;
}

export const DEFAULT_SEQUENCE_WINDOW = 100_000;
export const DEFAULT_REORDER_SECONDS = 30;
export const DEFAULT_SEQUENCE_MAX_BYTES = 64 * 1024 * 1024;

export class PluginInstances {
  // Re-inserted when seen again (at most once a second), so iteration runs from least to most
  // recently seen, give or take a second.
  private readonly states = new Map<string, InstanceState>();
  private readonly tombstones = new Map<string, StoredTombstone>();
  private bytes = 0;
  private tombstoneBytes = 0;
  private readonly context: TrackerContext;

  constructor(private readonly options: InstancesOptions) {
    const { onLost, onReset, onStale, onEvict } = options;
    const clock = options.clock;
    this.context = {
      get now() {
        return clock();
      },
      window: options.windowSize ?? DEFAULT_SEQUENCE_WINDOW,
      lost: (events) => {
        if (events > 0) onLost?.(events);
      },
      trimmed: () => onEvict('plugin_intervals'),
      reset: (reason) => onReset?.(reason),
      stale: (reason) => onStale?.(reason),
      forgot: () => onEvict('plugin_epochs'),
    };
  }

  get size(): number {
    return this.states.size;
  }

  get tombstoneCount(): number {
    return this.tombstones.size;
  }

  /** Records a sighting and answers what to do with an event carrying this sequence number. */
  sequence(instance: string, seq: number): SequenceVerdict {
    const state = this.touch(instance);
    const verdict = state.tracker.arrive(seq, this.context);
    this.account(instance, state);
    return verdict;
  }

  /** Records a sighting without a sequence number (a heartbeat or an unsequenced line). */
  seen(instance: string): void {
    this.touch(instance);
  }

  /**
   * Applies a heartbeat (see InstanceTracker.heartbeat): settles open gaps, takes acked_seq and
   * boot into account, and turns its cumulative drop totals into increments.
   */
  heartbeat(instance: string, heartbeat: Heartbeat): DropDelta[] {
    const state = this.touch(instance);
    state.lastHeartbeatAt = state.lastSeenAt;
    const { intervalSeconds, ackedSeq, boot } = heartbeat;
    if (intervalSeconds !== undefined && intervalSeconds > 0) state.intervalSeconds = intervalSeconds;
    const increments = state.tracker.heartbeat({ boot, ackedSeq, totals: this.foldDrops(heartbeat.dropped) }, this.context);
    this.account(instance, state);
    return increments.map(([key, delta]) => {
      const [hook = OTHER, reason = OTHER] = key.split('\u0000');
      return { hook, reason, delta };
    });
  }

  /** Drop keys stored for an instance (bounded by the known hooks and reasons). */
  storedDropKeys(instance: string): number {
    return this.states.get(instance)?.tracker.storedDropKeys ?? 0;
  }

  /** Settles gaps that waited longer than the reorder time (run on sweeps and scrapes). */
  settleExpired(): void {
    const openedBefore = this.options.clock() - this.reorderSeconds;
    for (const state of this.states.values()) state.tracker.settleExpired(openedBefore, this.context);
  }

  /** Instances whose last heartbeat (or, before any, last event) is recent enough, and the rest. */
  liveness(): { live: number; stale: number } {
    const now = this.options.clock();
    let live = 0;
    for (const state of this.states.values()) {
      const lastSign = state.lastHeartbeatAt ?? state.lastSeenAt;
      if (now - lastSign <= LIVE_HEARTBEAT_INTERVALS * state.intervalSeconds) live += 1;
    }
    return { live, stale: this.states.size - live };
  }

  /** Forgets instances idle for longer than the TTL (leaving tombstones). */
  sweep(): void {
    const idleBefore = this.options.clock() - this.options.ttlSeconds;
    // Order is only approximate within a second, so every entry is checked.
    for (const [instance, state] of this.states) {
      if (state.lastSeenAt <= idleBefore) this.forget(instance, state);
    }
    this.settleExpired();
  }

  private get reorderSeconds(): number {
    return this.options.reorderSeconds ?? DEFAULT_REORDER_SECONDS;
  }

  private get maxBytes(): number {
    return this.options.maxBytes ?? DEFAULT_SEQUENCE_MAX_BYTES;
  }

  /** Drop reports keyed by folded hook and reason, totals of keys that fold together summed. */
  private foldDrops(reports: Heartbeat['dropped']): Map<string, number> {
    const folded = new Map<string, number>();
    for (const { hook, reason, total } of reports) {
      const knownHook = DROP_HOOKS.has(hook);
      const knownReason = KNOWN_DROP_REASONS.has(reason);
      if (!knownHook) this.options.onFolded?.('hook');
      if (!knownReason) this.options.onFolded?.('reason');
      const key = `${knownHook ? hook : OTHER}\u0000${knownReason ? reason : OTHER}`;
      folded.set(key, (folded.get(key) ?? 0) + total);
    }
    return folded;
  }

  private touch(instance: string): InstanceState {
    const now = this.options.clock();
    let state = this.states.get(instance);
    if (state === undefined) {
      const stored = this.tombstones.get(instance);
      if (stored !== undefined) {
        this.tombstones.delete(instance);
        this.tombstoneBytes -= stored.bytes;
      }
      const tracker = stored === undefined ? new InstanceTracker() : InstanceTracker.restore(stored.tombstone);
      state = { lastSeenAt: now, lastHeartbeatAt: undefined, intervalSeconds: DEFAULT_HEARTBEAT_INTERVAL_SECONDS, tracker, bytes: 0 };
      this.states.set(instance, state);
      this.account(instance, state);
      return state;
    }
    if (now - state.lastSeenAt >= REORDER_AFTER_SECONDS) {
      this.states.delete(instance);
      this.states.set(instance, state);
    }
    state.lastSeenAt = now;
    return state;
  }

  /** Recharges an entry's bytes, then evicts the least recently seen others while over a bound. */
  private account(instance: string, state: InstanceState): void {
    const bytes = entryBytes(instance) + state.tracker.bytes;
    this.bytes += bytes - state.bytes;
    state.bytes = bytes;
    while (this.states.size > this.options.maxInstances || (this.bytes > this.maxBytes && this.states.size > 1)) {
      const victim = this.leastRecentOtherThan(instance);
      if (victim === undefined) return;
      this.forget(victim[0], victim[1]);
      this.options.onEvict('plugin_instances');
    }
  }

  /** The least recently seen entry that is not `instance` (which may sit near the front within its second). */
  private leastRecentOtherThan(instance: string): [string, InstanceState] | undefined {
    for (const entry of this.states) if (entry[0] !== instance) return entry;
    return undefined;
  }

  /** Removes an instance, settling its gaps, and keeps its tombstone when it applied events. */
  private forget(instance: string, state: InstanceState): void {
    this.states.delete(instance);
    this.bytes -= state.bytes;
    const tombstone = state.tracker.tombstone(this.context);
    if (tombstone !== undefined) this.bury(instance, tombstone);
  }

  private bury(instance: string, tombstone: Tombstone): void {
    const bytes = entryBytes(instance) + tombstoneBytes(tombstone);
    this.tombstones.set(instance, { tombstone, bytes });
    this.tombstoneBytes += bytes;
    const maxTombstones = this.options.maxTombstones ?? 4 * this.options.maxInstances;
    while (this.tombstones.size > maxTombstones || this.tombstoneBytes > this.maxBytes / 4) {
      const oldest = this.tombstones.entries().next();
      if (oldest.done === true) return;
      this.tombstones.delete(oldest.value[0]);
      this.tombstoneBytes -= oldest.value[1].bytes;
      this.options.onEvict('plugin_tombstones');
    }
  }
}

/** An id's bytes as stored (UTF-16 code units, at most 2 bytes each in memory) plus the entry itself. */
function entryBytes(instance: string): number {
  return ENTRY_BYTES + 2 * instance.length;
}

function tombstoneBytes(tombstone: Tombstone): number {
  let bytes = BYTES.tracker + (tombstone.boot?.length ?? 0) + tombstone.dropTotals.size * BYTES.dropKey;
  bytes += (tombstone.ranges.length + tombstone.forgotten.length) * BYTES.interval;
  for (const boot of tombstone.pastBoots) bytes += boot.length;
  return bytes;
}
