/** What a provider call's usage says, read the same way by the API and session recorders. */
import type { Usage } from '../../contract/events.js';
import type { ValueOf } from '../../contract/vocabulary.js';

/** Each usage field and the token_type it is counted under. */
export const TOKEN_TYPES: readonly [keyof Usage, ValueOf<'token_type'>][] = [
  ['input', 'input'],
  ['cacheRead', 'cache_read'],
  ['cacheWrite', 'cache_write'],
  ['output', 'output'],
  ['reasoning', 'reasoning'],
];

/** The whole prompt (OpenTelemetry's input tokens): the reported total, else the sum of its parts. */
export function promptTokens(usage: Usage): number | undefined {
  if (usage.prompt !== undefined) return usage.prompt;
  if (usage.input === undefined && usage.cacheRead === undefined && usage.cacheWrite === undefined) return undefined;
  return (usage.input ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0);
}
