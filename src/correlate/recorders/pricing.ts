/**
 * Cost of one finished API call in USD, and how it was priced.
 *
 * Hermes' own price comes first: the plugin asks agent.usage_pricing.estimate_usage_cost (the
 * numbers Hermes shows its users) and sends cost_usd / cost_status. A route Hermes reports as
 * `included` (a subscription) costs 0. Otherwise the operator's price table from the config file
 * prices the call per million tokens. A call neither can price is counted as unpriced with why,
 * never guessed: a token type with tokens but no price in the table leaves the call unpriced.
 */
import type { HermesCost, Usage } from '../../contract/events.js';

/** The closed value sets of this module's labels. */
export const PRICING_VALUES = {
  /** How a call's cost was priced: Hermes' own pricing, the config price table, a subscription route. */
  pricing: ['hermes', 'config', 'included'],
  /** Why a successful call has no cost. */
  unpriced_reason: ['no_usage', 'no_price'],
} as const satisfies Record<string, readonly string[]>;

/** USD per million tokens of one provider/model. Output covers reasoning tokens (a subset of output). */
export interface TokenPrices {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number | undefined;
  readonly cacheWrite?: number | undefined;
}

export interface PriceEntry extends TokenPrices {
  readonly provider: string;
  readonly model: string;
}

type Pricing = (typeof PRICING_VALUES)['pricing'][number];
type UnpricedReason = (typeof PRICING_VALUES)['unpriced_reason'][number];

export type CallCost =
  | { readonly priced: true; readonly pricing: Pricing; readonly usd: number }
  | { readonly priced: false; readonly reason: UnpricedReason };

const PER_MILLION = 1_000_000;

/** Providers compare case-insensitively, as their labels do; models exactly. */
const entryKey = (provider: string, model: string): string => `${provider.length}:${provider.toLowerCase()}${model}`;

export class PriceTable {
  private readonly entries: ReadonlyMap<string, TokenPrices>;

  constructor(entries: readonly PriceEntry[] = []) {
    this.entries = new Map(entries.map((entry) => [entryKey(entry.provider, entry.model), entry]));
  }

  get size(): number {
    return this.entries.size;
  }

  lookup(provider: string | undefined, model: string | undefined): TokenPrices | undefined {
    if (provider === undefined || model === undefined || this.entries.size === 0) return undefined;
    return this.entries.get(entryKey(provider, model));
  }
}

/** USD of the usage at these prices; undefined when a token type that has tokens has no price. */
export function priceUsage(usage: Usage, prices: TokenPrices): number | undefined {
  const parts: [number | undefined, number | undefined][] = [
    [usage.input, prices.input],
    [usage.output, prices.output],
    [usage.cacheRead, prices.cacheRead],
    [usage.cacheWrite, prices.cacheWrite],
  ];
  let micro = 0;
  for (const [tokens, perMillion] of parts) {
    if (tokens === undefined || tokens === 0) continue;
    if (perMillion === undefined) return undefined;
    micro += tokens * perMillion;
  }
  return micro / PER_MILLION;
}

// The outcomes that carry no amount, built once: every unpriced call would otherwise allocate one.
const INCLUDED: CallCost = { priced: true, pricing: 'included', usd: 0 };
const NO_USAGE: CallCost = { priced: false, reason: 'no_usage' };
const NO_PRICE: CallCost = { priced: false, reason: 'no_price' };

export function costOf(
  call: { readonly provider: string | undefined; readonly model: string | undefined },
  usage: Usage | undefined,
  hermes: HermesCost | undefined,
  table: PriceTable,
): CallCost {
  if (hermes?.status === 'included') return INCLUDED;
  if (hermes?.usd !== undefined) return { priced: true, pricing: 'hermes', usd: hermes.usd };
  if (usage === undefined) return NO_USAGE;
  const prices = table.lookup(call.provider, call.model);
  const usd = prices === undefined ? undefined : priceUsage(usage, prices);
  return usd === undefined ? NO_PRICE : { priced: true, pricing: 'config', usd };
}
