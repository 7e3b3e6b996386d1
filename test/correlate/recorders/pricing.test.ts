/** How a call's cost is found: Hermes' price first, then the config price table, never a guess. */
import { describe, expect, it } from 'vitest';
import { costOf, priceUsage, PriceTable } from '../../../src/correlate/recorders/pricing.js';

const TABLE = new PriceTable([{ provider: 'OpenRouter', model: 'gpt-x', input: 2, output: 8, cacheRead: 0.5 }]);
const CALL = { provider: 'openrouter', model: 'gpt-x' };

describe('PriceTable', () => {
  it('finds a provider case-insensitively and a model exactly', () => {
    expect(TABLE.size).toBe(1);
    expect(TABLE.lookup('OPENROUTER', 'gpt-x')?.input).toBe(2);
    expect(TABLE.lookup('openrouter', 'GPT-X')).toBeUndefined();
    expect(TABLE.lookup(undefined, 'gpt-x')).toBeUndefined();
    expect(new PriceTable().lookup('openrouter', 'gpt-x')).toBeUndefined();
  });
});

describe('priceUsage', () => {
  it('sums each token type at its price per million', () => {
    expect(priceUsage({ input: 1_000_000, output: 500_000, cacheRead: 2_000_000 }, { input: 2, output: 8, cacheRead: 0.5 })).toBe(7);
  });

  it('refuses to price tokens of a type that has no price, and ignores zero counts of it', () => {
    expect(priceUsage({ input: 10, cacheWrite: 5 }, { input: 2, output: 8 })).toBeUndefined();
    expect(priceUsage({ input: 1_000_000, cacheWrite: 0 }, { input: 2, output: 8 })).toBe(2);
  });
});

describe('costOf', () => {
  it("takes Hermes' own price over the table, and an included route as 0", () => {
    expect(costOf(CALL, { input: 1_000_000 }, { usd: 0.25, status: 'actual' }, TABLE)).toEqual({ priced: true, pricing: 'hermes', usd: 0.25 });
    expect(costOf(CALL, { input: 1_000_000 }, { status: 'included' }, TABLE)).toEqual({ priced: true, pricing: 'included', usd: 0 });
  });

  it('prices from the table when Hermes did not, and says why a call stays unpriced', () => {
    expect(costOf(CALL, { input: 1_000_000, output: 1_000_000 }, undefined, TABLE)).toEqual({ priced: true, pricing: 'config', usd: 10 });
    expect(costOf(CALL, undefined, undefined, TABLE)).toEqual({ priced: false, reason: 'no_usage' });
    expect(costOf({ provider: 'other', model: 'gpt-x' }, { input: 1 }, undefined, TABLE)).toEqual({ priced: false, reason: 'no_price' });
    expect(costOf(CALL, { input: 1, cacheWrite: 1 }, undefined, TABLE)).toEqual({ priced: false, reason: 'no_price' });
  });
});
