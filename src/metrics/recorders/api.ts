/** Provider API calls: pre/post_api_request, api_request_error and the auxiliary variants. */
import type { ApiCall, EventData, Usage } from '../../contract/events.js';
import { UNKNOWN } from '../labels.js';
import type { Metrics } from '../registry.js';
import { compositeKey, spanTable, type RecorderContext } from './context.js';

type Succeeded = Extract<EventData, { type: 'api_attempt_succeeded' }>;
type Failed = Extract<EventData, { type: 'api_attempt_failed' }>;

interface CallLabels {
  readonly kind: string;
  readonly provider: string;
  readonly model: string;
}

interface OpenAttempt {
  readonly kind: string;
  readonly provider: string;
}

const TOKEN_TYPES: readonly [keyof Usage, string][] = [
  ['input', 'input'],
  ['cacheRead', 'cache_read'],
  ['cacheWrite', 'cache_write'],
  ['output', 'output'],
  ['reasoning', 'reasoning'],
];

function retryableLabel(retryable: boolean | undefined): string {
  return retryable === undefined ? UNKNOWN : String(retryable);
}

/**
 * After a failed attempt Hermes retries when the classifier says retryable and attempts remain;
 * otherwise the logical call ends. Without the fields, neither can be told.
 */
function retryVerdict(event: Failed): 'retried' | 'exhausted' | undefined {
  const { retryable, retryCount, maxRetries } = event;
  const outOfAttempts = retryCount !== undefined && maxRetries !== undefined && retryCount >= maxRetries;
  if (retryable === false || outOfAttempts) return 'exhausted';
  if (retryable === true && retryCount !== undefined && maxRetries !== undefined) return 'retried';
  return undefined;
}

export class ApiRecorder {
  private readonly metrics: Metrics;
  // Keyed by kind and api_request_id: retries reuse the id, and a post/error closes the open attempt.
  private readonly inFlight;

  constructor(private readonly context: RecorderContext) {
    this.metrics = context.metrics;
    this.inFlight = spanTable<OpenAttempt>(context, 'api', (attempt) =>
      this.metrics.apiRequestsInFlight.dec(attempt),
    );
  }

  started(call: ApiCall): void {
    if (call.requestId === undefined) return;
    const attempt = { kind: call.kind, provider: this.context.labels.value('provider', call.provider) };
    this.metrics.apiRequestsInFlight.inc(attempt);
    this.inFlight.open(compositeKey(call.kind, call.requestId), attempt);
  }

  succeeded(event: Succeeded): void {
    const labels = this.finish(event.call);
    const outcome = { ...labels, outcome: 'success' };
    this.metrics.apiRequests.inc(outcome);
    if (event.durationSeconds !== undefined) this.metrics.apiRequestDuration.observe(outcome, event.durationSeconds);
    if (event.timeToFirstChunkSeconds !== undefined) {
      this.metrics.apiTimeToFirstChunk.observe(labels, event.timeToFirstChunkSeconds);
    }
    this.metrics.apiFinishReasons.inc({
      ...labels,
      finish_reason: this.context.labels.value('finish_reason', event.finishReason),
    });
    if (event.usage !== undefined) this.recordUsage(labels, event.usage);
  }

  failed(event: Failed): void {
    const labels = this.finish(event.call);
    const outcome = { ...labels, outcome: 'error' };
    this.metrics.apiRequests.inc(outcome);
    if (event.durationSeconds !== undefined) this.metrics.apiRequestDuration.observe(outcome, event.durationSeconds);
    const reason = this.context.labels.value('reason', event.reason);
    this.metrics.apiErrors.inc({
      ...labels,
      reason,
      status_code: this.context.labels.value('status_code', event.statusCode === undefined ? 'none' : String(event.statusCode)),
      retryable: retryableLabel(event.retryable),
    });
    const verdict = retryVerdict(event);
    if (verdict === 'retried') this.metrics.apiRetries.inc({ ...labels, reason });
    if (verdict === 'exhausted') this.metrics.apiRetriesExhausted.inc({ ...labels, reason });
  }

  /** Closes the open attempt (if its pre event was seen) and returns the call's labels. */
  private finish(call: ApiCall): CallLabels {
    if (call.requestId !== undefined) {
      const open = this.inFlight.close(compositeKey(call.kind, call.requestId));
      if (open !== undefined) this.metrics.apiRequestsInFlight.dec(open.value);
    }
    return {
      kind: call.kind,
      provider: this.context.labels.value('provider', call.provider),
      model: this.context.labels.value('model', call.model),
    };
  }

  private recordUsage(labels: CallLabels, usage: Usage): void {
    // One label object for the five types: families copy what they keep, so reusing it is safe
    // and saves an allocation per type on the hottest path.
    const typed = { ...labels, type: '' };
    for (const [field, type] of TOKEN_TYPES) {
      const tokens = usage[field];
      if (tokens === undefined) continue;
      typed.type = type;
      this.metrics.tokens.inc(typed, tokens);
    }
    if (usage.prompt !== undefined) this.metrics.apiPromptTokens.observe(labels, usage.prompt);
  }
}
