/**
 * A set of integers kept as sorted, disjoint, non-adjacent closed intervals. The sequence
 * tracker keeps a handful per epoch (applied, lost, acknowledged) and bounds how many intervals
 * each holds, so every operation here is O(intervals) with a small constant bound.
 */
export class IntervalSet {
  /** Flat pairs: from0, to0, from1, to1, … ascending. */
  private readonly bounds: number[] = [];

  /** Intervals held (what the memory bound counts). */
  get intervals(): number {
    return this.bounds.length / 2;
  }

  get empty(): boolean {
    return this.bounds.length === 0;
  }

  /** The upper end of the lowest interval; undefined when empty. */
  get lowestTo(): number | undefined {
    return this.bounds[1];
  }

  has(value: number): boolean {
    const index = this.indexAtOrAfter(value);
    const from = this.bounds[index];
    return from !== undefined && from <= value;
  }

  add(value: number): void {
    this.addRange(value, value);
  }

  /** Adds [from, to], merging with every interval it overlaps or touches. */
  addRange(from: number, to: number): void {
    if (from > to) return;
    const { bounds } = this;
    // Numbers mostly arrive in order: extend or append after the highest interval without a splice.
    const lastFrom = bounds[bounds.length - 2];
    const lastTo = bounds[bounds.length - 1];
    if (lastFrom === undefined || lastTo === undefined || from > lastTo + 1) {
      bounds.push(from, to);
      return;
    }
    if (from >= lastFrom) {
      if (to > lastTo) bounds[bounds.length - 1] = to;
      return;
    }
    // First interval whose end reaches from - 1 (it touches or overlaps).
    let first = 0;
    while (first < bounds.length && (bounds[first + 1] ?? 0) < from - 1) first += 2;
    let last = first;
    let lo = from;
    let hi = to;
    while (last < bounds.length && (bounds[last] ?? 0) <= to + 1) {
      lo = Math.min(lo, bounds[last] ?? lo);
      hi = Math.max(hi, bounds[last + 1] ?? hi);
      last += 2;
    }
    bounds.splice(first, last - first, lo, hi);
  }

  /** Calls back with each maximal run of [from, to] that is not in the set, ascending. */
  eachMissing(from: number, to: number, visit: (from: number, to: number) => void): void {
    let next = from;
    const { bounds } = this;
    for (let index = 0; index < bounds.length && next <= to; index += 2) {
      const start = bounds[index] ?? 0;
      const end = bounds[index + 1] ?? 0;
      if (end < next) continue;
      if (start > to) break;
      if (start > next) visit(next, start - 1);
      next = end + 1;
    }
    if (next <= to) visit(next, to);
  }

  /** Removes every member below `limit`. */
  dropBelow(limit: number): void {
    const { bounds } = this;
    let cut = 0;
    while (cut < bounds.length && (bounds[cut + 1] ?? 0) < limit) cut += 2;
    bounds.splice(0, cut);
    if ((bounds[0] ?? limit) < limit) bounds[0] = limit;
  }

  /** The intervals as [from, to] pairs (tests and tombstones). */
  toArray(): [number, number][] {
    const pairs: [number, number][] = [];
    for (let index = 0; index < this.bounds.length; index += 2) pairs.push([this.bounds[index] ?? 0, this.bounds[index + 1] ?? 0]);
    return pairs;
  }

  /** Index of the first interval whose end is at or after value (binary search over pairs). */
  private indexAtOrAfter(value: number): number {
    let lo = 0;
    let hi = this.bounds.length / 2;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.bounds[mid * 2 + 1] ?? 0) < value) lo = mid + 1;
      else hi = mid;
    }
    return lo * 2;
  }
}
