/**
 * The accounting of one plugin instance: its epochs (numbering runs), forgotten ranges, boot
 * and heartbeat totals. The rules are stated in docs/metrics.md ("Sequence accounting"); in
 * short: an event is matched to the epoch that holds its number, else the nearest one within
 * the window, else it starts a new epoch; a heartbeat of the current boot settles every open
 * gap; a new boot is a restart; a stale heartbeat changes nothing.
 *
 * A heartbeat's cumulative host totals (callbacks dropped, values refused: whatever keys the
 * caller gives) follow one rule: within a boot a total only rises, and each rise is the increment;
 * a lower total marks the heartbeat as stale (delayed or replayed); a new boot starts every total
 * from 0, so its whole first report counts.
 */
import { Epoch, type Arrival, type EpochContext } from './epoch.js';

/** Epochs kept per instance (the current one and the last few it jumped from). */
export const MAX_EPOCHS = 4;
/** Ranges of epochs pushed out past MAX_EPOCHS, kept so their numbers stay beyond memory. */
export const MAX_FORGOTTEN_RANGES = 4;
/** Earlier boots remembered per instance, so their delayed heartbeats are known as stale. */
export const MAX_PAST_BOOTS = 4;

/** What to do with an event of a given sequence number. */
export type SequenceVerdict = Arrival | 'reset';
export type ResetReason = 'jump' | 'restart';
/** Why a heartbeat is stale: an earlier boot, a lower acked_seq, or a host total (dropped or refused) lower than stored. */
export type StaleReason = 'boot' | 'acked_seq' | 'dropped';

export interface TrackerContext extends EpochContext {
  reset(reason: ResetReason): void;
  /** A forgotten range was dropped (past MAX_FORGOTTEN_RANGES). */
  forgot(): void;
}

export interface HeartbeatReport {
  readonly boot?: string | undefined;
  readonly ackedSeq?: number | undefined;
  /** Cumulative host totals by key (bounded by the caller: known keys, else folded). */
  readonly totals: ReadonlyMap<string, number>;
}

/** A heartbeat's verdict: stale (it changed nothing), or applied with the rises of its totals. */
export type HeartbeatOutcome = { readonly stale: StaleReason } | { readonly stale?: undefined; readonly increments: [string, number][] };

/** What an evicted instance leaves behind: enough that nothing it applied is applied again. */
export interface Tombstone {
  readonly boot: string | undefined;
  readonly pastBoots: readonly string[];
  readonly maxAcked: number | undefined;
  readonly appliedAny: boolean;
  /** [floor, highest] of each epoch, least recently current first. */
  readonly ranges: readonly (readonly [number, number])[];
  readonly forgotten: readonly (readonly [number, number])[];
  readonly totals: ReadonlyMap<string, number>;
}

/** Bytes charged per stored item (interval, range, key, tracker) on top of the id and boot strings. */
export const BYTES = { tracker: 256, epoch: 96, interval: 24, totalKey: 48 } as const;

export class InstanceTracker {
  /** Least recently current first; the last is current. */
  private epochs: Epoch[] = [];
  private forgotten: (readonly [number, number])[] = [];
  private boot: string | undefined;
  private pastBoots: string[] = [];
  private maxAcked: number | undefined;
  private appliedAny = false;
  private totals = new Map<string, number>();

  static restore(tombstone: Tombstone): InstanceTracker {
    const tracker = new InstanceTracker();
    tracker.boot = tombstone.boot;
    tracker.pastBoots = [...tombstone.pastBoots];
    tracker.maxAcked = tombstone.maxAcked;
    tracker.appliedAny = tombstone.appliedAny;
    tracker.epochs = tombstone.ranges.map(([floor, highest]) => Epoch.restored(floor, highest));
    tracker.forgotten = [...tombstone.forgotten];
    tracker.totals = new Map(tombstone.totals);
    return tracker;
  }

  /** Host total keys stored (bounded by the caller's keys). */
  get storedTotalKeys(): number {
    return this.totals.size;
  }

