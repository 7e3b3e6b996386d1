/**
 * State kept per bridge-plugin instance: sequence tracking (lost, late, duplicate events and
 * epochs), heartbeat drop counters (turned into deltas) and liveness.
 *
 * The plugin stamps each event with a random per-process `instance` and a `seq` that grows by
 * one per event it queued, and sends batches oldest first. For each instance the sidecar keeps
 * the highest sequence number applied and the gaps below it that are still open:
 *
 * - above the highest, within the window: applied; the numbers skipped open a gap;
 * - inside an open gap: applied once and counted as late (it is not lost after all);
 * - at or below the highest otherwise: a retried duplicate, not applied again;
 * - more than the window away, up or down: no plausible sender skips or rewinds that far, so a
 *   new epoch starts there (counted as a reset). One bad line can then cost a reset, never
 *   9e15 lost events, and never the instance's later events.
 *
 * An open gap turns into lost events when the instance's next heartbeat arrives (the plugin
 * sends in order, so whatever was sent before the heartbeat has arrived), when it is older than
 * the reorder time, when it falls a whole window behind, or when the instance is forgotten.
 * Open gaps per instance are bounded (the oldest settles first).
 *
 * Heartbeat drop reports are keyed by hook and reason; both are folded into closed sets (known
 * hooks and reasons, else `other`), so the stored keys per instance are bounded by those sets.
 * Instances idle for longer than the TTL are forgotten; the table is bounded (least recently seen
 * evicted).
 */
import type { Clock } from '../clock.js';
import { VALUES } from '../metrics/catalogue.js';

/** Re-ordering the table on every event is wasted work: once a second per instance is plenty. */
const REORDER_AFTER_SECONDS = 1;

/** A heartbeat is "live" while the next two may still be late. */
const LIVE_HEARTBEAT_INTERVALS = 3;
const DEFAULT_HEARTBEAT_INTERVAL_SECONDS = 5;

/** Open gaps kept per instance; past this the oldest is settled as lost. */
export const MAX_OPEN_GAPS = 64;

/** The hooks and reasons the bridge plugin reports drops for; anything else folds into `other`. */
const DROP_HOOKS: ReadonlySet<string> = new Set(VALUES.plugin_hook);
const KNOWN_DROP_REASONS: ReadonlySet<string> = new Set(VALUES.plugin_drop_reason);
const OTHER = 'other';

/** Sequence numbers [from, to] skipped when a later one was applied, not yet settled. */
interface Gap {
  from: number;
  to: number;
  readonly openedAt: number;
}

interface InstanceState {
  lastSeenAt: number;
  lastHeartbeatAt: number | undefined;
  intervalSeconds: number;
  highestSeq: number | undefined;
  /** Ascending, disjoint, all below highestSeq. */
  gaps: Gap[];
  readonly dropTotals: Map<string, number>;
}

/** What to do with an event of a given sequence number. */
export type SequenceVerdict = 'apply' | 'late' | 'duplicate' | 'reset';

export interface DropDelta {
  readonly hook: string;
  readonly reason: string;
  readonly delta: number;
}

export interface Heartbeat {
  readonly intervalSeconds?: number | undefined;
  readonly ackedSeq?: number | undefined;
  readonly dropped: readonly { hook: string; reason: string; total: number }[];
}

export interface InstancesOptions {
  readonly clock: Clock;
  readonly ttlSeconds: number;
  readonly maxInstances: number;
  /** Largest plausible jump of a sequence number (default 100,000). */
  readonly windowSize?: number;
  /** How long a gap waits for late events before it is lost (default 30 s). */
  readonly reorderSeconds?: number;
  /** Called when a full table forgets its least recently seen instance. */
  readonly onEvict: () => void;
  /** Events settled as lost. */
  readonly onLost?: (events: number) => void;
  /** A sequence number (or acked_seq) that started a new epoch. */
  readonly onReset?: () => void;
  /** A heartbeat drop key folded into `other`. */
  readonly onFolded?: (key: 'hook' | 'reason') => void;
}

export const DEFAULT_SEQUENCE_WINDOW = 100_000;
export const DEFAULT_REORDER_SECONDS = 30;

export class PluginInstances {
  // Re-inserted when seen again (at most once a second), so iteration runs from least to most
  // recently seen, give or take a second.
  private readonly states = new Map<string, InstanceState>();

  constructor(private readonly options: InstancesOptions) {}

  get size(): number {
    return this.states.size;
  }

  /** Records a sighting and answers what to do with an event carrying this sequence number. */
  sequence(instance: string, seq: number): SequenceVerdict {
    const state = this.touch(instance);
    const highest = state.highestSeq;
    if (highest === undefined) {
      state.highestSeq = seq;
      return 'apply';
    }
    if (Math.abs(seq - highest) > this.window) {
      this.startEpoch(state, seq);
      return 'reset';
    }
    if (seq > highest) {
      if (seq > highest + 1) this.openGap(state, highest + 1, seq - 1);
      state.highestSeq = seq;
      this.settleBehind(state, seq - this.window);
      return 'apply';
    }
    return this.fillGap(state, seq) ? 'late' : 'duplicate';
  }

