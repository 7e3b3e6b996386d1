/**
 * Logical provider calls that already had a failed attempt. Hermes stamps every attempt of one
 * logical call with the call's start: agent/conversation_loop.py sets `api_start_time` once, before
 * its retry loop, and passes it as `started_at` to pre_api_request, api_request_error and (through
 * agent/turn_response_intake.py) post_api_request; `api_request_id` is fixed there too. So
 * `first_chunk_at − started_at` of any attempt after a failed one also spans the earlier attempts
 * and their backoff: only the first attempt of a call to end measures a time to first chunk.
 */
import { SpanTable } from '../spans.js';
import type { SpanTableContext } from './spanTables.js';

export class RetriedCalls {
  private readonly marked: SpanTable<true>;

  constructor(context: SpanTableContext) {
    this.marked = new SpanTable<true>({
      clock: context.clock,
      ttlSeconds: context.spans.ttlSeconds,
      maxEntries: context.spans.maxEntries,
      maxBytes: context.spans.maxBytes,
      // A mark that ages out is a call that ended long ago, not a lost span: only evictions count.
      onOrphan: (_value, cause) => {
        if (cause === 'evicted') context.evicted('api_attempts');
      },
    });
    context.track(this.marked);
  }

  /** Records a failed attempt of the call; true when an earlier attempt had failed already. */
  failed(callKey: string): boolean {
    if (this.marked.get(callKey) !== undefined) {
      this.marked.touch(callKey);
      return true;
    }
    this.marked.open(callKey, true);
    return false;
  }

  /** The call succeeded, so it is over; true when an earlier attempt of it had failed. */
  succeeded(callKey: string): boolean {
    return this.marked.close(callKey) !== undefined;
  }
}
