/**
 * The history's counters and labels without a database: step placement, the 0 and --until
 * samples, the live label rules (caps, `other`, sanitizing), hostile values and pricing.
 */
import { describe, expect, it } from 'vitest';
import { parseBackfillArgs } from '../../../src/cli/backfill/args.js';
import { BackfillError } from '../../../src/cli/backfill/errors.js';
import { HISTORY_FAMILIES, HistoryBuilder, SESSION_DURATION_BUCKETS } from '../../../src/cli/backfill/history.js';
import { CounterSet } from '../../../src/cli/backfill/series.js';
import { DEFAULT_LABEL_CAPS } from '../../../src/metrics/labels.js';

const STEP = 15_000;
const UNTIL = 10 * 3_600_000;
const range = { fromMs: undefined, untilMs: UNTIL, stepMs: STEP, extraLabels: [['job', 'j']] as const };

const usage = (over: Record<string, unknown> = {}) => ({
  model: 'm', provider: 'P', task: '', apiCalls: 1, input: 10, output: 2, cacheRead: 0, cacheWrite: 0, reasoning: 0,
  estimatedCostUsd: 0.5, costStatus: 'estimated', lastSeen: 3600, ...over,
});

function only(builder: HistoryBuilder, name: string) {
  return [...builder.counters.seriesOf(name)];
}

describe('counter samples', () => {
  it('starts at 0 one step before the first increment, carries across pauses and ends at --until', () => {
    const set = new CounterSet({ stepMs: STEP, untilMs: UNTIL });
    set.add('x_total', [], 20_000, 2); // step ending at 30 s
    set.add('x_total', [], 29_000, 1); // same step
    set.add('x_total', [], 300_000, 4); // step ending at 300 s, after a pause
    expect([...set.seriesOf('x_total')][0]?.samples).toEqual([
      { ms: 15_000, value: 0 },
      { ms: 30_000, value: 3 },
      { ms: 285_000, value: 3 },
      { ms: 300_000, value: 7 },
      { ms: UNTIL, value: 7 },
    ]);
  });

  it('never places a sample after --until', () => {
    const set = new CounterSet({ stepMs: STEP, untilMs: 20_000 });
    set.add('x_total', [], 19_000, 1);
    expect([...set.seriesOf('x_total')][0]?.samples).toEqual([
      { ms: 5_000, value: 0 },
      { ms: 20_000, value: 1 },
    ]);
  });
});

describe('history labels', () => {
  it('labels as live does (kind, lower-cased provider) and adds profile, source and the extra labels', () => {
    const builder = new HistoryBuilder(range);
    builder.usage('work', usage({ task: 'vision' }));
    const input = only(builder, HISTORY_FAMILIES.tokens.name).find((s) => s.labels.some(([n, v]) => n === 'token_type' && v === 'input'));
    expect(input?.labels).toEqual([
      ['kind', 'auxiliary'], ['provider', 'p'], ['model', 'm'], ['token_type', 'input'], ['profile', 'work'], ['source', 'backfill'], ['job', 'j'],
    ]);
  });

  it('folds models past the live cap into other and counts each fold', () => {
    const builder = new HistoryBuilder(range);
    for (let i = 0; i < DEFAULT_LABEL_CAPS.model + 3; i += 1) builder.usage('default', usage({ model: `model-${i}` }));
    const models = new Set(only(builder, HISTORY_FAMILIES.apiCalls.name).map((s) => s.labels.find(([n]) => n === 'model')?.[1]));
    expect(models.size).toBe(DEFAULT_LABEL_CAPS.model + 1);
    expect(models.has('other')).toBe(true);
    expect(builder.guardCounts.folded.get('model')).toBe(3);
  });

  it('turns missing, empty and control-character names into unknown or their sanitized form', () => {
    const builder = new HistoryBuilder(range);
    builder.message('default', { role: 'tool', toolName: undefined, timestamp: 100, finishReason: '\u0000' });
    builder.message('default', { role: 'tool', toolName: ' term\u0007inal ', timestamp: 100, finishReason: undefined });
    const tools = only(builder, HISTORY_FAMILIES.toolCalls.name).map((s) => s.labels[0]?.[1]);
    expect(tools.sort()).toEqual(['terminal', 'unknown']);
    expect(only(builder, HISTORY_FAMILIES.finishReasons.name).map((s) => s.labels[0]?.[1])).toEqual(['unknown']);
  });
});

