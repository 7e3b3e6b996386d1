/**
 * The reference model of plugin sequence accounting (docs/metrics.md, "Sequence accounting"):
 * the same rules as src/correlate/sequence, written the plain way, one Set per kind of number,
 * unbounded (no interval sets, gap lists, trimming, byte accounting or tombstone compaction).
 * test/accounting.properties.test.ts drives it and the real table through the same random
 * schedules and compares every verdict and counter.
 *
 * Within the documented bounds (epochs, intervals, open gaps, tombstones per table) the two must
 * agree exactly; the model has no bounds, so the schedules stay within them.
 */

export type Verdict = 'apply' | 'late' | 'reset' | 'duplicate' | 'after_lost' | 'beyond_memory';

export interface ModelCounters {
  lost: number;
  reset: { jump: number; restart: number };
  stale: { boot: number; acked_seq: number; dropped: number };
  evicted: number;
}

class ModelEpoch {
  readonly applied = new Set<number>();
  readonly lost = new Set<number>();
  readonly acknowledged = new Set<number>();
  /** Open numbers and when they were opened. */
  readonly open = new Map<number, number>();

  constructor(
    public floor: number,
    public claimedFrom: number,
    public highest: number,
  ) {}

  distance(seq: number): number {
    if (seq < this.floor) return this.floor - seq;
    return seq > this.highest ? seq - this.highest : 0;
  }
}

class ModelInstance {
  epochs: ModelEpoch[] = [];
  forgotten: [number, number][] = [];
  boot: string | undefined;
  pastBoots: string[] = [];
  maxAcked: number | undefined;
  appliedAny = false;
  dropTotals = new Map<string, number>();
  constructor(public lastSeenAt: number) {}
}

export class SequenceModel {
  readonly counters: ModelCounters = { lost: 0, reset: { jump: 0, restart: 0 }, stale: { boot: 0, acked_seq: 0, dropped: 0 }, evicted: 0 };
  /** Least recently seen first. */
  private readonly table = new Map<string, ModelInstance>();
  private readonly tombstones = new Map<string, ModelInstance>();

  constructor(
    private readonly settings: { window: number; reorderSeconds: number; ttlSeconds: number; maxInstances: number; maxEpochs: number; maxPastBoots: number },
  ) {}

  /** Whether the table (or a tombstone) still holds this boot of the instance, current or past. */
  remembersBoot(id: string, boot: string): boolean {
    const instance = this.table.get(id) ?? this.tombstones.get(id);
    return instance !== undefined && (instance.boot === boot || instance.pastBoots.includes(boot));
  }

  sequence(id: string, seq: number, now: number): Verdict {
    const instance = this.touch(id, now);
    if (instance.forgotten.some(([from, to]) => from <= seq && seq <= to)) return 'beyond_memory';
    const epoch = this.matching(instance, seq);
    if (epoch === undefined) {
      const first = instance.epochs.length === 0;
      let floor = Math.max(Math.min(1, seq), seq - this.settings.window);
      for (const other of instance.epochs) if (other.highest < seq) floor = Math.max(floor, other.highest + 1);
      for (const [, to] of instance.forgotten) if (to < seq) floor = Math.max(floor, to + 1);
      const started = new ModelEpoch(floor, seq, seq - 1);
      this.startEpoch(instance, started, first ? undefined : 'jump');
      this.arrive(started, seq, now);
      instance.appliedAny = true;
      return first ? 'apply' : 'reset';
    }
    const verdict = this.arrive(epoch, seq, now);
    if (verdict === 'apply' || verdict === 'late') {
      instance.appliedAny = true;
      if (instance.epochs.at(-1) !== epoch) {
        for (const other of instance.epochs) if (other !== epoch) this.settleAll(other);
        instance.epochs = [...instance.epochs.filter((other) => other !== epoch), epoch];
      }
    }
    return verdict;
  }

  /** Returns the drop increments by key. */
  heartbeat(id: string, report: { boot?: string; ackedSeq?: number; totals: ReadonlyMap<string, number> }, now: number): Map<string, number> {
    const instance = this.touch(id, now);
    const { boot, ackedSeq } = report;
    if (boot !== undefined && boot !== instance.boot) {
      if (instance.pastBoots.includes(boot)) {
        this.counters.stale.boot += 1;
        return new Map();
      }
      if (instance.boot !== undefined) this.restart(instance);
      instance.boot = boot;
    } else if (boot === undefined && ackedSeq === 0 && instance.appliedAny) {
      this.restart(instance);
    }
    const deltas = new Map<string, number>();
    let staleTotals = false;
    for (const [key, total] of report.totals) {
      const stored = instance.dropTotals.get(key) ?? 0;
      if (total < stored) staleTotals = true;
      if (total > stored) {
        deltas.set(key, total - stored);
        instance.dropTotals.set(key, total);
      }
    }
    const staleAck = ackedSeq !== undefined && instance.maxAcked !== undefined && ackedSeq < instance.maxAcked;
    if (staleAck) this.counters.stale.acked_seq += 1;
    else if (staleTotals) this.counters.stale.dropped += 1;
    if (staleAck || staleTotals) return deltas;
    if (ackedSeq !== undefined) {
      instance.maxAcked = ackedSeq;
      this.acknowledge(instance, ackedSeq);
    }
    for (const epoch of instance.epochs) this.settleAll(epoch);
    return deltas;
  }

  settleExpired(now: number): void {
    for (const instance of this.table.values()) {
      for (const epoch of instance.epochs) {
        for (const [seq, openedAt] of epoch.open) if (openedAt <= now - this.settings.reorderSeconds) this.settle(epoch, seq);
      }
    }
  }

