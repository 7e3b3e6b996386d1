/** The busy watch that ends the idle footprint settings (src/whenBusy.ts). */
import { describe, expect, it } from 'vitest';
import { BUSY_CORE_SHARE, BUSY_LOOP_SHARE, whenBusy } from '../src/whenBusy.js';

/** A process whose CPU time and clock the test moves, with the watch's timer under its hand. */
function fakeProcess() {
  const state = { cpuMicros: 0, activeMs: 0, nowMs: 0, ticks: [] as (() => void)[], stopped: 0, intervals: [] as number[] };
  return {
    state,
    options: {
      cpuMicros: () => state.cpuMicros,
      loopActiveMs: () => state.activeMs,
      nowMs: () => state.nowMs,
      every: (ms: number, tick: () => void) => {
        state.intervals.push(ms);
        state.ticks.push(tick);
        return () => {
          state.stopped += 1;
        };
      },
    },
    /** `ms` of wall time in which the process used `cpuMs` of CPU with its loop busy `activeMs` (as long by default), then the timer fires. */
    pass(ms: number, cpuMs: number, activeMs = cpuMs) {
      state.nowMs += ms;
      state.cpuMicros += cpuMs * 1000;
      state.activeMs += activeMs;
      for (const tick of state.ticks) tick();
    },
  };
}

describe('whenBusy', () => {
  it('stays quiet while the process uses less than a quarter of a core, as an idle sidecar scraped back to back does', () => {
    const fake = fakeProcess();
    let busy = 0;
    whenBusy(() => (busy += 1), fake.options);
    expect(fake.state.intervals).toEqual([1000]);
    expect([BUSY_CORE_SHARE, BUSY_LOOP_SHARE]).toEqual([0.25, 0.9]);
    // Scrapes at the render pacing limit: about 90 ms of CPU a second, the loop waiting for a
    // core on a crowded machine for much longer.
    for (let second = 0; second < 60; second += 1) fake.pass(1000, 90, 600);
    fake.pass(1000, 249, 899);
    expect(busy).toBe(0);
    expect(fake.state.stopped).toBe(0);
  });

  it('calls back once, at the first window with a quarter of a core or more, and stops watching', () => {
    const fake = fakeProcess();
    let busy = 0;
    whenBusy(() => (busy += 1), fake.options);
    fake.pass(1000, 10);
    fake.pass(1000, 250);
    expect(busy).toBe(1);
    expect(fake.state.stopped).toBe(1);
  });

  it('calls back when the loop was busy nearly all the window, on a machine too crowded to give it a quarter of a core', () => {
    const fake = fakeProcess();
    let busy = 0;
    whenBusy(() => (busy += 1), fake.options);
    fake.pass(1000, 150, 900);
    expect(busy).toBe(1);
    expect(fake.state.stopped).toBe(1);
  });

  it('judges a late timer over the time that really passed', () => {
    const fake = fakeProcess();
    let busy = 0;
    whenBusy(() => (busy += 1), fake.options);
    // 400 ms of CPU would be busy over one second; the timer fired after two.
    fake.pass(2000, 400);
    expect(busy).toBe(0);
    fake.pass(1000, 300);
    expect(busy).toBe(1);
  });

  it('counts CPU from when watching starts, not what the process used before', () => {
    const fake = fakeProcess();
    fake.state.cpuMicros = 5_000_000;
    fake.state.activeMs = 300;
    fake.state.nowMs = 300;
    let busy = 0;
    whenBusy(() => (busy += 1), fake.options);
    fake.pass(1000, 20);
    expect(busy).toBe(0);
  });

  it('stops before it calls back when asked', () => {
    const fake = fakeProcess();
    const stop = whenBusy(() => undefined, fake.options);
    stop();
    expect(fake.state.stopped).toBe(1);
  });
});
