/**
 * State kept per bridge-plugin instance: sequence tracking (lost and duplicate events),
 * heartbeat drop counters (turned into deltas) and liveness.
 *
 * The plugin stamps each event with a random per-process `instance` and a `seq` that grows by
 * one per event it queued, and sends batches oldest first; so a `seq` at or below the highest
 * applied one is a retried duplicate, and a jump past the next one is a gap: events that left
 * Hermes and never arrived. Instances idle for longer than the TTL are forgotten; the table is
 * bounded (least recently seen evicted).
 */
import type { Clock } from '../clock.js';

/** Re-ordering the table on every event is wasted work: once a second per instance is plenty. */
const REORDER_AFTER_SECONDS = 1;

/** A heartbeat is "live" while the next two may still be late. */
const LIVE_HEARTBEAT_INTERVALS = 3;
const DEFAULT_HEARTBEAT_INTERVAL_SECONDS = 5;

interface InstanceState {
  lastSeenAt: number;
  lastHeartbeatAt: number | undefined;
  intervalSeconds: number;
  highestSeq: number | undefined;
  readonly dropTotals: Map<string, number>;
}

export interface SequenceVerdict {
  /** False for a duplicate: the event was applied before. */
  readonly apply: boolean;
  /** Events skipped between the last applied sequence number and this one. */
  readonly lost: number;
}

export interface DropDelta {
  readonly hook: string;
  readonly reason: string;
  readonly delta: number;
}

export interface Heartbeat {
  readonly intervalSeconds?: number;
  readonly ackedSeq?: number;
  readonly dropped: readonly { hook: string; reason: string; total: number }[];
}

export interface InstancesOptions {
  readonly clock: Clock;
  readonly ttlSeconds: number;
  readonly maxInstances: number;
  /** Called when a full table forgets its least recently seen instance. */
  readonly onEvict: () => void;
}

export class PluginInstances {
  // Re-inserted when seen again (at most once a second), so iteration runs from least to most
  // recently seen, give or take a second.
  private readonly states = new Map<string, InstanceState>();

  constructor(private readonly options: InstancesOptions) {}

  get size(): number {
    return this.states.size;
  }

  /** Records a sighting and answers whether an event with this sequence number applies. */
  sequence(instance: string, seq: number): SequenceVerdict {
    const state = this.touch(instance);
    const highest = state.highestSeq;
    if (highest !== undefined && seq <= highest) return { apply: false, lost: 0 };
    state.highestSeq = seq;
    return { apply: true, lost: highest === undefined ? 0 : seq - highest - 1 };
  }

  /** Records a sighting without a sequence number (a heartbeat or an unsequenced line). */
  seen(instance: string): void {
    this.touch(instance);
  }

  /**
   * Applies a heartbeat: its `ackedSeq` becomes the sequence baseline of an instance seen for
   * the first time (a restarted sidecar then counts the events the plugin lost since as a gap),
   * and its cumulative drop counters turn into increments. A total smaller than the last one
   * means the counters restarted, so the whole total is new.
   */
  heartbeat(instance: string, heartbeat: Heartbeat): DropDelta[] {
    const state = this.touch(instance);
    state.lastHeartbeatAt = state.lastSeenAt;
    const { intervalSeconds, ackedSeq, dropped: reports } = heartbeat;
    if (intervalSeconds !== undefined && intervalSeconds > 0) state.intervalSeconds = intervalSeconds;
    if (ackedSeq !== undefined) state.highestSeq = Math.max(state.highestSeq ?? 0, ackedSeq);
    const deltas: DropDelta[] = [];
    for (const { hook, reason, total } of reports) {
      const key = `${hook}\u0000${reason}`;
      const last = state.dropTotals.get(key) ?? 0;
      const delta = total >= last ? total - last : total;
      state.dropTotals.set(key, total);
      if (delta > 0) deltas.push({ hook, reason, delta });
    }
    return deltas;
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

  /** Forgets instances idle for longer than the TTL. */
  sweep(): void {
    const idleBefore = this.options.clock() - this.options.ttlSeconds;
    // Order is only approximate within a second, so every entry is checked.
    for (const [instance, state] of this.states) {
      if (state.lastSeenAt <= idleBefore) this.states.delete(instance);
    }
  }

  private touch(instance: string): InstanceState {
    const now = this.options.clock();
    let state = this.states.get(instance);
    if (state === undefined) {
      if (this.states.size >= this.options.maxInstances) this.evictLeastRecent();
      state = {
        lastSeenAt: now,
        lastHeartbeatAt: undefined,
        intervalSeconds: DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
        highestSeq: undefined,
        dropTotals: new Map(),
      };
      this.states.set(instance, state);
      return state;
    }
    if (now - state.lastSeenAt >= REORDER_AFTER_SECONDS) {
      this.states.delete(instance);
      this.states.set(instance, state);
    }
    state.lastSeenAt = now;
    return state;
  }

  private evictLeastRecent(): void {
    const oldest = this.states.keys().next();
    if (oldest.done === true) return;
    this.states.delete(oldest.value);
    this.options.onEvict();
  }
}
