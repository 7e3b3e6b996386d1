/**
 * Submitting a decoded batch: per-line rejections counted, the batch handed to the ingestor, and
 * the 202 answered once it is applied, so a 202 always means "counted".
 */
import type { Response } from 'express';
import type { DecodedBody } from '../contract/decode.js';
import { SidecarError } from '../errors.js';
import { histogram, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';
import type { Families } from '../metrics/registry.js';
import type { Rejections } from './errors.js';
import type { Ingestor } from './ingestor.js';

/** The families this module writes (and all it is handed). */
export const SUBMISSION_FAMILIES = {
  ingestBatchEvents: fed(histogram('hermes_sidecar_ingest_batch_events', {}, 'batch_events', 'self',
    'Events (lines) per ingest request.'),
    'sidecar', 'ingest'),
} as const satisfies Declarations;

/** At most this many per-line errors are listed in a 202 body; the counts are always exact. */
const MAX_LISTED_ERRORS = 100;

/** A request answered 202 with some lines rejected: counts per reason, never the lines. */
export interface RejectedLines {
  readonly route: string;
  readonly lines: number;
  readonly accepted: number;
  readonly rejected: Readonly<Record<string, number>>;
}

/** What a submission needs. */
export interface SubmissionOptions {
  readonly metrics: Families<typeof SUBMISSION_FAMILIES>;
  readonly rejections: Rejections;
  readonly ingestor: Ingestor;
  /** For the debug log. */
  readonly onRejectedLines?: (rejected: RejectedLines) => void;
}

function reportRejectedLines(options: SubmissionOptions, decoded: DecodedBody, route: string): void {
  if (decoded.errors.length === 0 || options.onRejectedLines === undefined) return;
  const rejected: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const error of decoded.errors) rejected[error.reason] = (rejected[error.reason] ?? 0) + 1;
  options.onRejectedLines({ route, lines: decoded.lines, accepted: decoded.events.length, rejected });
}

/** Answers 202 with what was accepted and which lines were not. */
function acceptedBody(decoded: DecodedBody): object {
  return {
    accepted: decoded.events.length,
    rejected: decoded.errors.length,
    errors: decoded.errors.slice(0, MAX_LISTED_ERRORS),
  };
}

/**
 * Submits decoded events and answers 202 once they are applied, so a 202 always means
 * "counted": a sidecar killed after answering cannot lose what it acknowledged.
 */
export async function submitDecoded(options: SubmissionOptions, decoded: DecodedBody, response: Response): Promise<void> {
  options.rejections.lines(decoded.errors);
  reportRejectedLines(options, decoded, response.req.path);
  options.metrics.ingestBatchEvents.observe({}, decoded.lines);
  const admission = options.ingestor.submit(decoded.events);
  if (admission.refused !== undefined) throw new SidecarError(admission.refused);
  await admission.applied;
  response.status(202).json(acceptedBody(decoded));
}
