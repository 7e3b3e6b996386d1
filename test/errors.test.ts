/** The one table of error codes: status, rejection reason, fixed message, and what a SidecarError derives from it. */
import { describe, expect, it } from 'vitest';
import { VALUES } from '../src/contract/vocabulary.js';
import { ConfigError, ERRORS, SidecarError, type ErrorCode } from '../src/errors.js';

const CODES = Object.keys(ERRORS) as ErrorCode[];

describe('ERRORS', () => {
  it('counts every rejection under a reason of hermes_sidecar_events_rejected_total', () => {
    const reasons: readonly string[] = VALUES.rejection_reason;
    const used = CODES.flatMap((code) => (ERRORS[code].rejected === undefined ? [] : [ERRORS[code].rejected]));
    expect(used.filter((reason) => !reasons.includes(reason))).toEqual([]);
  });

  it('leaves uncounted only the answers that are not the client\'s bad input', () => {
    expect(CODES.filter((code) => ERRORS[code].rejected === undefined).sort()).toEqual(
      ['delivery_in_progress', 'internal', 'method_not_allowed', 'not_found', 'queue_full', 'shutting_down', 'webhooks_disabled'],
    );
  });

  it('maps each code to an HTTP error status', () => {
    for (const code of CODES) expect(ERRORS[code].status, code).toBeGreaterThanOrEqual(400);
    expect(ERRORS.unauthorized.status).toBe(401);
    expect(ERRORS.bad_signature.status).toBe(403);
    expect(ERRORS.too_large.status).toBe(413);
    expect(ERRORS.queue_full.status).toBe(429);
    expect(ERRORS.memory_limit.status).toBe(503);
  });
});

describe('SidecarError', () => {
  it('carries its code\'s status and fixed message', () => {
    const error = new SidecarError('too_many_events');
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'SidecarError', code: 'too_many_events', status: 413, message: 'the request has more events than allowed; split it' });
  });

  it('is retryable exactly for the 429 and 503 answers', () => {
    const retryable = CODES.filter((code) => new SidecarError(code).retryable).sort();
    expect(retryable).toEqual(['delivery_in_progress', 'inflight_limit', 'memory_limit', 'queue_full', 'shutting_down']);
    for (const code of retryable) expect([429, 503]).toContain(ERRORS[code].status);
  });
});

describe('ConfigError', () => {
  it('is an Error named for what it is', () => {
    expect(new ConfigError('x')).toMatchObject({ name: 'ConfigError', message: 'x' });
  });
});
