/**
 * A clock that can be held at one reading for the length of a batch.
 *
 * The events of one batch arrived together, so they share one arrival time: the span tables and
 * the plugin-instance table read this clock several times per event, and reading the system
 * clock each time was 2–3 % of ingest (bench/RESULTS.md, Profile). Outside a batch (sweeps,
 * scrapes, liveness) it reads the source clock.
 */
import type { Clock } from '../clock.js';

export class HeldClock {
  private held: number | undefined;

  constructor(private readonly source: Clock) {}

  /** The held reading inside a batch, else the source clock. */
  readonly now: Clock = () => this.held ?? this.source();

  /** Reads the source clock once and holds that reading until release. */
  hold(): number {
    const now = this.source();
    this.held = now;
    return now;
  }

  release(): void {
    this.held = undefined;
  }
}
