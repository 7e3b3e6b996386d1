/**
 * Admission before any byte of a body is read: draining and memory pressure refuse with their
 * codes, and the media type picks the body format (a Map: a type such as `constructor` finds
 * nothing).
 */
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { admissionChecks, bodyFormat, requireJson, requireMediaType, type IngestRouteOptions } from '../../src/ingest/admission.js';
import { SidecarError } from '../../src/errors.js';

/** An app running `checks`, answering 200 with the body format when they pass, the error code when not. */
function appWith(checks: readonly RequestHandler[]) {
  const app = express();
  app.post('/', ...checks, (req, res) => {
    res.json({ format: bodyFormat(req) ?? null });
  });
  const handler: ErrorRequestHandler = (error, _req, res, _next) => {
    const failure = error as SidecarError;
    res.status(failure.status).json({ error: failure.code });
  };
  app.use(handler);
  return app;
}

function admission(accepting: boolean, overLimit: boolean | undefined): RequestHandler[] {
  const options = {
    ingestor: { accepting },
    memoryGuard: overLimit === undefined ? undefined : { refusesIngest: () => overLimit },
  } as unknown as IngestRouteOptions;
  return admissionChecks(options);
}

describe('bodyFormat and requireMediaType', () => {
  it.each([
    ['application/x-ndjson', 'ndjson'],
    ['application/ndjson; charset=utf-8', 'ndjson'],
    ['Application/JSONL', 'ndjson'],
    ['application/json', 'json'],
    [' application/json ;charset=utf-8', 'json'],
  ])('reads %j as %s', async (type, format) => {
    const answer = await request(appWith([requireMediaType()])).post('/').set('Content-Type', type).send('{}');
    expect(answer.body).toEqual({ format });
  });

  it.each(['text/plain', 'constructor', 'application/x-www-form-urlencoded'])('refuses %j as an unsupported media type', async (type) => {
    const answer = await request(appWith([requireMediaType()])).post('/').set('Content-Type', type).send('x');
    expect([answer.status, answer.body]).toEqual([415, { error: 'unsupported_media_type' }]);
  });

  it('refuses a request without a media type', async () => {
    const answer = await request(appWith([requireMediaType()])).post('/');
    expect(answer.status).toBe(415);
  });

  it('takes only JSON for webhook deliveries', async () => {
    const app = appWith([requireJson()]);
    expect((await request(app).post('/').set('Content-Type', 'application/json').send('{}')).body).toEqual({ format: 'json' });
    expect((await request(app).post('/').set('Content-Type', 'application/x-ndjson').send('{}')).status).toBe(415);
  });
});

describe('admissionChecks', () => {
  it('lets a request through while accepting and under the memory limit (or with no guard)', async () => {
    for (const checks of [admission(true, false), admission(true, undefined)]) {
      const answer = await request(appWith(checks)).post('/').set('Content-Type', 'application/json').send('{}');
      expect([answer.status, answer.body]).toEqual([200, { format: 'json' }]);
    }
  });

  it('refuses while draining, before the memory check', async () => {
    const answer = await request(appWith(admission(false, true))).post('/').send('{}');
    expect([answer.status, answer.body]).toEqual([503, { error: 'shutting_down' }]);
  });

  it('refuses over the memory limit', async () => {
    const answer = await request(appWith(admission(true, true))).post('/').send('{}');
    expect([answer.status, answer.body]).toEqual([503, { error: 'memory_limit' }]);
  });
});
