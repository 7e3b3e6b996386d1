/**
 * Plausible bounds of event values. A value outside its bound is treated as absent, like a value
 * of the wrong type, and reported by field (hermes_sidecar_values_rejected_total{field}): the
 * event itself still counts. Bounds are far above anything real (a 100M-token call, a week-long
 * tool call) and far below what could make a counter or a sum leave the finite range, or hide
 * real samples: summed for billions of events, bounded values stay finite. Strings are bounded
 * in bytes the same way (StringLimits): a longer id or name is absent and counted by field.
 */
import { DEFAULT_MAX_RAW_LABEL_BYTES, fitsBytes } from '../wireText.js';
import { VALUES, type ValueOf } from './vocabulary.js';

/** The fields with a bound: the `field` label of hermes_sidecar_values_rejected_total. */
export const BOUNDED_FIELDS = VALUES.bounded_field;
export type BoundedField = ValueOf<'bounded_field'>;

const DAY_SECONDS = 86_400;

export const BOUNDS = {
  /** Tokens of one type in one provider call. */
  tokens: 1e8,
  /** Any duration a sender reports: API, tool, turn, subagent, run. */
  durationSeconds: 7 * DAY_SECONDS,
  sizeBytes: 2 ** 30,
  /** A plugin instance's cumulative drop count for one hook and reason. */
  droppedTotal: 1e12,
  retryCount: 1000,
  statusCode: { min: 100, max: 599 },
  intervalSeconds: 3600,
  ackedSeq: Number.MAX_SAFE_INTEGER,
  /** Latest plausible observed_at (2100-01-01); a later one is replaced by the arrival time. */
  observedAtEpochSeconds: 4_102_444_800,
  /** Hermes' price of one provider call: a 100M-token call at the dearest list price costs far less. */
  costUsd: 1e6,
} as const;

/**
 * Byte limits of client strings, applied as each one is read, before anything stores or hashes
 * it: a longer id or name counts as absent (values_rejected_total{field}). Real Hermes ids are
 * tens of bytes (session `20260920_141203_9f3c2a`, tool call `call_…`, plugin instance 32 hex
 * digits); names that become labels are cut to 128 characters by the label guard anyway.
 */
export interface StringLimits {
  /** Ids: session, turn, request, tool call, subagent session, approval session key, plugin instance, delivery. */
  readonly maxIdBytes: number;
  /** Names that become label values (provider, model, tool, reason, …), before sanitizing. */
  readonly maxLabelValueBytes: number;
}

/** Defaults of --ingest.max-id-bytes and --ingest.max-label-value-bytes. */
export const DEFAULT_STRING_LIMITS: StringLimits = { maxIdBytes: 256, maxLabelValueBytes: DEFAULT_MAX_RAW_LABEL_BYTES };

const NONE: readonly BoundedField[] = [];

/**
 * Checks values against their bounds while an event is read (contract/events.ts), collecting
 * the fields that failed. Readers bound each value as they read it, so an event's data is built
 * once, already within bounds.
 */
export class BoundCheck {
  private rejected: BoundedField[] | undefined;

  constructor(private readonly limits: StringLimits = DEFAULT_STRING_LIMITS) {}

  get maxIdBytes(): number {
    return this.limits.maxIdBytes;
  }

  /** The value when within [min, max]; undefined (and the field recorded) otherwise. */
  keep<T extends number | undefined>(value: T, field: BoundedField, max: number, min = 0): T | undefined {
    if (value === undefined || (value >= min && value <= max)) return value;
    (this.rejected ??= []).push(field);
    return undefined;
  }

  duration(seconds: number | undefined): number | undefined {
    return this.keep(seconds, 'duration', BOUNDS.durationSeconds);
  }

  tokens(tokens: number | undefined): number | undefined {
    return this.keep(tokens, 'tokens', BOUNDS.tokens);
  }

  cost(usd: number | undefined): number | undefined {
    return this.keep(usd, 'cost_usd', BOUNDS.costUsd);
  }

  /** An id within --ingest.max-id-bytes; undefined (and the field recorded) when longer. */
  id(value: string | undefined, field: BoundedField): string | undefined {
    return this.fits(value, field, this.limits.maxIdBytes);
  }

  /** A name that becomes a label value, within --ingest.max-label-value-bytes; undefined (recorded) when longer. */
  text(value: string | undefined, field: BoundedField): string | undefined {
    return this.fits(value, field, this.limits.maxLabelValueBytes);
  }

  private fits(value: string | undefined, field: BoundedField, maxBytes: number): string | undefined {
    if (value === undefined || fitsBytes(value, maxBytes)) return value;
    (this.rejected ??= []).push(field);
    return undefined;
  }

  /** The sender's observation time within its bound, else the arrival time (see boundedObservedAt). */
  observedAt(stamped: number | undefined, arrivedAt: number): number {
    const observed = boundedObservedAt(stamped, arrivedAt);
    if (observed.rejected) (this.rejected ??= []).push('observed_at');
    return observed.at;
  }

  /** The fields whose values were out of bounds, in the order they were read. */
  get fields(): readonly BoundedField[] {
    return this.rejected ?? NONE;
  }

  /** The fields so far, and a fresh start: one check serves every line of a body. */
  take(): readonly BoundedField[] {
    const fields = this.rejected ?? NONE;
    this.rejected = undefined;
    return fields;
  }
}

/**
 * The sender's observation time, or the arrival time when it sent none or an implausible one.
 * Observation times are not compared with the arrival time: replayed fixtures and buffered
 * events carry old ones. Durations computed from two of them are bounded where they are
 * computed (durationBetween).
 */
export function boundedObservedAt(stamped: number | undefined, arrivedAt: number): { at: number; rejected: boolean } {
  if (stamped === undefined) return { at: arrivedAt, rejected: false };
  return stamped <= BOUNDS.observedAtEpochSeconds ? { at: stamped, rejected: false } : { at: arrivedAt, rejected: true };
}

/**
 * A duration between two sender timestamps (0 when they are out of order), or undefined when it
 * is longer than any duration a sender may report: such a value is absent, and the caller
 * counts it (values_rejected_total{field="duration"}).
 */
export function durationBetween(startedAt: number, endedAt: number): number | undefined {
  const seconds = Math.max(0, endedAt - startedAt);
  return seconds <= BOUNDS.durationSeconds ? seconds : undefined;
}