  /** Bytes this instance's state holds (its id aside). */
  get bytes(): number {
    if (this.epochs.length === 1 && this.pastBoots.length === 0 && this.forgotten.length === 0) {
      // The common case, without the loops below.
      return BYTES.tracker + (this.boot?.length ?? 0) + this.totals.size * BYTES.totalKey + BYTES.epoch + (this.epochs[0]?.intervals ?? 0) * BYTES.interval;
    }
    let bytes = BYTES.tracker + (this.boot?.length ?? 0) + this.totals.size * BYTES.totalKey + this.forgotten.length * BYTES.interval;
    for (const boot of this.pastBoots) bytes += boot.length;
    for (const epoch of this.epochs) bytes += BYTES.epoch + epoch.intervals * BYTES.interval;
    return bytes;
  }

  arrive(seq: number, context: TrackerContext): SequenceVerdict {
    if (this.arriveInOrder(seq, context)) return 'apply';
    if (this.inForgotten(seq)) return 'beyond_memory';
    const epoch = this.matching(seq, context.window);
    if (epoch === undefined) {
      const first = this.epochs.length === 0;
      const started = Epoch.firstSeenAt(seq, context.window, this.lowestFloorFor(seq));
      this.startEpoch(started, first ? undefined : 'jump', context);
      started.arrive(seq, context);
      this.appliedAny = true;
      return first ? 'apply' : 'reset';
    }
    const verdict = epoch.arrive(seq, context);
    if (verdict === 'apply' || verdict === 'late') {
      this.appliedAny = true;
      this.makeCurrent(epoch, context);
    }
    return verdict;
  }

  /**
   * Applies a heartbeat and returns the per-key increments of its host totals, or why it is
   * stale (an earlier boot, a lower acked_seq, or a total lower than stored): then it changed nothing.
   */
  heartbeat(report: HeartbeatReport, context: TrackerContext): HeartbeatOutcome {
    const { boot, ackedSeq } = report;
    if (boot !== undefined && boot !== this.boot) {
      if (this.pastBoots.includes(boot)) return { stale: 'boot' };
      if (this.boot !== undefined) this.restart(context);
      this.boot = boot;
    } else if (boot === undefined && ackedSeq === 0 && this.appliedAny) {
      // A sender without boots that numbers from 1 again (documented bound: no line of its old
      // numbering may arrive after this).
      this.restart(context);
    }
    const stale = this.staleness(report);
    if (stale !== undefined) return { stale };
    const increments = this.raiseTotals(report.totals);
    if (ackedSeq !== undefined) {
      this.maxAcked = ackedSeq;
      this.acknowledge(ackedSeq, context);
    }
    // The plugin sends in order: whatever it sent before this heartbeat has arrived.
    this.settleAll(context);
    return { increments };
  }

  settleAll(context: EpochContext): void {
    for (const epoch of this.epochs) epoch.settleAll(context);
  }

  settleExpired(openedBefore: number, context: EpochContext): void {
    for (const epoch of this.epochs) epoch.settleExpired(openedBefore, context);
  }

  /**
   * What to keep once evicted (open gaps settled first); undefined when nothing was applied and
   * no boot is known. A known boot is kept even without events: forgetting it would make the
   * instance's next events and its next boot ambiguous (the same numbering, or a new one?).
   */
  tombstone(context: EpochContext): Tombstone | undefined {
    this.settleAll(context);
    if (!this.appliedAny && this.boot === undefined) return undefined;
    return {
      boot: this.boot,
      pastBoots: this.pastBoots,
      maxAcked: this.maxAcked,
      appliedAny: this.appliedAny,
      ranges: this.epochs.map((epoch) => [epoch.lowest, epoch.highest] as const),
      forgotten: this.forgotten,
      totals: this.totals,
    };
  }

  /** Why a heartbeat of the current boot is older than one already applied, if it is. */
  private staleness({ ackedSeq, totals }: HeartbeatReport): StaleReason | undefined {
    if (ackedSeq !== undefined && this.maxAcked !== undefined && ackedSeq < this.maxAcked) return 'acked_seq';
    for (const [key, total] of totals) if (total < (this.totals.get(key) ?? 0)) return 'dropped';
    return undefined;
  }

