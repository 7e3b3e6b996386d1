/**
 * Plausible bounds of event values. A value outside its bound is treated as absent, like a value
 * of the wrong type, and reported by field (hermes_sidecar_values_rejected_total{field}): the
 * event itself still counts. Bounds are far above anything real (a 100M-token call, a week-long
 * tool call) and far below what could make a counter or a sum leave the finite range, or hide
 * real samples: summed for billions of events, bounded values stay finite.
 */
import { readEventData, type EventData, type Usage } from './events.js';
import type { Fields } from './fields.js';
import { VALUES, type ValueOf } from '../metrics/catalogue.js';

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
} as const;

/** The data of one event with out-of-bound values removed, and which fields they were. */
export interface BoundedData {
  readonly data: EventData;
  readonly rejected: readonly BoundedField[];
}

const NONE: readonly BoundedField[] = [];

/** Checks values against their bounds, collecting the fields that failed. */
class Checker {
  rejected: BoundedField[] | undefined;

  keep<T extends number | undefined>(value: T, field: BoundedField, max: number, min = 0): T | undefined {
    if (value === undefined || (value >= min && value <= max)) return value;
    (this.rejected ??= []).push(field);
    return undefined;
  }

  get fields(): readonly BoundedField[] {
    return this.rejected ?? NONE;
  }
}

function boundUsage(usage: Usage | undefined, check: Checker): Usage | undefined {
  if (usage === undefined) return undefined;
  const tokens = (value: number | undefined) => check.keep(value, 'tokens', BOUNDS.tokens);
  return {
    input: tokens(usage.input),
    cacheRead: tokens(usage.cacheRead),
    cacheWrite: tokens(usage.cacheWrite),
    output: tokens(usage.output),
    reasoning: tokens(usage.reasoning),
    prompt: tokens(usage.prompt),
  };
}

function boundData(data: EventData, check: Checker): EventData {
  const duration = (value: number | undefined) => check.keep(value, 'duration', BOUNDS.durationSeconds);
  switch (data.type) {
    case 'api_attempt_succeeded':
      return {
        ...data,
        durationSeconds: duration(data.durationSeconds),
        timeToFirstChunkSeconds: check.keep(data.timeToFirstChunkSeconds, 'time_to_first_chunk', BOUNDS.durationSeconds),
        usage: boundUsage(data.usage, check),
      };
    case 'api_attempt_failed':
      return {
        ...data,
        durationSeconds: duration(data.durationSeconds),
        statusCode: check.keep(data.statusCode, 'status_code', BOUNDS.statusCode.max, BOUNDS.statusCode.min),
        retryCount: check.keep(data.retryCount, 'retry_count', BOUNDS.retryCount),
        maxRetries: check.keep(data.maxRetries, 'retry_count', BOUNDS.retryCount),
      };
    case 'turn_ended':
    case 'tool_finished':
    case 'subagent_stopped':
    case 'agent_run_finished':
      return { ...data, durationSeconds: duration(data.durationSeconds) };
    case 'memory_written':
      return { ...data, sizeBytes: check.keep(data.sizeBytes, 'size_bytes', BOUNDS.sizeBytes) };
    case 'plugin_heartbeat':
      return {
        ...data,
        intervalSeconds: check.keep(data.intervalSeconds, 'interval', BOUNDS.intervalSeconds),
        ackedSeq: check.keep(data.ackedSeq, 'acked_seq', BOUNDS.ackedSeq),
        dropped: data.dropped.filter((report) => check.keep(report.total, 'dropped_total', BOUNDS.droppedTotal) !== undefined),
      };
    default:
      return data;
  }
}

/** The event's data as readEventData reads it, with every value within its bound. */
export function readBoundedEventData(name: string, fields: Fields): BoundedData {
  const check = new Checker();
  const data = boundData(readEventData(name, fields), check);
  return { data, rejected: check.fields };
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
