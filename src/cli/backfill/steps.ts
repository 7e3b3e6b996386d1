/**
 * One series' steps not yet written: step ends and what each adds, in two growing Float64Arrays
 * (16 bytes a step, where a Map would take several times that). Rows arrive in time order per
 * table, so a step usually lands on the last one or after it; several databases of one profile
 * can interleave, so order is restored (and equal steps merged) only when it was broken.
 */
const INITIAL_CAPACITY = 4;

export class PendingSteps {
  private ends = new Float64Array(INITIAL_CAPACITY);
  private deltas = new Float64Array(INITIAL_CAPACITY);
  private length = 0;
  private sorted = true;

  get size(): number {
    return this.length;
  }

  add(stepEnd: number, delta: number): void {
    const last = this.length - 1;
    if (last >= 0 && this.ends[last] === stepEnd) {
      this.deltas[last] = (this.deltas[last] ?? 0) + delta;
      return;
    }
    if (last >= 0 && stepEnd < (this.ends[last] ?? 0)) this.sorted = false;
    if (this.length === this.ends.length) this.grow(this.length * 2);
    this.ends[this.length] = stepEnd;
    this.deltas[this.length] = delta;
    this.length += 1;
  }

  /** The earliest step end, if any. */
  first(): number | undefined {
    this.sort();
    return this.length === 0 ? undefined : this.ends[0];
  }

  /** Hands out the steps before `endMs` in time order and forgets them; returns how many. */
  takeBefore(endMs: number, visit: (stepEnd: number, delta: number) => void): number {
    this.sort();
    let taken = 0;
    while (taken < this.length && (this.ends[taken] ?? 0) < endMs) {
      visit(this.ends[taken] ?? 0, this.deltas[taken] ?? 0);
      taken += 1;
    }
    if (taken > 0) {
      this.ends.copyWithin(0, taken, this.length);
      this.deltas.copyWithin(0, taken, this.length);
      this.length -= taken;
      // A series busy in one window gives its memory back for the quiet ones after it.
      if (this.ends.length > INITIAL_CAPACITY && this.length < this.ends.length / 4) this.grow(Math.max(INITIAL_CAPACITY, this.length * 2));
    }
    return taken;
  }

  private sort(): void {
    if (this.sorted) return;
    const order = Array.from({ length: this.length }, (_, index) => index).sort((a, b) => (this.ends[a] ?? 0) - (this.ends[b] ?? 0));
    const ends = new Float64Array(this.ends.length);
    const deltas = new Float64Array(this.ends.length);
    let length = 0;
    for (const index of order) {
      const end = this.ends[index] ?? 0;
      if (length > 0 && ends[length - 1] === end) {
        deltas[length - 1] = (deltas[length - 1] ?? 0) + (this.deltas[index] ?? 0);
      } else {
        ends[length] = end;
        deltas[length] = this.deltas[index] ?? 0;
        length += 1;
      }
    }
    this.ends = ends;
    this.deltas = deltas;
    this.length = length;
    this.sorted = true;
  }

  private grow(capacity: number): void {
    const ends = new Float64Array(capacity);
    const deltas = new Float64Array(capacity);
    ends.set(this.ends.subarray(0, this.length));
    deltas.set(this.deltas.subarray(0, this.length));
    this.ends = ends;
    this.deltas = deltas;
  }
}