  /** Records a sighting without a sequence number (a heartbeat or an unsequenced line). */
  seen(instance: string): void {
    this.touch(instance);
  }

  /**
   * Applies a heartbeat: open gaps settle as lost (everything sent before it has arrived); its
   * `ackedSeq` becomes the sequence baseline of an instance seen for the first time (a
   * restarted sidecar then counts the events the plugin lost since as a gap) and moves a known
   * one forward within the window; and its cumulative drop counters turn into increments. A
   * total smaller than the last one means the counters restarted, so the whole total is new.
   */
  heartbeat(instance: string, heartbeat: Heartbeat): DropDelta[] {
    const state = this.touch(instance);
    state.lastHeartbeatAt = state.lastSeenAt;
    const { intervalSeconds, ackedSeq } = heartbeat;
    if (intervalSeconds !== undefined && intervalSeconds > 0) state.intervalSeconds = intervalSeconds;
    this.settleAll(state);
    if (ackedSeq !== undefined) this.acknowledge(state, ackedSeq);
    const deltas: DropDelta[] = [];
    for (const [key, total] of this.foldDrops(heartbeat.dropped)) {
      const last = state.dropTotals.get(key) ?? 0;
      const delta = total >= last ? total - last : total;
      state.dropTotals.set(key, total);
      const [hook = OTHER, reason = OTHER] = key.split('\u0000');
      if (delta > 0) deltas.push({ hook, reason, delta });
    }
    return deltas;
  }

  /** Drop keys stored for an instance (bounded by the known hooks and reasons). */
  storedDropKeys(instance: string): number {
    return this.states.get(instance)?.dropTotals.size ?? 0;
  }

  /** Settles gaps that waited longer than the reorder time (run on sweeps and scrapes). */
  settleExpired(): void {
    const openedBefore = this.options.clock() - this.reorderSeconds;
    for (const state of this.states.values()) {
      while (state.gaps.length > 0 && (state.gaps[0]?.openedAt ?? Infinity) <= openedBefore) this.settleOldest(state);
    }
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
      if (state.lastSeenAt <= idleBefore) {
        this.settleAll(state);
        this.states.delete(instance);
      }
    }
    this.settleExpired();
  }

  private get window(): number {
    return this.options.windowSize ?? DEFAULT_SEQUENCE_WINDOW;
  }

  private get reorderSeconds(): number {
    return this.options.reorderSeconds ?? DEFAULT_REORDER_SECONDS;
  }

  private startEpoch(state: InstanceState, seq: number): void {
    this.settleAll(state);
    state.highestSeq = seq;
    this.options.onReset?.();
  }

  /** acked_seq is checked like a sequence number: a known instance moves forward within the window only. */
  private acknowledge(state: InstanceState, ackedSeq: number): void {
    const highest = state.highestSeq;
    if (highest === undefined) state.highestSeq = ackedSeq;
    else if (ackedSeq > highest + this.window) this.startEpoch(state, ackedSeq);
    else if (ackedSeq > highest) state.highestSeq = ackedSeq;
  }

  private openGap(state: InstanceState, from: number, to: number): void {
    state.gaps.push({ from, to, openedAt: this.options.clock() });
    while (state.gaps.length > MAX_OPEN_GAPS) this.settleOldest(state);
  }

  /** Removes seq from the open gap holding it; false when no open gap does. */
  private fillGap(state: InstanceState, seq: number): boolean {
    const index = state.gaps.findIndex((gap) => gap.from <= seq && seq <= gap.to);
    const gap = state.gaps[index];
    if (gap === undefined) return false;
    if (gap.from === gap.to) state.gaps.splice(index, 1);
    else if (seq === gap.from) gap.from += 1;
    else if (seq === gap.to) gap.to -= 1;
    else {
      state.gaps.splice(index + 1, 0, { from: seq + 1, to: gap.to, openedAt: gap.openedAt });
      gap.to = seq - 1;
      if (state.gaps.length > MAX_OPEN_GAPS) this.settleOldest(state);
    }
    return true;
  }

  private settleBehind(state: InstanceState, floor: number): void {
    while (state.gaps.length > 0 && (state.gaps[0]?.to ?? Infinity) < floor) this.settleOldest(state);
  }

  private settleOldest(state: InstanceState): void {
    const gap = state.gaps.shift();
    if (gap !== undefined) this.options.onLost?.(gap.to - gap.from + 1);
  }

  private settleAll(state: InstanceState): void {
    while (state.gaps.length > 0) this.settleOldest(state);
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
      if (this.states.size >= this.options.maxInstances) this.evictLeastRecent();
      state = {
        lastSeenAt: now,
        lastHeartbeatAt: undefined,
        intervalSeconds: DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
        highestSeq: undefined,
        gaps: [],
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
    const oldest = this.states.entries().next();
    if (oldest.done === true) return;
    this.settleAll(oldest.value[1]);
    this.states.delete(oldest.value[0]);
    this.options.onEvict();
  }
}
