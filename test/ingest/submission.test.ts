/**
 * Submitting a decoded batch: rejected lines counted by reason and listed (at most 100) in the
 * 202, the batch size observed, the batch refused with its code, and the 202 sent only once the
 * batch is applied.
 */
import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { DecodedBody, LineError } from '../../src/contract/decode.js';
import type { ObserverEvent } from '../../src/contract/events.js';
import { SidecarError } from '../../src/errors.js';
import { REJECTION_FAMILIES, Rejections } from '../../src/ingest/errors.js';
import type { Ingestor } from '../../src/ingest/ingestor.js';
import { SUBMISSION_FAMILIES, submitDecoded, type RejectedLines } from '../../src/ingest/submission.js';
import { familiesFor } from '../../src/metrics/registry.js';
import { series } from '../support/exposition.js';
import { recorderHarness } from '../support/recorders.js';

const EVENT: ObserverEvent = { name: 'pre_tool_call', source: 'plugin', observedAt: 1, data: { type: 'ignored' }, rejectedValues: [] };

function setup(admission: () => ReturnType<Ingestor['submit']>) {
  const harness = recorderHarness();
  const submitted: (readonly ObserverEvent[])[] = [];
  const reported: RejectedLines[] = [];
  const ingestor = { submit: (events: readonly ObserverEvent[]) => (submitted.push(events), admission()) } as unknown as Ingestor;
  const options = {
    metrics: familiesFor(harness.metrics, SUBMISSION_FAMILIES),
    rejections: new Rejections(familiesFor(harness.metrics, REJECTION_FAMILIES)),
    ingestor,
    onRejectedLines: (rejected: RejectedLines) => reported.push(rejected),
  };
  const app = express();
  let decoded: DecodedBody = { events: [], errors: [], lines: 0 };
  app.post('/v1/events', async (_req, res, next) => {
    try {
      await submitDecoded(options, decoded, res);
    } catch (error) {
      next(error);
    }
  });
  const handler: ErrorRequestHandler = (error, _req, res, _next) => {
    const failure = error instanceof SidecarError ? error : new SidecarError('internal');
    res.status(failure.status).json({ error: failure.code });
  };
  app.use(handler);
  return {
    harness,
    submitted,
    reported,
    post: (body: DecodedBody) => {
      decoded = body;
      return request(app).post('/v1/events');
    },
  };
}

const errors = (count: number, reason: LineError['reason']): LineError[] => Array.from({ length: count }, (_, index) => ({ index, reason }));

describe('submitDecoded', () => {
  it('answers 202 with the counts and the first 100 line errors, counting each rejected line', async () => {
    const { harness, submitted, reported, post } = setup(() => ({ refused: undefined, applied: Promise.resolve() }));
    const lineErrors = [...errors(101, 'invalid_event'), { index: 200, reason: 'invalid_json' as const }];
    const answer = await post({ events: [EVENT, EVENT], errors: lineErrors, lines: 104 });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ accepted: 2, rejected: 102, errors: lineErrors.slice(0, 100) });
    expect(submitted).toEqual([[EVENT, EVENT]]);
    expect(reported).toEqual([{ route: '/v1/events', lines: 104, accepted: 2, rejected: { invalid_event: 101, invalid_json: 1 } }]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'invalid_event' }))).toBe(101);
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'invalid_json' }))).toBe(1);
    expect(samples.get('hermes_sidecar_ingest_batch_events_sum')).toBe(104);
    expect(samples.get('hermes_sidecar_ingest_batch_events_count')).toBe(1);
  });

  it('reports no rejected lines when every line was accepted', async () => {
    const { reported, post } = setup(() => ({ refused: undefined, applied: Promise.resolve() }));
    expect((await post({ events: [EVENT], errors: [], lines: 1 })).body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    expect(reported).toEqual([]);
  });

  it('answers a refused batch with its code, having counted its rejected lines', async () => {
    const { harness, post } = setup(() => ({ refused: 'queue_full' }));
    const answer = await post({ events: [EVENT], errors: errors(1, 'invalid_event'), lines: 2 });
    expect([answer.status, answer.body]).toEqual([429, { error: 'queue_full' }]);
    expect((await harness.samples()).get(series('hermes_sidecar_events_rejected_total', { reason: 'invalid_event' }))).toBe(1);
  });

  it('sends no 202 for a batch whose application failed', async () => {
    const { post } = setup(() => ({ refused: undefined, applied: Promise.reject(new Error('apply failed')) }));
    const answer = await post({ events: [EVENT], errors: [], lines: 1 });
    expect([answer.status, answer.body]).toEqual([500, { error: 'internal' }]);
  });
});
