/**
 * The exactly-once accounting model, proven by properties: simulated bridge-plugin instances
 * (numbering, batching oldest first, one request at a time, re-sending after a failure led by a
 * heartbeat) send through random faults (lost responses and requests, delayed requests read
 * late, buffer drops, restarts under the same id with and without boots, far jumps, table
 * floods and evictions, TTL sweeps, reorder timeouts) to the real instance table and to the
 * reference model (test/support/sequenceModel.ts).
 *
 * Within the documented bounds every verdict, drop increment and counter agrees with the model,
 * every event is applied at most once, and a duplicate is always an event applied before.
 * Beyond the bounds (tiny tables, more jumps than epochs) an event is applied twice only when a
 * bound counter says memory was dropped. `npm run fuzz` runs many more schedules.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_EPOCHS, MAX_PAST_BOOTS, PluginInstances, type InstanceTable } from '../src/correlate/instances.js';
import { FakeClock } from './support/sidecar.js';
import { SequenceModel, type Verdict } from './support/sequenceModel.js';

/** Verdicts and counters over all schedules, printed by `npm run fuzz` to show what the schedules exercised. */
const STATS = new Map<string, number>();
const BEYOND = new Map<string, number>();
const tally = (key: string, count = 1): void => void STATS.set(key, (STATS.get(key) ?? 0) + count);
const FUZZING = process.env.FUZZ_RUNS !== undefined;
const RUNS = FUZZING ? Number(process.env.ACCOUNTING_RUNS ?? 20_000) : 300;

const WINDOW = 1000;
const REORDER_SECONDS = 30;
const TTL_SECONDS = 100;
const PLUGINS = 3;
const DROP_KEY = 'post_tool_call\u0000send_failed';

type Fate = 'ok' | 'lostResponse' | 'lostRequest' | 'delay';
type Command =
  | { readonly t: 'emit'; readonly who: number; readonly n: number }
  /** `skip` > 0: a sender of its own sending past its oldest events (several requests at once). */
  | { readonly t: 'send'; readonly who: number; readonly skip: number; readonly size: number; readonly heartbeat: boolean; readonly fate: Fate }
  | { readonly t: 'heartbeat'; readonly who: number; readonly fate: Fate }
  | { readonly t: 'release'; readonly pick: number }
  | { readonly t: 'drop'; readonly who: number; readonly n: number }
  | { readonly t: 'restart'; readonly who: number }
  | { readonly t: 'jump'; readonly who: number; readonly by: number }
  /** A sender of its own sending every other event of 2n (beyond the bounds only: fragments the interval sets). */
  | { readonly t: 'scatter'; readonly who: number; readonly n: number }
  | { readonly t: 'flood'; readonly n: number }
  | { readonly t: 'tick'; readonly seconds: number }
  | { readonly t: 'scrape' }
  | { readonly t: 'sweep' };

