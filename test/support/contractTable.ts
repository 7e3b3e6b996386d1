/** The plugin's contract table (plugin/hermes_prometheus_bridge/contract.json), as the contract tests read it. */
import { readFileSync } from 'node:fs';

/** What one field, hook or heartbeat entry declares; `F` is the shape a test needs of a field. */
export interface HookEntry<F = unknown> {
  readonly metrics?: readonly string[];
  readonly fields: Readonly<Record<string, F>>;
  readonly added?: Readonly<Record<string, F>>;
}

export interface ContractTable<F = unknown> {
  readonly usage_keys: readonly string[];
  readonly usage_flags: Readonly<Record<string, readonly string[]>>;
  readonly hooks: Readonly<Record<string, HookEntry<F>>>;
  readonly observer: Readonly<Record<string, HookEntry<F>>>;
  readonly heartbeat: { readonly event: string; readonly fields: Readonly<Record<string, F>> };
}

export function readContractTable<F = unknown>(): ContractTable<F> {
  return JSON.parse(readFileSync(new URL('../../plugin/hermes_prometheus_bridge/contract.json', import.meta.url), 'utf8')) as ContractTable<F>;
}
