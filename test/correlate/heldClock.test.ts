/** The batch clock: one reading held for a batch, the source clock outside one. */
import { describe, expect, it } from 'vitest';
import { HeldClock } from '../../src/correlate/heldClock.js';

describe('HeldClock', () => {
  it('reads the source clock until held, the held reading until released', () => {
    let source = 100;
    let reads = 0;
    const clock = new HeldClock(() => {
      reads += 1;
      return source;
    });
    expect(clock.now()).toBe(100);
    source = 101;
    expect(clock.hold()).toBe(101);
    source = 105;
    expect([clock.now(), clock.now(), clock.now()]).toEqual([101, 101, 101]);
    // One source reading for the hold, none for the three held reads.
    expect(reads).toBe(2);
    clock.release();
    expect(clock.now()).toBe(105);
    expect(reads).toBe(3);
  });
});
