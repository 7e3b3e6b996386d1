/**
 * The history's counters and labels without a database: step placement, the 0 and --until
 * samples, the live label rules (caps, `other`, sanitizing), hostile values and pricing.
 */
import { describe, expect, it } from 'vitest';
import { HISTORY_FAMILIES, HistoryBuilder, SESSION_DURATION_BUCKETS } from '../../../src/cli/backfill/history.js';
import { DEFAULT_LABEL_CAPS } from '../../../src/metrics/labels.js';

const STEP = 15_000;
const UNTIL = 10 * 3_600_000;
const range = { fromMs: undefined, untilMs: UNTIL, stepMs: STEP, extraLabels: [['job', 'j']] as const };

const usage = (over: Record<string, unknown> = {}) => ({
  model: 'm', provider: 'P', task: '', apiCalls: 1, input: 10, output: 2, cacheRead: 0, cacheWrite: 0, reasoning: 0,
  estimatedCostUsd: 0.5, costStatus: 'estimated', lastSeen: 3600, ...over,
});

/** Every series of `name` with all its samples (the whole range as one window). */
function only(builder: HistoryBuilder, name: string) {
  return [...builder.counters.drain(name, Number.POSITIVE_INFINITY, true)];
}

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
    builder.sessionStarted('default', { platform: 'cli', startedAt: 100, endedAt: 50, endReason: 'x', toolCalls: -1 });
    builder.sessionEnded('default', { platform: 'cli', startedAt: 100, endedAt: 50, endReason: 'x', toolCalls: -1 });
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
    builder.sessionEnded('default', { platform: 'cli', startedAt: 100, endedAt: 100 + 400, endReason: 'user_exit', toolCalls: 2 });
    const buckets = only(builder, `${HISTORY_FAMILIES.sessionDuration.name}_bucket`).map((s) => [s.labels.find(([n]) => n === 'le')?.[1], s.samples.at(-1)?.value]);
    expect(buckets).toEqual([...SESSION_DURATION_BUCKETS.map((le) => [String(le), le >= 400 ? 1 : 0]), ['+Inf', 1]]);
    expect(only(builder, `${HISTORY_FAMILIES.sessionDuration.name}_sum`)[0]?.samples.at(-1)?.value).toBe(400);
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
