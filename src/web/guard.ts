/**
 * What stands in front of the web app on every request: the configured response headers, then
 * basic auth (401 with a challenge, or 429 when too many verifications wait), read from the
 * configuration in force at that request so a reload applies to the next one.
 */
import type http from 'node:http';
import type { Express } from 'express';
import type { AuthRefusal, CredentialChecker } from './credentials.js';
import type { WebConfig } from './webConfig.js';

type LogFn = (fields: Record<string, unknown>, message: string) => void;

export interface GuardLogger {
  readonly error: LogFn;
}

const SATURATED_RETRY_AFTER_SECONDS = 1;
const REALM = 'hermes-prometheus-sidecar';

function tooManyVerifications(response: http.ServerResponse): void {
  response.statusCode = 429;
  response.setHeader('Retry-After', String(SATURATED_RETRY_AFTER_SECONDS));
  response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  response.end('Too Many Requests\n');
}

function unauthorized(response: http.ServerResponse): void {
  response.statusCode = 401;
  response.setHeader('WWW-Authenticate', `Basic realm="${REALM}"`);
  response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  response.end('Unauthorized\n');
}

/** Headers and basic auth in front of the app, read from the configuration current at each request. */
export function guardedHandler(
  app: Express,
  current: () => WebConfig,
  checker: CredentialChecker,
  logger: GuardLogger,
  refused: (reason: AuthRefusal) => void,
): http.RequestListener {
  return (request, response) => {
    const config = current();
    for (const [name, value] of Object.entries(config.headers)) response.setHeader(name, value);
    if (config.users.size === 0) return void app(request, response);
    checker.verify(config.users, request.headers.authorization).then(
      (verdict) => {
        if (verdict === 'ok') {
          app(request, response);
          return;
        }
        refused(verdict);
        if (verdict === 'saturated') tooManyVerifications(response);
        else unauthorized(response);
      },
      (error: unknown) => {
        logger.error({ code: 'basic_auth_failed', error: error instanceof Error ? error.name : typeof error }, 'basic auth check failed');
        response.statusCode = 500;
        response.end('Internal Server Error\n');
      },
    );
  };
}
