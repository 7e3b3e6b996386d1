/**
 * The web listener's server and its lifecycle: plain HTTP, or — with a `--web.config.file` —
 * HTTPS with optional client certificates, bcrypt basic auth and extra response headers (see
 * webConfig.ts and docs/web-config.md). Its connections are bounded like every listener's
 * (src/net/listener.ts).
 *
 * The file and the certificate, key and CA files it names are polled (configWatch.ts) and
 * re-applied when they change, so certificate rotation and user changes need no restart. A file
 * that does not load is logged (the error only, never the content) and the last good
 * configuration stays in force.
 * Switching between HTTP and HTTPS is the one change that needs a restart: a listening socket
 * cannot change protocol.
 */
import type http from 'node:http';
import type https from 'node:https';
import type { Express } from 'express';
import type { Families } from '../metrics/registry.js';
import type { CONNECTION_FAMILIES } from '../net/connections.js';
import { closeNow, createListener, DEFAULT_LIMITS, type ListenerLimits } from '../net/listener.js';
import { ChangePoller, loadTracked, serialized } from './configWatch.js';
import { CredentialChecker, type PasswordCompare } from './credentials.js';
import { guardedHandler } from './guard.js';
import { applyTls, enforceClientCertPolicy, tlsServerOptions } from './tlsPolicy.js';
import type { WebConfig } from './webConfig.js';
import { counter, type Declarations } from '../metrics/declare.js';
import { fed } from '../metrics/fedBy.js';

/** The closed value sets of this module's labels. */
export const WEB_SERVER_VALUES = {
  /** Why basic auth refused a web request. */
  auth_refusal: ['wrong', 'repeated', 'saturated'],
} as const satisfies Record<string, readonly string[]>;

/** The families this module writes (and all it is handed). */
export const WEB_SERVER_FAMILIES = {
  webAuthFailures: fed(counter('hermes_sidecar_web_auth_failures_total', { reason: WEB_SERVER_VALUES.auth_refusal }, 'self',
    'Requests to the web listener refused by basic auth, by reason ({reason}): bcrypt said no, a recently failed credential refused without bcrypt, or too many verifications waiting (429).'),
    'sidecar', 'web listener basic auth'),
} as const satisfies Declarations;

type LogFn = (fields: Record<string, unknown>, message: string) => void;

interface WebServerLogger {
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
}

export interface WebServerOptions {
  /** Path of the exporter-toolkit web config; undefined: plain HTTP, no auth. */
  readonly configFile?: string | undefined;
  readonly logger: WebServerLogger;
  /** How often the config file and the files it names are polled for changes. */
  readonly pollIntervalMs?: number;
  /** bcrypt comparison (tests inject a spy). */
  readonly compare?: PasswordCompare;
  /** How long a successful basic-auth verification is remembered. */
  readonly authCacheTtlMs?: number;
  /** Milliseconds clock of that cache. */
  readonly now?: () => number;
  /** The counter of requests basic auth refuses, by why. */
  readonly metrics?: Families<typeof WEB_SERVER_FAMILIES>;
  /** Connection bounds of the listener (DEFAULT_LIMITS when not given). */
  readonly limits?: ListenerLimits;
  /** Their counters and gauges. */
  readonly connectionMetrics?: Families<typeof CONNECTION_FAMILIES>;
}

export interface WebServer {
  /** Not yet listening: see listenOn(). */
  readonly server: http.Server | https.Server;
  /** Re-reads the config file now; resolves true if a new configuration was applied. */
  reload(): Promise<boolean>;
  /** Stops watching the files and closes the server (at once: close it gracefully first if needed). */
  close(): Promise<void>;
}

const DEFAULT_POLL_INTERVAL_MS = 2000;

const listenerOptions = (options: WebServerOptions) => ({
  name: 'web' as const,
  limits: options.limits ?? DEFAULT_LIMITS,
  metrics: options.connectionMetrics,
});

const describeConfig = (config: WebConfig) => ({
  file: config.file,
  tls: config.tls !== undefined,
  client_auth_type: config.tls?.clientAuth,
  min_version: config.tls?.minVersion,
  basic_auth_users: config.users.size,
});

function warnAboutPlainAuth(config: WebConfig, logger: WebServerLogger): void {
  if (config.tls === undefined && config.users.size > 0) {
    logger.warn({ file: config.file }, 'basic auth without tls_server_config: passwords cross the network in clear text');
  }
}

async function createConfiguredServer(app: Express, configFile: string, options: WebServerOptions): Promise<WebServer> {
  const { logger } = options;
  let closed = false;
  const poller = new ChangePoller(options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, () => reload());
  const first = await loadTracked(configFile, poller, undefined);
  if (first.config === undefined) throw first.error;
  let config = first.config;
  const current = () => config;
  const checker = new CredentialChecker({ compare: options.compare, ttlMs: options.authCacheTtlMs, now: options.now });
  const handler = guardedHandler(app, current, checker, logger, (reason) => options.metrics?.webAuthFailures.inc({ reason }));
  const server = createListener(handler, { ...listenerOptions(options), tls: config.tls === undefined ? undefined : tlsServerOptions(config.tls) });
  const tlsServer = config.tls === undefined ? undefined : (server as https.Server);
  if (tlsServer !== undefined) enforceClientCertPolicy(tlsServer, current);
  logger.info(describeConfig(config), 'web config loaded');
  warnAboutPlainAuth(config, logger);

  const apply = (next: WebConfig): boolean => {
    if ((next.tls === undefined) !== (tlsServer === undefined)) {
      logger.error(
        { code: 'web_config_reload_failed', file: next.file, error: 'switching between HTTP and HTTPS needs a restart' },
        'web config not applied; keeping the last good configuration',
      );
      return false;
    }
    if (next.fingerprint === config.fingerprint) return false;
    if (tlsServer !== undefined && next.tls !== undefined) applyTls(tlsServer, next.tls);
    config = next;
    checker.clear();
    logger.info(describeConfig(next), 'web config reloaded');
    warnAboutPlainAuth(next, logger);
    return true;
  };

  const reloadOnce = async (): Promise<boolean> => {
    if (closed) return false;
    const attempt = await loadTracked(configFile, poller, config);
    if (closed) return false;
    let error = attempt.error;
    if (attempt.config !== undefined) {
      try {
        return apply(attempt.config);
      } catch (applyError) {
        error = applyError;
      }
    }
    logger.error(
      { code: 'web_config_reload_failed', file: config.file, error: error instanceof Error ? error.message : String(error) },
      'web config reload failed; keeping the last good configuration',
    );
    return false;
  };
  const reload = serialized(reloadOnce);
  poller.start();

  return {
    server,
    reload,
    close: async () => {
      closed = true;
      poller.stop();
      checker.clear();
      await checker.close();
      await closeNow(server);
    },
  };
}

/**
 * The web listener's server, not yet listening. Rejects with a WebConfigError (naming the file
 * and the setting) when the config file does not load.
 */
export async function createWebServer(app: Express, options: WebServerOptions): Promise<WebServer> {
  if (options.configFile !== undefined) return createConfiguredServer(app, options.configFile, options);
  const server = createListener(app, listenerOptions(options));
  return { server, reload: async () => false, close: () => closeNow(server) };
}
