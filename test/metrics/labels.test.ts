import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  closedLabel,
  defaultLabelRules,
  LabelGuard,
  sanitizeLabelValue,
  spellingCapacity,
  type OpenLabel,
} from '../../src/metrics/labels.js';
import { DEFAULT_MAX_RAW_LABEL_BYTES } from '../../src/wireText.js';

describe('sanitizeLabelValue', () => {
  it.each([
    ['  openrouter  ', 'openrouter'],
    ['a\nb\tc\u0000d\u007f\u0085e', 'abcde'],
    ['x'.repeat(200), 'x'.repeat(128)],
    ['a,b', 'a,b'],
    ['50%', '50%'],
    ['\ud800lone', '\ufffdlone'],
    ['', ''],
    ['\n\t ', ''],
  ])('%j → %j', (raw, expected) => {
    expect(sanitizeLabelValue(raw)).toBe(expected);
  });

  it('keeps values that differ only around separators distinct', () => {
    expect(sanitizeLabelValue('x,b:y')).not.toBe(sanitizeLabelValue('x'));
    expect(sanitizeLabelValue('a%2Cb')).not.toBe(sanitizeLabelValue('a,b'));
  });
});

describe('closedLabel', () => {
  const allowed = new Set(['ok', 'error']);
  it.each([
    ['ok', 'ok'],
    [' error ', 'error'],
    ['weird', 'other'],
    ['', 'unknown'],
    [undefined, 'unknown'],
  ])('%j → %j', (raw, expected) => {
    expect(closedLabel(allowed, raw)).toBe(expected);
  });
});

describe('LabelGuard', () => {
  const guardWith = (rules: Partial<Record<OpenLabel, object>> = {}) => {
    const folds: string[] = [];
    const guard = new LabelGuard({ ...defaultLabelRules(), ...rules } as ReturnType<typeof defaultLabelRules>, {
      labelOverflow: { inc: ({ label }) => folds.push(label) },
      labelValuesCut: { inc: () => undefined },
      labelCacheEvictions: { inc: () => undefined },
    });
    return { guard, folds };
  };

  it('maps missing and empty to unknown without using the cap', () => {
    const { guard, folds } = guardWith({ tool: { cap: 1 } });
    expect(guard.value('tool', undefined)).toBe('unknown');
    expect(guard.value('tool', '   ')).toBe('unknown');
    expect(guard.value('tool', 'terminal')).toBe('terminal');
    expect(folds).toEqual([]);
  });

  it('keeps the first N distinct values and folds later new ones into other, counting each fold', () => {
    const { guard, folds } = guardWith({ model: { cap: 2 } });
    expect(['a', 'b', 'c', 'a', 'd', 'b', 'c'].map((value) => guard.value('model', value))).toEqual(['a', 'b', 'other', 'a', 'other', 'b', 'other']);
    expect(folds).toEqual(['model', 'model', 'model']);
  });

  it('caps each label separately', () => {
    const { guard } = guardWith({ model: { cap: 1 }, tool: { cap: 1 } });
    expect(guard.value('model', 'm1')).toBe('m1');
    expect(guard.value('tool', 'm2')).toBe('m2');
    expect(guard.value('model', 'm2')).toBe('other');
  });

  it('lower-cases providers only', () => {
    const { guard } = guardWith();
    expect(guard.value('provider', 'OpenRouter')).toBe('openrouter');
    expect(guard.value('model', 'GPT-5')).toBe('GPT-5');
  });

  it('applies rewrites before the allow-list and the cap', () => {
    const { guard, folds } = guardWith({
      model: { cap: 10, rewrite: { 'anthropic/claude-sonnet-4.6': 'claude-sonnet' }, allow: ['claude-sonnet', 'gpt-5'] },
    });
    expect(guard.value('model', 'anthropic/claude-sonnet-4.6')).toBe('claude-sonnet');
    expect(guard.value('model', 'gpt-5')).toBe('gpt-5');
    expect(guard.value('model', 'llama')).toBe('other');
    expect(folds).toEqual(['model']);
  });

  it('forgets, at each sweep, the released values of each label and only those, and moves its generation when it did', () => {
    const { guard } = guardWith();
    for (const model of ['a', 'b', 'c']) guard.retain('model', guard.value('model', model));
    guard.retain('provider', guard.value('provider', 'p'));
    guard.release('model', 'a');
    guard.release('model', 'b');
    // Admitted again before the sweep: live, not forgotten.
    expect(guard.value('model', ' b ')).toBe('b');
    guard.retain('model', 'b');
    const before = guard.generation;
    guard.sweep(1000, 60);
    expect(guard.generation).toBe(before + 1);
    expect([...guard.cachedSpellings('model')].sort()).toEqual([' b ', 'b', 'c']);
    expect(guard.admittedCount('model')).toBe(2);
    guard.sweep(2000, 60);
    expect(guard.generation).toBe(before + 1);
  });

  it('never hands out a released value the cap no longer counts: between its release and the sweep it is admitted afresh, or folded', () => {
    const { guard, folds } = guardWith({ model: { cap: 1 } });
    guard.retain('model', guard.value('model', 'a'));
    guard.release('model', 'a');
    expect(guard.admittedCount('model')).toBe(0);
    // Its spelling is still cached: a new series for it takes the free slot again.
    expect(guard.value('model', 'a')).toBe('a');
    expect(guard.admittedCount('model')).toBe(1);
    guard.retain('model', 'a');
    guard.release('model', 'a');
    // Another value took the slot first: the released one folds, however it was cached.
    expect(guard.value('model', 'b')).toBe('b');
    guard.retain('model', 'b');
    expect(guard.value('model', 'a')).toBe('other');
    expect(guard.admittedCount('model')).toBe(1);
    expect(folds).toEqual(['model']);
  });

  it('forgets a value admitted without a series once it has gone unused for the TTL', () => {
    const { guard } = guardWith();
    expect(guard.value('model', 'folded-away')).toBe('folded-away');
    const before = guard.generation;
    guard.sweep(1000, 60);
    guard.sweep(1059, 60);
    expect(guard.admittedCount('model')).toBe(1);
    expect(guard.generation).toBe(before);
    guard.sweep(1060, 60);
    expect(guard.admittedCount('model')).toBe(0);
    expect(guard.cachedSpellings('model')).toEqual([]);
    expect(guard.generation).toBe(before + 1);
  });
});

