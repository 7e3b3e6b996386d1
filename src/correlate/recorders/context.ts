/** What every recorder is built from: the label guard, the clock, the limits of its tables and the counters they share. */
import type { LabelGuard } from '../../metrics/labels.js';
import type { PriceTable } from './pricing.js';
import type { ValueOf } from '../../contract/vocabulary.js';
import type { SpanTableContext } from './spanTables.js';

// api.ts still imports these from here; once it imports them from their modules these lines go.
export { spanTable } from './spanTables.js';
export { compositeKey } from '../idMap.js';

export type { Sweepable } from '../spans.js';

export interface RecorderContext extends SpanTableContext {
  readonly labels: LabelGuard;
  readonly sessionTtlSeconds: number;
  /** Byte budget of the session table. */
  readonly sessionMaxBytes: number;
  /** The operator's prices, for calls Hermes did not price. */
  readonly prices: PriceTable;
  /** Counts a value out of its bound (a duration between two sender timestamps, say). */
  readonly valueRejected: (field: ValueOf<'bounded_field'>) => void;
}
