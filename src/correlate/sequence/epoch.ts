/**
 * One numbering run of a plugin instance: which of its sequence numbers were applied, settled
 * lost, acknowledged by an earlier sidecar, or are still open.
 *
 * [floor, highest] splits into: applied; lost (settled gaps); acknowledged (a heartbeat's
 * acked_seq says another sidecar took them, or a tombstone says this one did and forgot which);
 * open gaps (in [claimedFrom, highest], skipped when a higher number arrived, waiting for late
 * events); and unclaimed ([floor, claimedFrom): below the first number seen, which a sidecar
 * restarted mid-stream cannot judge). Below floor is beyond memory.
 *
 * Memory is bounded: each interval set holds at most MAX_INTERVALS intervals and at most
 * MAX_OPEN_GAPS gaps stay open. Past a bound the floor moves up past the lowest interval (what
 * falls below is beyond memory: never applied twice, counted when it arrives), and the caller
 * is told (a state eviction).
 */
import { IntervalSet } from './intervals.js';

/** Open gaps kept per epoch; past this the oldest settles as lost. */
export const MAX_OPEN_GAPS = 64;
/** Intervals kept per set (applied, lost, acknowledged) per epoch; past this the floor moves up. */
export const MAX_INTERVALS = 128;

/** What happened to an event that arrived in an epoch. */
export type Arrival = 'apply' | 'late' | 'duplicate' | 'after_lost' | 'beyond_memory';

/** What an epoch reports while it settles and trims. */
export interface EpochContext {
  readonly now: number;
  readonly window: number;
  /** Events settled as lost. */
  lost(events: number): void;
  /** An interval set hit its bound: the floor moved up. */
  trimmed(): void;
}

/** Sequence numbers [from, to] skipped when a later one was applied, not yet settled. */
interface Gap {
  from: number;
  to: number;
  readonly openedAt: number;
}

export class Epoch {
  private readonly applied = new IntervalSet();
  private readonly lost = new IntervalSet();
  private readonly acknowledged = new IntervalSet();
  /** Ascending by number, and so by opening time; disjoint; inside [claimedFrom, highest]. */
  private readonly gaps: Gap[] = [];

  private constructor(
    private floor: number,
    private claimedFrom: number,
    private highestSeq: number,
  ) {}

  /**
   * First sight by an event: numbers below it that arrive later are applied (never seen, so
   * never duplicates), and not counted lost: a predecessor may have taken them.
   */
  static firstSeenAt(seq: number, window: number, lowestFloor: number): Epoch {
    const floor = Math.max(Math.min(1, seq), seq - window, lowestFloor);
    return new Epoch(floor, seq, seq - 1);
  }

  /** First sight by a heartbeat: everything up to acked_seq was taken by someone. */
  static acknowledgedUpTo(ackedSeq: number): Epoch {
    return new Epoch(ackedSeq + 1, ackedSeq + 1, ackedSeq);
  }

  /** An epoch brought back from a tombstone: [floor, highest] is beyond memory. */
  static restored(floor: number, highest: number): Epoch {
    const epoch = new Epoch(floor, highest + 1, highest);
    epoch.acknowledged.addRange(floor, highest);
    return epoch;
  }

  get highest(): number {
    return this.highestSeq;
  }

  get lowest(): number {
    return this.floor;
  }

  /** How far seq is outside [floor, highest]; 0 inside. */
  distance(seq: number): number {
    if (seq < this.floor) return this.floor - seq;
    return seq > this.highestSeq ? seq - this.highestSeq : 0;
  }

  contains(seq: number): boolean {
    return seq >= this.floor && seq <= this.highestSeq;
  }

  /** Intervals and gaps held: what the memory bound counts. */
  get intervals(): number {
    return this.applied.intervals + this.lost.intervals + this.acknowledged.intervals + this.gaps.length;
  }

  get hasOpenGaps(): boolean {
    return this.gaps.length > 0;
  }

  arrive(seq: number, context: EpochContext): Arrival {
    if (seq < this.floor) return 'beyond_memory';
    if (seq > this.highestSeq) {
      if (seq > this.highestSeq + 1) this.openGap(this.highestSeq + 1, seq - 1, context);
      this.highestSeq = seq;
      this.record(seq, context);
      this.settleBelow(seq - context.window, context);
      return 'apply';
    }
    if (this.applied.has(seq)) return 'duplicate';
    // Applying it would make lost + applied count one event twice.
    if (this.lost.has(seq)) return 'after_lost';
    if (this.acknowledged.has(seq)) return 'beyond_memory';
    const late = seq >= this.claimedFrom;
    if (late) this.fillGap(seq);
    this.record(seq, context);
    return late ? 'late' : 'apply';
  }