const who = fc.integer({ min: 0, max: PLUGINS - 1 });
const fate = fc.constantFrom<Fate>('ok', 'ok', 'ok', 'lostResponse', 'lostRequest', 'delay');
const commonCommands = [
  { weight: 6, arbitrary: fc.record({ t: fc.constant('emit' as const), who, n: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 10, arbitrary: fc.record({ t: fc.constant('send' as const), who, skip: fc.constantFrom(0, 0, 0, 1, 3), size: fc.integer({ min: 1, max: 10 }), heartbeat: fc.boolean(), fate }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('heartbeat' as const), who, fate }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('release' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('drop' as const), who, n: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('restart' as const), who }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('jump' as const), who, by: fc.integer({ min: 2 * WINDOW, max: 50 * WINDOW }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('flood' as const), n: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('tick' as const), seconds: fc.constantFrom(1, 2, 5, REORDER_SECONDS + 1, 40) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'scrape' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'sweep' as const }) },
];
/** More jumps than epochs, and fragmented numbers: past the epoch and interval bounds. */
const beyondCommands = [
  { weight: 12, arbitrary: fc.record({ t: fc.constant('jump' as const), who, by: fc.integer({ min: 2 * WINDOW, max: 50 * WINDOW }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('scatter' as const), who, n: fc.integer({ min: 50, max: 200 }) }) },
];
const scheduleOf = (commands: fc.Arbitrary<Command>) =>
  fc.record({
    commands: fc.array(commands, { minLength: 1, maxLength: 80, size: 'max' }),
    /** Which simulated plugins send no boot (senders of their own). */
    bootless: fc.array(fc.boolean(), { minLength: PLUGINS, maxLength: PLUGINS }),
  });
const schedule = scheduleOf(fc.oneof(...commonCommands));
const beyondSchedule = scheduleOf(fc.oneof(...commonCommands, ...beyondCommands));

type Line =
  | { readonly kind: 'event'; readonly seq: number; readonly truth: string }
  | { readonly kind: 'heartbeat'; readonly boot: string | undefined; readonly acked: number; readonly dropped: number };

interface Post {
  readonly who: number;
  /** The numbering run of the plugin that sent it. */
  readonly run: number;
  readonly lines: readonly Line[];
}

/** One simulated plugin instance, as plugin/hermes_prometheus_bridge/sender.py behaves. */
class Plugin {
  run = 0;
  nextSeq = 1;
  acked = 0;
  buffer: { seq: number; truth: string }[] = [];
  resync = true;
  dropped = 0;
  jumps = 0;

  constructor(
    readonly id: string,
    readonly bootless: boolean,
  ) {}

  get boot(): string | undefined {
    return this.bootless ? undefined : `${this.id}-${this.run}`;
  }

  heartbeat(): Line {
    return { kind: 'heartbeat', boot: this.boot, acked: this.acked, dropped: this.dropped };
  }

  /**
   * A sender without boots must not let events be applied unacknowledged while its acked_seq
   * is 0: its next heartbeat (acked_seq 0) would read as a restart (the documented bound).
   */
  allowed(fate: Fate): Fate {
    return this.bootless && this.acked === 0 && (fate === 'lostResponse' || fate === 'delay') ? 'lostRequest' : fate;
  }
}

interface Limits {
  readonly maxInstances: number;
  readonly maxTombstones?: number;
  readonly maxBytes?: number;
  readonly maxJumps: number;
}

class Harness {
  readonly clock = new FakeClock(1000);
  readonly evicted: Record<InstanceTable, number> = { plugin_instances: 0, plugin_tombstones: 0, plugin_intervals: 0, plugin_epochs: 0 };
  readonly counters = { lost: 0, reset: { jump: 0, restart: 0 }, stale: { boot: 0, acked_seq: 0, dropped: 0 } };
  readonly instances: PluginInstances;
  readonly model: SequenceModel;
  readonly plugins: Plugin[];
  readonly applied = new Map<string, number>();
  /** Set when an event was applied twice (only allowed beyond the bounds, and then counted). */
  appliedTwice = false;
  private delayed: Post[] = [];
  private floods = 0;

  constructor(
    bootless: readonly boolean[],
    private readonly limits: Limits,
    private readonly compare: boolean,
  ) {
    this.instances = new PluginInstances({
      clock: this.clock.read,
      ttlSeconds: TTL_SECONDS,
      maxInstances: limits.maxInstances,
      maxTombstones: limits.maxTombstones,
      maxBytes: limits.maxBytes,
      windowSize: WINDOW,
      reorderSeconds: REORDER_SECONDS,
      onEvict: (table) => {
        this.evicted[table] += 1;
      },
      onLost: (events) => {
        this.counters.lost += events;
      },
      onReset: (reason) => {
        this.counters.reset[reason] += 1;
      },
      onStale: (reason) => {
        this.counters.stale[reason] += 1;
      },
    });
    this.model = new SequenceModel({
      window: WINDOW,
      reorderSeconds: REORDER_SECONDS,
      ttlSeconds: TTL_SECONDS,
      maxInstances: limits.maxInstances,
      maxEpochs: MAX_EPOCHS,
      maxPastBoots: MAX_PAST_BOOTS,
    });
    this.plugins = bootless.map((none, index) => new Plugin(`p${index}`, none));
  }

  /** Whether memory was knowingly dropped (a bound counter moved). */
  get memoryDropped(): boolean {
    return this.evicted.plugin_tombstones + this.evicted.plugin_epochs > 0;
  }

  step(command: Command): void {
    // At least a second per step: the table re-orders an instance once a second, so its order is exact.
    this.clock.advance(1);
    const now = this.clock.now;
    switch (command.t) {
      case 'emit':
        return this.emit(this.pluginOf(command.who), command.n);
      case 'send':
        return this.send(this.pluginOf(command.who), command.skip, command.size, command.heartbeat, command.fate);
      case 'heartbeat': {
        const plugin = this.pluginOf(command.who);
        return this.post(plugin, [plugin.heartbeat()], [], plugin.allowed(command.fate));
      }
      case 'release': {
        if (this.delayed.length === 0) return;
        const [post] = this.delayed.splice(command.pick % this.delayed.length, 1);
        if (post !== undefined) this.deliver(this.withinBounds(post));
        return;
      }
      case 'drop': {
        // The retry buffer overflowed: the oldest events are gone, counted by the plugin.
        const plugin = this.pluginOf(command.who);
        const gone = plugin.buffer.splice(0, command.n);
        plugin.dropped += gone.length;
        return;
      }
      case 'restart':
        return this.restart(this.pluginOf(command.who));
      case 'jump': {
        const plugin = this.pluginOf(command.who);
        if (plugin.jumps >= this.limits.maxJumps) return;
        plugin.jumps += 1;
        plugin.nextSeq += command.by;
        return;
      }
      case 'scatter': {
        const plugin = this.pluginOf(command.who);
        this.emit(plugin, 2 * command.n);
        const every = plugin.buffer.filter((_, index) => index % 2 === 0);
        const lines: Line[] = every.map(({ seq, truth }) => ({ kind: 'event', seq, truth }));
        if (plugin.resync) lines.unshift(plugin.heartbeat());
        return this.post(plugin, lines, every, 'ok');
      }
      case 'flood':
        for (let index = 0; index < command.n; index += 1) {
          this.floods += 1;
          this.deliver({ who: -1, run: 0, lines: [{ kind: 'heartbeat', boot: undefined, acked: 0, dropped: 0 }] }, `f${this.floods}`);
        }
        return;
      case 'tick':
        this.clock.advance(command.seconds);
        return;
      case 'scrape':
        this.instances.settleExpired();
        this.model.settleExpired(now);
        return this.check();
      case 'sweep':
        this.instances.sweep();
        this.model.sweep(now);
        return this.check();
    }
  }

  check(): void {
    if (!this.compare) return;
    expect(this.counters).toEqual({ lost: this.model.counters.lost, reset: this.model.counters.reset, stale: this.model.counters.stale });
    expect(this.evicted.plugin_instances).toBe(this.model.counters.evicted);
    // Within the bounds nothing is trimmed or forgotten.
    expect(this.evicted).toMatchObject({ plugin_tombstones: 0, plugin_intervals: 0, plugin_epochs: 0 });
  }

  private pluginOf(index: number): Plugin {
    const plugin = this.plugins[index];
    if (plugin === undefined) throw new Error(`no plugin ${index}`);
    return plugin;
  }

  private emit(plugin: Plugin, n: number): void {
    for (let index = 0; index < n; index += 1) {
      plugin.buffer.push({ seq: plugin.nextSeq, truth: `${plugin.id}/${plugin.run}/${plugin.nextSeq}` });
      plugin.nextSeq += 1;
    }
  }

  private send(plugin: Plugin, skip: number, size: number, withHeartbeat: boolean, requested: Fate): void {
    const batch = plugin.buffer.slice(skip, skip + size);
    const lines: Line[] = batch.map(({ seq, truth }) => ({ kind: 'event', seq, truth }));
    // The plugin leads its first post, and every post after a failure, with a heartbeat.
    if (withHeartbeat || plugin.resync) lines.unshift(plugin.heartbeat());
    if (lines.length === 0) return;
    this.post(plugin, lines, batch, plugin.allowed(requested));
  }

  private post(plugin: Plugin, lines: Line[], batch: readonly { seq: number; truth: string }[], fate: Fate): void {
    const post = { who: this.plugins.indexOf(plugin), run: plugin.run, lines };
    if (fate === 'ok' || fate === 'lostResponse') this.deliver(post);
    if (fate === 'delay') this.delayed.push(post);
    if (fate !== 'ok') {
      plugin.resync = true;
      return;
    }
    plugin.resync = false;
    const last = batch.at(-1);
    if (last !== undefined) {
      // acked_seq: the highest number a 2xx answered.
      plugin.acked = Math.max(plugin.acked, last.seq);
      plugin.buffer = plugin.buffer.filter((event) => !batch.includes(event));
    }
  }

  /**
   * A delayed post of an earlier numbering, within the documented bounds: none of its events
   * arrive after the new numbering started, and its heartbeats only while the sidecar still
   * remembers their boot (without one, or once forgotten, it would read as a new numbering).
   */
  private withinBounds(post: Post): Post {
    const plugin = this.pluginOf(post.who);
    if (post.run === plugin.run) return post;
    const remembered = (line: Line) => line.kind === 'heartbeat' && line.boot !== undefined && this.model.remembersBoot(plugin.id, line.boot);
    return { ...post, lines: post.lines.filter(remembered) };
  }

  /** A new numbering under the same id. */
  private restart(plugin: Plugin): void {
    plugin.run += 1;
    plugin.nextSeq = 1;
    plugin.acked = 0;
    plugin.buffer = [];
    plugin.resync = true;
    plugin.dropped = 0;
    plugin.jumps = 0;
  }

  private deliver(post: Post, floodId?: string): void {
    const id = floodId ?? this.pluginOf(post.who).id;
    const now = this.clock.now;
    for (const line of post.lines) {
      if (line.kind === 'heartbeat') {
        const deltas = this.instances.heartbeat(id, {
          boot: line.boot,
          ackedSeq: line.acked,
          dropped: [{ hook: 'post_tool_call', reason: 'send_failed', total: line.dropped }],
        });
        const expected = this.model.heartbeat(id, { boot: line.boot, ackedSeq: line.acked, totals: new Map([[DROP_KEY, line.dropped]]) }, now);
        if (this.compare) expect(deltas.map(({ delta }) => delta)).toEqual([...expected.values()]);
        continue;
      }
      const verdict = this.instances.sequence(id, line.seq);
      tally(verdict);
      const expected: Verdict = this.model.sequence(id, line.seq, now);
      if (this.compare) expect(verdict).toBe(expected);
      this.account(line.truth, verdict);
    }
    this.check();
  }

  private account(truth: string, verdict: Verdict): void {
    const times = this.applied.get(truth) ?? 0;
    if (verdict === 'duplicate') {
      // A number never seen is never a duplicate (beyond the bounds: unless memory was dropped, counted).
      if (times === 0) expect(this.memoryDropped, `${truth} counted duplicate before it was applied`).toBe(true);
      return;
    }
    if (verdict === 'after_lost' || verdict === 'beyond_memory') return;
    this.applied.set(truth, times + 1);
    if (times > 0) {
      this.appliedTwice = true;
      expect(this.memoryDropped, `${truth} applied twice with no bound counted`).toBe(true);
    }
  }
}

describe('exactly-once accounting of plugin sequence numbers', () => {
  it(`agrees with the reference model on every verdict and counter, and applies each event at most once (${RUNS} schedules)`, () => {
    fc.assert(
      fc.property(schedule, ({ commands, bootless }) => {
        const harness = new Harness(bootless, { maxInstances: 4, maxJumps: MAX_EPOCHS - 1 }, true);
        for (const step of commands) harness.step(step);
        harness.step({ t: 'sweep' });
        expect(harness.appliedTwice).toBe(false);
        tally('lost', harness.counters.lost);
        tally('restart', harness.counters.reset.restart);
        tally('stale', harness.counters.stale.boot + harness.counters.stale.acked_seq + harness.counters.stale.dropped);
        tally('evicted', harness.evicted.plugin_instances);
        tally('schedules');
      }),
      { numRuns: RUNS },
    );
    if (FUZZING) console.log(`accounting schedules within the bounds: ${JSON.stringify(Object.fromEntries(STATS))}`);
  });

  it(`beyond the bounds (tiny tables, more jumps than epochs) applies an event twice only when a bound counter moved (${RUNS} schedules)`, () => {
    fc.assert(
      fc.property(beyondSchedule, ({ commands, bootless }) => {
        const harness = new Harness(bootless, { maxInstances: 2, maxTombstones: 1, maxBytes: 8 * 1024, maxJumps: 3 * MAX_EPOCHS }, false);
        for (const step of commands) harness.step(step);
        BEYOND.set('schedules', (BEYOND.get('schedules') ?? 0) + 1);
        if (harness.appliedTwice) BEYOND.set('some event applied twice, counted', (BEYOND.get('some event applied twice, counted') ?? 0) + 1);
        for (const [table, count] of Object.entries(harness.evicted)) BEYOND.set(table, (BEYOND.get(table) ?? 0) + count);
      }),
      { numRuns: RUNS },
    );
    if (FUZZING) console.log(`accounting schedules beyond the bounds: ${JSON.stringify(Object.fromEntries(BEYOND))}`);
  });
});
