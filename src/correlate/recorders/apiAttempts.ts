/**
 * What a provider API attempt's event says beyond its labels: the call's exemplar and table key,
 * whether its failure was retryable, and whether Hermes retries the call after it.
 */
import type { ApiCall, EventData } from '../../contract/events.js';
import type { ValueOf } from '../../contract/vocabulary.js';
import type { Exemplar } from '../../metrics/registry.js';
import { exemplarOf } from '../../metrics/exemplars.js';
import { UNKNOWN } from '../../wireText.js';
import { compositeKey } from './context.js';

type Failed = Extract<EventData, { type: 'api_attempt_failed' }>;

/** The call's content-free ids as an exemplar of its duration (the API hooks carry no session_id). */
export function callExemplar(call: ApiCall, seconds: number, observedAt: number): Exemplar | undefined {
  return exemplarOf([['api_request_id', call.requestId], ['turn_id', call.turnId]], seconds, observedAt);
}

/** The key of a call's attempts in the in-flight and retried tables (built once per event; undefined without an id). */
export const callKeyOf = (call: ApiCall): string | undefined => (call.requestId === undefined ? undefined : compositeKey(call.kind, call.requestId));

/** The `retryable` label of a failed attempt: unknown when Hermes did not say. */
export function retryableLabel(retryable: boolean | undefined): ValueOf<'retryable'> | typeof UNKNOWN {
  if (retryable === undefined) return UNKNOWN;
  return retryable ? 'true' : 'false';
}

/**
 * After a failed attempt Hermes retries when the classifier says retryable and attempts remain;
 * otherwise the logical call ends. Without the fields, neither can be told.
 */
export function retryVerdict(event: Failed): 'retried' | 'exhausted' | undefined {
  const { retryable, retryCount, maxRetries } = event;
  const outOfAttempts = retryCount !== undefined && maxRetries !== undefined && retryCount >= maxRetries;
  if (retryable === false || outOfAttempts) return 'exhausted';
  if (retryable === true && retryCount !== undefined && maxRetries !== undefined) return 'retried';
  return undefined;
}