  /**
   * Applies seq when it is the number after the highest and no gap is open (in-order delivery,
   * almost every event): what `arrive` would do then, without the checks a number out of order
   * needs. False, with nothing done, for any other number.
   */
  arriveNext(seq: number, context: EpochContext): boolean {
    if (seq !== this.highestSeq + 1 || this.gaps.length > 0) return false;
    this.highestSeq = seq;
    this.record(seq, context);
    return true;
  }

  /**
   * A heartbeat's acked_seq: unclaimed numbers at or below it were taken by a predecessor;
   * unclaimed numbers above it were sent before the heartbeat and never arrived (lost); numbers
   * above the highest up to it were acknowledged by another sidecar. Open gaps are settled by
   * the caller (every epoch's, not only this one's).
   */
  acknowledge(ackedSeq: number, context: EpochContext): void {
    if (this.claimedFrom > this.floor) {
      const missing: [number, number][] = [];
      this.applied.eachMissing(this.floor, this.claimedFrom - 1, (from, to) => missing.push([from, to]));
      this.claimedFrom = this.floor;
      for (const [from, to] of missing) {
        this.acknowledged.addRange(from, Math.min(to, ackedSeq));
        const lostFrom = Math.max(from, ackedSeq + 1);
        if (lostFrom <= to) {
          // Trimmed once all are in: a trim now would move the floor above ranges still to add.
          this.lost.addRange(lostFrom, to);
          context.lost(to - lostFrom + 1);
        }
      }
    }
    if (ackedSeq > this.highestSeq) {
      this.acknowledged.addRange(this.highestSeq + 1, ackedSeq);
      this.highestSeq = ackedSeq;
    }
    this.trim(this.acknowledged, context);
    this.trim(this.lost, context);
  }

  settleAll(context: EpochContext): void {
    while (this.gaps.length > 0) this.settleOldest(context);
  }

  /** Settles gaps opened at or before `openedBefore`. */
  settleExpired(openedBefore: number, context: EpochContext): void {
    while ((this.gaps[0]?.openedAt ?? Infinity) <= openedBefore) this.settleOldest(context);
  }

  private record(seq: number, context: EpochContext): void {
    this.applied.add(seq);
    this.trim(this.applied, context);
  }

  private openGap(from: number, to: number, context: EpochContext): void {
    this.gaps.push({ from, to, openedAt: context.now });
    while (this.gaps.length > MAX_OPEN_GAPS) this.settleOldest(context);
  }

  /** Removes seq from the open gap holding it. */
  private fillGap(seq: number): void {
    const index = this.gaps.findIndex((gap) => gap.from <= seq && seq <= gap.to);
    const gap = this.gaps[index];
    if (gap === undefined) return;
    if (gap.from === gap.to) this.gaps.splice(index, 1);
    else if (seq === gap.from) gap.from += 1;
    else if (seq === gap.to) gap.to -= 1;
    else {
      this.gaps.splice(index + 1, 0, { from: seq + 1, to: gap.to, openedAt: gap.openedAt });
      gap.to = seq - 1;
    }
  }

  /** Numbers of open gaps below `limit` (a window behind the highest) settle as lost. */
  private settleBelow(limit: number, context: EpochContext): void {
    for (let gap = this.gaps[0]; gap !== undefined && gap.from < limit; gap = this.gaps[0]) {
      if (gap.to < limit) this.settleOldest(context);
      else {
        const from = gap.from;
        gap.from = limit;
        this.settleRange(from, limit - 1, context);
      }
    }
  }

  private settleOldest(context: EpochContext): void {
    const gap = this.gaps.shift();
    if (gap !== undefined) this.settleRange(gap.from, gap.to, context);
  }

  private settleRange(from: number, to: number, context: EpochContext): void {
    this.lost.addRange(from, to);
    context.lost(to - from + 1);
    this.trim(this.lost, context);
  }

  /** Keeps a set within MAX_INTERVALS by moving the floor past its lowest interval. */
  private trim(set: IntervalSet, context: EpochContext): void {
    while (set.intervals > MAX_INTERVALS) {
      this.raiseFloor((set.lowestTo ?? this.floor) + 1, context);
      context.trimmed();
    }
  }

  /** Everything below `floor` becomes beyond memory; open numbers there settle as lost. */
  private raiseFloor(floor: number, context: EpochContext): void {
    for (let gap = this.gaps[0]; gap !== undefined && gap.from < floor; gap = this.gaps[0]) {
      const to = Math.min(gap.to, floor - 1);
      context.lost(to - gap.from + 1);
      if (gap.to < floor) this.gaps.shift();
      else gap.from = floor;
    }
    this.floor = floor;
    this.claimedFrom = Math.max(this.claimedFrom, floor);
    this.applied.dropBelow(floor);
    this.lost.dropBelow(floor);
    this.acknowledged.dropBelow(floor);
  }
}