describe('LabelGuard memory: raw spellings are cut to the byte limit and the cache is bounded', () => {
  const counting = () => {
    const counts = { folds: 0, cut: 0, evicted: 0 };
    const metrics = {
      labelOverflow: { inc: () => void (counts.folds += 1) },
      labelValuesCut: { inc: () => void (counts.cut += 1) },
      labelCacheEvictions: { inc: () => void (counts.evicted += 1) },
    };
    return { counts, metrics };
  };

  /** A fresh flat 64 KiB string (as JSON.parse makes them), equal to the others but for its last digits. */
  const spelling = (index: number): string => {
    const bytes = Buffer.alloc(64 * 1024, 'm');
    bytes.write(String(index).padStart(8, '0'), bytes.length - 8, 'latin1');
    return bytes.toString('latin1');
  };

  const collectGarbage = (): (() => void) => {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  };

  it('8,064 distinct 64 KiB spellings of one model leave under 4 MiB of live heap, each cut and counted', () => {
    const gc = collectGarbage();
    const { counts, metrics } = counting();
    const guard = new LabelGuard(defaultLabelRules(), metrics);
    gc();
    const before = process.memoryUsage().heapUsed;
    const exported = new Set<string>();
    for (let index = 0; index < 8_064; index += 1) exported.add(guard.value('model', spelling(index)));
    gc();
    const retained = process.memoryUsage().heapUsed - before;
    expect(retained).toBeLessThan(4 * 1024 * 1024);
    expect(exported).toEqual(new Set(['m'.repeat(128)]));
    expect(counts.cut).toBe(8_064);
    const cached = guard.cachedSpellings('model');
    expect(cached.length).toBe(1);
    expect(cached.every((raw) => Buffer.byteLength(raw) <= DEFAULT_MAX_RAW_LABEL_BYTES)).toBe(true);
  });

  it('keeps at most spellingCapacity(cap) spellings, evicting the least recently used and counting each eviction', () => {
    const { counts, metrics } = counting();
    const guard = new LabelGuard({ ...defaultLabelRules(), tool: { cap: 4 } }, metrics);
    const capacity = spellingCapacity(4);
    // Spellings that differ only in trailing whitespace all export `terminal`.
    const spellings = Array.from({ length: capacity + 50 }, (_, index) => `terminal${' '.repeat(index + 1)}`);
    guard.value('tool', 'terminal');
    for (const raw of spellings) {
      expect(guard.value('tool', raw)).toBe('terminal');
      // The hot spelling is used between every new one: the clock keeps it.
      expect(guard.value('tool', 'terminal')).toBe('terminal');
    }
    expect(guard.cachedSpellings('tool').length).toBe(capacity);
    expect(guard.cachedSpellings('tool')).toContain('terminal');
    expect(counts.evicted).toBe(spellings.length + 1 - capacity);
    expect(counts.folds).toBe(0);
  });

  it('an evicted spelling resolves to the same value when it returns', () => {
    const { metrics } = counting();
    const guard = new LabelGuard({ ...defaultLabelRules(), model: { cap: 1 } }, metrics);
    expect(guard.value('model', ' m ')).toBe('m');
    for (let index = 0; index < spellingCapacity(1) * 2; index += 1) guard.value('model', `m${' '.repeat(index + 2)}`);
    expect(guard.cachedSpellings('model')).not.toContain(' m ');
    expect(guard.value('model', ' m ')).toBe('m');
    expect(guard.value('model', 'n')).toBe('other');
  });

  it('closed labels answer other for a value longer than any closed value, without trimming it', () => {
    expect(closedLabel(new Set(['ok']), ` ${'x'.repeat(64 * 1024)} `)).toBe('other');
    expect(closedLabel(new Set(['ok']), `${' '.repeat(200)}ok`)).toBe('ok');
  });
});