  sweep(now: number): void {
    for (const [id, instance] of this.table) if (instance.lastSeenAt <= now - this.settings.ttlSeconds) this.forget(id, instance);
    this.settleExpired(now);
  }

  private touch(id: string, now: number): ModelInstance {
    let instance = this.table.get(id);
    if (instance !== undefined) {
      this.table.delete(id);
      this.table.set(id, instance);
      instance.lastSeenAt = now;
      return instance;
    }
    instance = this.tombstones.get(id) ?? new ModelInstance(now);
    this.tombstones.delete(id);
    instance.lastSeenAt = now;
    this.table.set(id, instance);
    while (this.table.size > this.settings.maxInstances) {
      const [oldest, state] = [...this.table].find(([other]) => other !== id) ?? [];
      if (oldest === undefined || state === undefined) break;
      this.forget(oldest, state);
      this.counters.evicted += 1;
    }
    return instance;
  }

  /** An evicted or idle instance: its open numbers settle; what it applied stays beyond memory. */
  private forget(id: string, instance: ModelInstance): void {
    this.table.delete(id);
    for (const epoch of instance.epochs) this.settleAll(epoch);
    if (!instance.appliedAny && instance.boot === undefined) return;
    instance.epochs = instance.epochs.map((epoch) => {
      const restored = new ModelEpoch(epoch.floor, epoch.highest + 1, epoch.highest);
      for (let seq = epoch.floor; seq <= epoch.highest; seq += 1) restored.acknowledged.add(seq);
      return restored;
    });
    this.tombstones.set(id, instance);
  }

  private matching(instance: ModelInstance, seq: number): ModelEpoch | undefined {
    const holding = instance.epochs.find((epoch) => epoch.distance(seq) === 0);
    if (holding !== undefined) return holding;
    let nearest: ModelEpoch | undefined;
    // The most recent epoch wins a tie.
    for (const epoch of [...instance.epochs].reverse()) if (nearest === undefined || epoch.distance(seq) < nearest.distance(seq)) nearest = epoch;
    return nearest !== undefined && nearest.distance(seq) <= this.settings.window ? nearest : undefined;
  }

  private arrive(epoch: ModelEpoch, seq: number, now: number): Verdict {
    if (seq < epoch.floor) return 'beyond_memory';
    if (seq > epoch.highest) {
      for (let skipped = epoch.highest + 1; skipped < seq; skipped += 1) epoch.open.set(skipped, now);
      epoch.highest = seq;
      epoch.applied.add(seq);
      for (const open of epoch.open.keys()) if (open < seq - this.settings.window) this.settle(epoch, open);
      return 'apply';
    }
    if (epoch.applied.has(seq)) return 'duplicate';
    if (epoch.lost.has(seq)) return 'after_lost';
    if (epoch.acknowledged.has(seq)) return 'beyond_memory';
    epoch.applied.add(seq);
    if (seq >= epoch.claimedFrom) {
      epoch.open.delete(seq);
      return 'late';
    }
    return 'apply';
  }

  private acknowledge(instance: ModelInstance, ackedSeq: number): void {
    if (instance.forgotten.some(([from, to]) => from <= ackedSeq + 1 && ackedSeq + 1 <= to)) return;
    const epoch = this.matching(instance, ackedSeq + 1);
    if (epoch === undefined) {
      this.startEpoch(instance, new ModelEpoch(ackedSeq + 1, ackedSeq + 1, ackedSeq), instance.epochs.length === 0 ? undefined : 'jump');
      return;
    }
    for (let seq = epoch.floor; seq < epoch.claimedFrom; seq += 1) {
      if (epoch.applied.has(seq)) continue;
      if (seq <= ackedSeq) epoch.acknowledged.add(seq);
      else {
        epoch.lost.add(seq);
        this.counters.lost += 1;
      }
    }
    epoch.claimedFrom = epoch.floor;
    for (let seq = epoch.highest + 1; seq <= ackedSeq; seq += 1) epoch.acknowledged.add(seq);
    epoch.highest = Math.max(epoch.highest, ackedSeq);
  }

  private startEpoch(instance: ModelInstance, epoch: ModelEpoch, reason: 'jump' | undefined): void {
    for (const other of instance.epochs) this.settleAll(other);
    instance.epochs.push(epoch);
    if (reason !== undefined) this.counters.reset[reason] += 1;
    while (instance.epochs.length > this.settings.maxEpochs) {
      const oldest = instance.epochs.shift();
      if (oldest !== undefined && oldest.highest >= oldest.floor) instance.forgotten.push([oldest.floor, oldest.highest]);
    }
  }

  private restart(instance: ModelInstance): void {
    for (const epoch of instance.epochs) this.settleAll(epoch);
    if (instance.boot !== undefined) instance.pastBoots = [...instance.pastBoots, instance.boot].slice(-this.settings.maxPastBoots);
    instance.epochs = [];
    instance.forgotten = [];
    instance.maxAcked = undefined;
    instance.appliedAny = false;
    instance.dropTotals = new Map();
    this.counters.reset.restart += 1;
  }

  private settleAll(epoch: ModelEpoch): void {
    for (const seq of [...epoch.open.keys()]) this.settle(epoch, seq);
  }

  private settle(epoch: ModelEpoch, seq: number): void {
    epoch.open.delete(seq);
    epoch.lost.add(seq);
    this.counters.lost += 1;
  }
}
