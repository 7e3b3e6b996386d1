/**
 * The guard in front of the web app (src/web/guard.ts): configured headers on every answer,
 * basic auth answered 401 or 429 without reaching the app, and the refusal reported by reason.
 */
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { AuthRefusal, AuthVerdict, CredentialChecker } from '../../src/web/credentials.js';
import { guardedHandler } from '../../src/web/guard.js';
import type { WebConfig } from '../../src/web/webConfig.js';

const config = (users: Record<string, string>): WebConfig => ({
  file: '/etc/web.yml',
  tls: undefined,
  users: new Map(Object.entries(users)),
  headers: { 'X-Frame-Options': 'deny' },
  files: ['/etc/web.yml'],
  fingerprint: 'f',
});

function guarded(current: WebConfig, verdict: AuthVerdict | Error) {
  let hits = 0;
  const app = express();
  app.get('/metrics', (_request, response) => {
    hits += 1;
    response.type('text/plain').send('up 1\n');
  });
  const checker = { verify: async () => (verdict instanceof Error ? Promise.reject(verdict) : verdict) } as unknown as CredentialChecker;
  const refusals: AuthRefusal[] = [];
  const errors: Record<string, unknown>[] = [];
  const handler = guardedHandler(app, () => current, checker, { error: (fields) => void errors.push(fields) }, (reason) => void refusals.push(reason));
  return { handler, hits: () => hits, refusals, errors };
}

describe('guardedHandler', () => {
  it('passes every request to the app, with the configured headers, when no users are configured', async () => {
    const guard = guarded(config({}), 'wrong');
    const answer = await request(guard.handler).get('/metrics');
    expect(answer.status).toBe(200);
    expect(answer.headers['x-frame-options']).toBe('deny');
    expect(guard.hits()).toBe(1);
    expect(guard.refusals).toEqual([]);
  });

  it.each([
    ['wrong', 401, 'Unauthorized\n'],
    ['repeated', 401, 'Unauthorized\n'],
    ['saturated', 429, 'Too Many Requests\n'],
  ] as const)('answers a %s verdict with %i, never reaching the app, and reports the reason', async (verdict, status, body) => {
    const guard = guarded(config({ alice: '$2b$04$x' }), verdict);
    const answer = await request(guard.handler).get('/metrics');
    expect(answer.status).toBe(status);
    expect(answer.text).toBe(body);
    expect(answer.headers['x-frame-options']).toBe('deny');
    if (status === 401) expect(answer.headers['www-authenticate']).toBe('Basic realm="hermes-prometheus-sidecar"');
    else expect(answer.headers['retry-after']).toBe('1');
    expect(guard.hits()).toBe(0);
    expect(guard.refusals).toEqual([verdict]);
  });

  it('serves a verified request', async () => {
    const guard = guarded(config({ alice: '$2b$04$x' }), 'ok');
    expect((await request(guard.handler).get('/metrics')).status).toBe(200);
    expect(guard.hits()).toBe(1);
  });

  it('answers 500 when the check itself fails, logging only the error name', async () => {
    const guard = guarded(config({ alice: '$2b$04$x' }), new TypeError('secret detail'));
    expect((await request(guard.handler).get('/metrics')).status).toBe(500);
    expect(guard.errors).toEqual([{ code: 'basic_auth_failed', error: 'TypeError' }]);
    expect(guard.hits()).toBe(0);
  });
});
