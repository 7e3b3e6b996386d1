import { describe, expect, it } from 'vitest';
import { closedLabel, defaultLabelRules, LabelGuard, sanitizeLabelValue, type OpenLabel } from '../../src/metrics/labels.js';

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
});
