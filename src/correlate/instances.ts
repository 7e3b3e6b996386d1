/**
 * The one table of bridge-plugin instances: per instance its sequence accounting
 * (sequence/tracker.ts; the rules are in docs/metrics.md, "Sequence accounting"), what its last
 * heartbeat said about its host (Hermes version, plugin version, profile), its cumulative host
 * totals (callbacks dropped, values refused) turned into deltas by one per-boot rule, and its
 * liveness. hermes_plugin_instances and hermes_plugin_info are both read from `liveness()`, so
 * they always agree; a heartbeat judged stale changes nothing here.
 *
 * The table is bounded in entries and bytes (least recently seen evicted, counted), and idle
 * instances are forgotten after the TTL. A forgotten or evicted instance that applied events
 * leaves a tombstone (its boot and each epoch's [floor, highest]) in a bounded tombstone table,
 * so a batch it retries after coming back is not applied twice: its old numbers are beyond
 * memory (counted), its new ones count as usual.
 *
 * Host totals are keyed by hook and reason, or by field, folded into closed sets (hostTotals.ts),
 * so the stored keys per instance are bounded by those sets.
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
import { STATE_VALUES } from './stateTableNames.js';
import { foldTotals, hostDelta, type HostDelta } from './hostTotals.js';
import type { DropReport, RefusedReport } from '../contract/eventData.js';

export { MAX_OPEN_GAPS, MAX_INTERVALS } from './sequence/epoch.js';
export { MAX_EPOCHS, MAX_FORGOTTEN_RANGES, MAX_PAST_BOOTS, type SequenceVerdict } from './sequence/tracker.js';
export type { DropDelta, HostDelta, RefusedDelta } from './hostTotals.js';

/** Re-ordering the table on every event is wasted work: once a second per instance is plenty. */
const REORDER_AFTER_SECONDS = 1;

/** A heartbeat is "live" while the next two may still be late. */
const LIVE_HEARTBEAT_INTERVALS = 3;
const DEFAULT_HEARTBEAT_INTERVAL_SECONDS = 5;

/** Bytes charged per table entry beyond its state: map slots, timestamps, the entry object. */
const ENTRY_BYTES = 128;

/** What a heartbeat says about its instance's host: the labels of hermes_plugin_info (guarded by the caller). */
export interface HostLabels {
  readonly hermes_version: string;
  readonly plugin_version: string;
  readonly profile: string;
}

interface InstanceState {
  lastSeenAt: number;
  lastHeartbeatAt: number | undefined;
  intervalSeconds: number;
  /** As of the last heartbeat that was not stale; undefined before one. */
  host: HostLabels | undefined;
  readonly tracker: InstanceTracker;
  /** Bytes charged to the table for this entry (id included), as of its last change. */
  bytes: number;
}

interface StoredTombstone {
  readonly tombstone: Tombstone;
  readonly bytes: number;
}

export interface Heartbeat {
  readonly intervalSeconds?: number | undefined;
  readonly ackedSeq?: number | undefined;
  /** The sender's numbering run: a new one under the same instance is a restart. */
  readonly boot?: string | undefined;
  readonly dropped: readonly DropReport[];
  readonly refused?: readonly RefusedReport[] | undefined;
  readonly host?: HostLabels | undefined;
}

/** Live instances with one host description (undefined: no heartbeat yet). */
export interface HostCount {
  readonly host: HostLabels | undefined;
  readonly live: number;
}

/** The one liveness pass: instances live and stale, and the live ones by host. */
export interface Liveness {
  readonly live: number;
  readonly stale: number;
  readonly hosts: readonly HostCount[];
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
  /** A heartbeat ignored as stale (an earlier boot, a lower acked_seq or a lower host total). */
  readonly onStale?: (reason: StaleReason) => void;
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
    const { onLost, onReset, onEvict } = options;
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
   * boot into account, keeps its host description and interval, and returns the rises of its
   * cumulative host totals. A stale heartbeat changes nothing (counted) and returns none.
   */
  heartbeat(instance: string, heartbeat: Heartbeat): HostDelta[] {
    // Any heartbeat, stale or not, is a sighting: it keeps the entry from the TTL, as an event does.
    const state = this.touch(instance);
    const { intervalSeconds, ackedSeq, boot } = heartbeat;
    const totals = foldTotals(heartbeat.dropped, heartbeat.refused ?? []);
    const outcome = state.tracker.heartbeat({ boot, ackedSeq, totals }, this.context);
    if (outcome.stale === undefined) {
      state.lastHeartbeatAt = state.lastSeenAt;
      // 0 (allowed by the contract) or absent keeps the last interval: 0 would make it stale at once.
      if (intervalSeconds !== undefined && intervalSeconds > 0) state.intervalSeconds = intervalSeconds;
      if (heartbeat.host !== undefined) state.host = heartbeat.host;
    } else {
      this.options.onStale?.(outcome.stale);
    }
    this.account(instance, state);
    return outcome.stale === undefined ? outcome.increments.map(([key, delta]) => hostDelta(key, delta)) : [];
  }

  /** Host total keys stored for an instance (bounded by the known hooks, reasons and fields). */
  storedTotalKeys(instance: string): number {
    return this.states.get(instance)?.tracker.storedTotalKeys ?? 0;
  }

  /** Settles gaps that waited longer than the reorder time (run on sweeps and scrapes). */
  settleExpired(): void {
    const openedBefore = this.options.clock() - this.reorderSeconds;
    for (const state of this.states.values()) state.tracker.settleExpired(openedBefore, this.context);
  }

  /**
   * Instances whose last heartbeat (or, before any, last event) is recent enough, and the rest;
   * the live ones also by host description. The one liveness rule of the sidecar.
   */
  liveness(): Liveness {
    const now = this.options.clock();
    let live = 0;
    const hosts = new Map<string, { readonly host: HostLabels | undefined; live: number }>();
    for (const state of this.states.values()) {
      const lastSign = state.lastHeartbeatAt ?? state.lastSeenAt;
      if (now - lastSign > LIVE_HEARTBEAT_INTERVALS * state.intervalSeconds) continue;
      live += 1;
      const key = hostKey(state.host);
      const count = hosts.get(key);
      if (count === undefined) hosts.set(key, { host: state.host, live: 1 });
      else count.live += 1;
    }
    return { live, stale: this.states.size - live, hosts: [...hosts.values()] };
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
      state = { lastSeenAt: now, lastHeartbeatAt: undefined, intervalSeconds: DEFAULT_HEARTBEAT_INTERVAL_SECONDS, host: undefined, tracker, bytes: 0 };
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
    const bytes = entryBytes(instance) + hostBytes(state.host) + state.tracker.bytes;
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

/** Tells host descriptions apart: guarded label values hold no control characters, so NUL separates them. */
export function hostKey(host: HostLabels | undefined): string {
  return host === undefined ? '' : `${host.hermes_version}\u0000${host.plugin_version}\u0000${host.profile}`;
}

/** A host description's strings; the label guard may share them, so this errs on the safe side. */
function hostBytes(host: HostLabels | undefined): number {
  return host === undefined ? 0 : 2 * (host.hermes_version.length + host.plugin_version.length + host.profile.length);
}

function tombstoneBytes(tombstone: Tombstone): number {
  let bytes = BYTES.tracker + (tombstone.boot?.length ?? 0) + tombstone.totals.size * BYTES.totalKey;
  bytes += (tombstone.ranges.length + tombstone.forgotten.length) * BYTES.interval;
  for (const boot of tombstone.pastBoots) bytes += boot.length;
  return bytes;
}