  /** Stores totals none of which is lower than stored; returns each rise. */
  private raiseTotals(totals: ReadonlyMap<string, number>): [string, number][] {
    const increments: [string, number][] = [];
    for (const [key, total] of totals) {
      const stored = this.totals.get(key) ?? 0;
      if (total === stored) continue;
      increments.push([key, total - stored]);
      this.totals.set(key, total);
    }
    return increments;
  }

  private acknowledge(ackedSeq: number, context: TrackerContext): void {
    const next = ackedSeq + 1;
    if (this.inForgotten(next)) return;
    const epoch = this.matching(next, context.window);
    if (epoch !== undefined) epoch.acknowledge(ackedSeq, context);
    else this.startEpoch(Epoch.acknowledgedUpTo(ackedSeq), this.epochs.length === 0 ? undefined : 'jump', context);
  }

  /**
   * The common case, as the general path would judge it: one epoch, nothing forgotten, and seq
   * the next number of that epoch (one away from it, so within any window).
   */
  private arriveInOrder(seq: number, context: TrackerContext): boolean {
    const only = this.epochs.length === 1 && this.forgotten.length === 0 && context.window >= 1 ? this.epochs[0] : undefined;
    if (only === undefined || !only.arriveNext(seq, context)) return false;
    this.appliedAny = true;
    return true;
  }

  /** The epoch holding seq, else the nearest within the window (the most recent on a tie). */
  private matching(seq: number, window: number): Epoch | undefined {
    let nearest: Epoch | undefined;
    let best = Infinity;
    for (let index = this.epochs.length - 1; index >= 0; index -= 1) {
      const epoch = this.epochs[index];
      if (epoch === undefined) continue;
      const distance = epoch.distance(seq);
      if (distance === 0) return epoch;
      if (distance < best) {
        best = distance;
        nearest = epoch;
      }
    }
    return best <= window ? nearest : undefined;
  }

  /** A new epoch's floor stays above every range below it, so ranges never overlap. */
  private lowestFloorFor(seq: number): number {
    let lowest = 0;
    for (const epoch of this.epochs) if (epoch.highest < seq) lowest = Math.max(lowest, epoch.highest + 1);
    for (const [, to] of this.forgotten) if (to < seq) lowest = Math.max(lowest, to + 1);
    return lowest;
  }

  private inForgotten(seq: number): boolean {
    for (const [from, to] of this.forgotten) if (from <= seq && seq <= to) return true;
    return false;
  }

  private startEpoch(epoch: Epoch, reason: ResetReason | undefined, context: TrackerContext): void {
    // A superseded epoch's gaps settle now: its sender moved on.
    this.settleAll(context);
    this.epochs.push(epoch);
    if (reason !== undefined) context.reset(reason);
    while (this.epochs.length > MAX_EPOCHS) {
      const oldest = this.epochs.shift();
      if (oldest === undefined || oldest.highest < oldest.lowest) continue;
      this.forgotten.push([oldest.lowest, oldest.highest]);
      if (this.forgotten.length > MAX_FORGOTTEN_RANGES) {
        this.forgotten.shift();
        context.forgot();
      }
    }
  }

  private makeCurrent(epoch: Epoch, context: EpochContext): void {
    const index = this.epochs.indexOf(epoch);
    if (index === this.epochs.length - 1) return;
    for (const other of this.epochs) if (other !== epoch) other.settleAll(context);
    this.epochs.splice(index, 1);
    this.epochs.push(epoch);
  }

  /** A new numbering under the same id: everything settles and clears, totals too. */
  private restart(context: TrackerContext): void {
    this.settleAll(context);
    if (this.boot !== undefined) {
      this.pastBoots.push(this.boot);
      if (this.pastBoots.length > MAX_PAST_BOOTS) this.pastBoots.shift();
    }
    this.epochs = [];
    this.forgotten = [];
    this.maxAcked = undefined;
    this.appliedAny = false;
    this.totals = new Map();
    context.reset('restart');
  }
}