describe('hostile values', () => {
  it('leaves out negative, non-finite and unsafe amounts and bad times, counting them', () => {
    const builder = new HistoryBuilder(range);
    builder.usage('default', usage({ input: -5, output: Number.POSITIVE_INFINITY, cacheRead: 2 ** 60, estimatedCostUsd: Number.NaN }));
    builder.usage('default', usage({ lastSeen: undefined }));
    builder.session('default', { platform: 'cli', startedAt: 100, endedAt: 50, endReason: 'x', toolCalls: -1 });
    expect(builder.skipped).toEqual({ outsideRange: 0, noTime: 1, badValue: 5 });
    for (const name of [HISTORY_FAMILIES.tokens.name, HISTORY_FAMILIES.costUsd.name]) {
      for (const { samples } of only(builder, name)) for (const { value } of samples) expect(Number.isFinite(value)).toBe(true);
    }
  });
});

describe('cost and duration', () => {
  it('prices as live: included at 0, Hermes\' estimate as hermes, an unpriced row not at all', () => {
    const builder = new HistoryBuilder(range);
    builder.usage('default', usage({ model: 'a', costStatus: 'included', estimatedCostUsd: 0 }));
    builder.usage('default', usage({ model: 'b', estimatedCostUsd: 0.25 }));
    builder.usage('default', usage({ model: 'c', costStatus: 'unknown', estimatedCostUsd: 0 }));
    const cost = only(builder, HISTORY_FAMILIES.costUsd.name).map((s) => [s.labels[2]?.[1], s.labels[3]?.[1], s.samples.at(-1)?.value]);
    expect(cost).toEqual([
      ['a', 'included', 0],
      ['b', 'hermes', 0.25],
    ]);
  });

  it('observes session durations into cumulative buckets with every bucket present', () => {
    const builder = new HistoryBuilder(range);
    builder.session('default', { platform: 'cli', startedAt: 100, endedAt: 100 + 400, endReason: 'user_exit', toolCalls: 2 });
    const buckets = only(builder, `${HISTORY_FAMILIES.sessionDuration.name}_bucket`).map((s) => [s.labels.find(([n]) => n === 'le')?.[1], s.samples.at(-1)?.value]);
    expect(buckets).toEqual([...SESSION_DURATION_BUCKETS.map((le) => [String(le), le >= 400 ? 1 : 0]), ['+Inf', 1]]);
    expect(only(builder, `${HISTORY_FAMILIES.sessionDuration.name}_sum`)[0]?.samples.at(-1)?.value).toBe(400);
  });
});

describe('arguments', () => {
  const now = Date.UTC(2026, 8, 30);
  it('defaults to all history up to now in 15 s steps, job hermes-sidecar and instance backfill', () => {
    expect(parseBackfillArgs([], now)).toMatchObject({ fromMs: undefined, untilMs: now, stepMs: 15_000, outDir: 'hermes-backfill', extraLabels: [['job', 'hermes-sidecar'], ['instance', 'backfill']] });
  });

  it('reads RFC 3339 and Unix seconds, repeated --state-db and --label', () => {
    const args = parseBackfillArgs(['--from=2026-07-01T00:00:00Z', '--until', '1790000000', '--state-db', 'a', '--state-db', 'b', '--label', 'job=h', '--label', 'cluster=eu1'], now);
    expect(args).toMatchObject({ fromMs: Date.UTC(2026, 6, 1), untilMs: 1_790_000_000_000, stateDbs: ['a', 'b'], extraLabels: [['job', 'h'], ['instance', 'backfill'], ['cluster', 'eu1']] });
  });

  it.each([
    [['--from', 'yesterday'], '--from must be an RFC 3339 time'],
    [['--from', '1790000000', '--until', '1780000000'], '--from must be before --until.'],
    [['--step', '0'], '--step must be a whole number of seconds'],
    [['--label', 'source=x'], '--label must be NAME=VALUE'],
    [['--label', 'job=a', '--label', 'job=b'], '--label job is given more than once.'],
    [['--out', 'a', '--out', 'b'], '--out is given more than once.'],
    [['--until'], '--until needs a value.'],
    [['stray'], 'an argument is not an option'],
  ])('refuses %j with one sentence', (argv, message) => {
    expect(() => parseBackfillArgs(argv, now)).toThrow(BackfillError);
    expect(() => parseBackfillArgs(argv, now)).toThrow(message);
  });
});

describe('which databases', () => {
  it('names the profile from the path: profiles/<name>/state.db is <name>, anything else the default', async () => {
    const { profileOf, hermesHomeOf } = await import('../../../src/cli/backfill/databases.js');
    expect(profileOf('/h/.hermes/profiles/work/state.db')).toBe('work');
    expect(profileOf('/h/.hermes/state.db')).toBe('default');
    expect(profileOf('/backups/copy.db')).toBe('default');
    expect(hermesHomeOf({ HERMES_HOME: '/srv/hermes' }, undefined)).toBe('/srv/hermes');
    expect(hermesHomeOf({ HERMES_HOME: '/srv/hermes' }, '/other')).toBe('/other');
  });
});
