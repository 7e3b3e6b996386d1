/**
 * The ingest error handler: every failure becomes its code's status and fixed message (never a
 * stack), counted once under its rejection reason, with Retry-After on the answers to retry and
 * a content-free record of the request for the debug log.
 */
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SidecarError } from '../../src/errors.js';
import { errorHandler, REJECTION_FAMILIES, Rejections, type FailedRequest } from '../../src/ingest/errors.js';
import { familiesFor } from '../../src/metrics/registry.js';
import { series } from '../support/exposition.js';
import { recorderHarness } from '../support/recorders.js';

function appThrowing(error: unknown) {
  const harness = recorderHarness();
  const failures: FailedRequest[] = [];
  const internal: unknown[] = [];
  const rejections = new Rejections(familiesFor(harness.metrics, REJECTION_FAMILIES));
  const app = express();
  app.post('/v1/events', () => {
    throw error;
  });
  app.post('/v1/secret/:id', () => {
    throw error;
  });
  app.use(errorHandler({ rejections, retryAfterSeconds: 7, onInternalError: (caught) => internal.push(caught), onFailedRequest: (failure) => failures.push(failure) }));
  return { app, harness, failures, internal, rejections };
}

describe('errorHandler', () => {
  it('answers a SidecarError with its status and message, counts its reason and records the request', async () => {
    const { app, harness, failures } = appThrowing(new SidecarError('too_large'));
    const answer = await request(app).post('/v1/events').set('Content-Length', '3').send('abc');
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ error: 'too_large', message: 'the request body is over the size limit (after decompression); split it' });
    expect(answer.headers['retry-after']).toBeUndefined();
    expect(failures).toEqual([{ code: 'too_large', status: 413, route: '/v1/events', bodyBytes: 3 }]);
    expect((await harness.samples()).get(series('hermes_sidecar_events_rejected_total', { reason: 'too_large' }))).toBe(1);
  });

  it('sets Retry-After on a retryable answer and counts nothing for an uncounted code', async () => {
    const { app, harness } = appThrowing(new SidecarError('queue_full'));
    const answer = await request(app).post('/v1/events').send('x');
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('7');
    const samples = await harness.samples();
    const rejected = [...samples].filter(([name, value]) => name.startsWith('hermes_sidecar_events_rejected_total{') && value > 0);
    expect(rejected).toEqual([]);
  });

  it('reports a path it does not know as other, never the client\'s path', async () => {
    const { app, failures } = appThrowing(new SidecarError('unauthorized'));
    await request(app).post('/v1/secret/token-in-path').send('x');
    expect(failures.map((failure) => failure.route)).toEqual(['other']);
  });

  it('answers any other error as internal, with no stack, handing the error to onInternalError only', async () => {
    const bug = new Error('secret detail');
    const { app, failures, internal } = appThrowing(bug);
    const answer = await request(app).post('/v1/events').send('x');
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ error: 'internal', message: 'internal error' });
    expect(answer.text).not.toContain('secret detail');
    expect(internal).toEqual([bug]);
    expect(failures).toEqual([]);
  });

  it('reads a client error express raised (a 4xx status) as a body that could not be decoded', async () => {
    const { app, harness } = appThrowing(Object.assign(new Error('bad'), { status: 400 }));
    const answer = await request(app).post('/v1/events').send('x');
    expect(answer.body).toEqual({ error: 'invalid_encoding', message: 'the request body could not be decompressed' });
    expect((await harness.samples()).get(series('hermes_sidecar_events_rejected_total', { reason: 'invalid_json' }))).toBe(1);
  });
});

describe('Rejections', () => {
  it('counts single lines by their own verdict', async () => {
    const { harness, rejections } = appThrowing(undefined);
    rejections.lines([{ index: 0, reason: 'invalid_event' }, { index: 3, reason: 'invalid_event' }]);
    expect((await harness.samples()).get(series('hermes_sidecar_events_rejected_total', { reason: 'invalid_event' }))).toBe(2);
  });
});
