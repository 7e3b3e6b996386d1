/**
 * GET /-/ready on the ingest listener, for the service manager's readiness probe
 * (`hermes-prometheus-sidecar ready`): the web listener may require basic auth (stored as bcrypt
 * hashes, which a probe cannot answer) or TLS, while ingest is plain loopback HTTP whose bearer
 * token the probe reads from the same configuration as the sidecar.
 */
import { Router } from 'express';
import { requireBearerToken } from './auth.js';

export const READY_ROUTE = '/-/ready';

export type Readiness = () => { readonly ready: boolean; readonly reason: string };

export function readyRouter(token: string | undefined, ready: Readiness): Router {
  const router = Router();
  router.get(READY_ROUTE, requireBearerToken(token), (_request, response) => {
    const { ready: isReady, reason } = ready();
    response.status(isReady ? 200 : 503).type('text/plain').send(`${reason}\n`);
  });
  return router;
}
