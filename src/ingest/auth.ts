/** Bearer-token check for the ingest listener, in constant time. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { SidecarError } from '../errors.js';

/** Compares digests, so neither the content nor the length of the secret leaks through timing. */
function constantTimeEqual(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function requireBearerToken(token: string | undefined): RequestHandler {
  return (request, _response, next) => {
    if (token === undefined) return next();
    const presented = BEARER.exec(request.get('authorization') ?? '')?.[1];
    if (presented === undefined || !constantTimeEqual(presented, token)) return next(new SidecarError('unauthorized'));
    next();
  };
}
