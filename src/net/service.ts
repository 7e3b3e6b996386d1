/**
 * What one connection has had from its listener: the answers it was served (all of them, and
 * lately, fading with a half-life) and the credit of its request rate. The connection table
 * (connections.ts) closes the connection served most lately when it must make room, and holds
 * back a request that comes before its credit.
 */

/** How fast the record of answers fades: served lately, not ever. */
const FAIRNESS_HALF_LIFE_MS = 10_000;

export class ServiceRecord {
  /** Answers finished. */
  answers = 0;
  /** Answers finished, faded to `servedAt`. */
  private served = 0;
  private servedAt = 0;
  /** Requests it may still make at once, as of `creditAt`: one at first, so a peer gains no burst by reconnecting. */
  private credit = 1;
  private creditAt: number;

  constructor(now: number) {
    this.creditAt = now;
  }

  /** Answers finished, faded to `now`. */
  servedLately(now: number): number {
    return this.served === 0 ? 0 : this.served * 2 ** (-(now - this.servedAt) / FAIRNESS_HALF_LIFE_MS);
  }

  answered(now: number): void {
    this.served = this.servedLately(now) + 1;
    this.servedAt = now;
    this.answers += 1;
  }

  /**
   * Takes the credit of one request at `ratePerSecond` (credit up to as many): 0 when it may run
   * now, else the milliseconds until it may (its credit then taken as it runs).
   */
  takeRequest(now: number, ratePerSecond: number): number {
    this.credit = Math.min(ratePerSecond, this.credit + ((now - this.creditAt) * ratePerSecond) / 1000);
    this.creditAt = now;
    if (this.credit >= 1) {
      this.credit -= 1;
      return 0;
    }
    const waitMs = ((1 - this.credit) * 1000) / ratePerSecond;
    this.credit -= 1;
    return waitMs;
  }
}
