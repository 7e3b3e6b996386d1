/**
 * The web listener's server: plain HTTP, or — with a `--web.config.file` — HTTPS with optional
 * client certificates, bcrypt basic auth and extra response headers (see webConfig.ts and
 * docs/web-config.md).
 *
 * The file and the certificate, key and CA files it names are polled (ChangePoller) and
 * re-applied when they change, so certificate rotation and user changes need no restart. A file
 * that does not load is logged (the error only, never the content) and the last good
 * configuration stays in force.
 * Switching between HTTP and HTTPS is the one change that needs a restart: a listening socket
 * cannot change protocol.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { resolve as resolvePath } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { Express } from 'express';
import PQueue from 'p-queue';
import type { OwnedMetrics } from '../metrics/registry.js';
import { BcryptWorker } from './bcryptWorker.js';
import { loadWebConfig, type ClientAuthType, type WebConfig, type WebTlsConfig } from './webConfig.js';

type LogFn = (fields: Record<string, unknown>, message: string) => void;

interface WebServerLogger {
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
}

export type PasswordCompare = (password: string, hash: string) => Promise<boolean>;

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
  readonly metrics?: OwnedMetrics<'web/server'>;
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
const DEFAULT_AUTH_CACHE_TTL_MS = 120_000;
const AUTH_CACHE_MAX_ENTRIES = 256;
/** Failed credentials are remembered this long, so repeating one costs no bcrypt. */
const FAILURE_CACHE_TTL_MS = 60_000;
const FAILURE_CACHE_MAX_ENTRIES = 1024;
/**
 * bcryptjs runs on the event loop in slices of up to 100 ms; one verification at a time leaves
 * the loop free between slices for scrapes whose credentials are already verified.
 */
const DEFAULT_MAX_CONCURRENT_VERIFICATIONS = 1;
/** Verifications allowed to wait; past this a request is refused at once (429), with no bcrypt. */
const DEFAULT_MAX_WAITING_VERIFICATIONS = 8;
const SATURATED_RETRY_AFTER_SECONDS = 1;
const REALM = 'hermes-prometheus-sidecar';

/**
 * The salt and digest of a bcrypt hash of a random string nobody kept. Checking an unknown user
 * against it (with the cost of the real hashes) takes as long as checking a real user, so the
 * answer time does not tell which user names exist.
 */
const DECOY_SALT_AND_DIGEST = 'ImumHYRtxQGBewDfEecwDeZNtHJnoR7Ktklq3g2IwDyMwdVmG/8nS';

const costOf = (hash: string): number => Number(hash.slice(4, 6));

/**
 * A decoy with the cost of the configured hashes (the highest, when they differ), so a stranger
 * takes as long as a user. Without users nothing is checked; 10 is then only a placeholder.
 */
export function decoyHash(users: ReadonlyMap<string, string>): string {
  const cost = users.size === 0 ? 10 : Math.max(...Array.from(users.values(), costOf));
  return `$2b$${String(cost).padStart(2, '0')}$${DECOY_SALT_AND_DIGEST}`;
}

const BASIC = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** User and password of an `Authorization: Basic` header, or undefined when there is none. */
export function parseBasicAuth(header: string | undefined): { user: string; password: string } | undefined {
  const encoded = BASIC.exec(header ?? '')?.[1];
  if (encoded === undefined || encoded.length % 4 !== 0) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export interface CredentialCheckerOptions {
  readonly compare?: PasswordCompare;
  readonly ttlMs?: number;
  readonly now?: () => number;
  readonly maxConcurrent?: number;
  readonly maxWaiting?: number;
}

/** Why basic auth refused a request: bcrypt said no, a recently failed credential, or too many waiting. */
export type AuthRefusal = 'wrong' | 'repeated' | 'saturated';
export type AuthVerdict = 'ok' | AuthRefusal;

/** Cache key → expiry (ms), bounded; insertion order is age order, for eviction. */
class ExpiringKeys {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  has(key: string): boolean {
    const expiry = this.expiries.get(key);
    if (expiry === undefined) return false;
    if (expiry > this.now()) return true;
    this.expiries.delete(key);
    return false;
  }

  add(key: string, ttlMs: number): void {
    this.expiries.delete(key);
    while (this.expiries.size >= this.maxEntries) {
      const oldest = this.expiries.keys().next().value;
      if (oldest === undefined) break;
      this.expiries.delete(oldest);
    }
    this.expiries.set(key, this.now() + ttlMs);
  }

  clear(): void {
    this.expiries.clear();
  }
}

/**
 * Basic-auth verification with a short memory of successes and failures, and a bound on bcrypt.
 *
 * bcrypt at cost 10 costs 50-100 ms of CPU per check by design; it runs in a worker thread
 * (bcryptWorker.ts), never on the event loop. Prometheus sends the same credentials on every scrape, so, like
 * exporter-toolkit, a verified (user, password, hash) is remembered for a short while and the
 * next scrapes skip bcrypt. A flood of wrong passwords must not take the loop from those scrapes:
 * verifications run one at a time, at most a few wait (the rest are refused at once, 429), and a
 * credential that just failed is refused without bcrypt for a minute. Both memories are bounded
 * and keyed by an HMAC-SHA-256 with a per-process random key, so no password (nor an unsalted
 * digest one could brute-force) sits in memory; the hash is part of the key, so a password
 * change in the file takes effect at once.
 */
export class CredentialChecker {
  private readonly compare: PasswordCompare;
  private readonly worker = new BcryptWorker();
  private readonly ttlMs: number;
  private readonly key = randomBytes(32);
  private readonly verified: ExpiringKeys;
  private readonly failed: ExpiringKeys;
  private readonly verifications: PQueue;
  private readonly maxWaiting: number;

  constructor(options: CredentialCheckerOptions = {}) {
    this.compare = options.compare ?? ((password, hash) => this.worker.compare(password, hash));
    this.ttlMs = options.ttlMs ?? DEFAULT_AUTH_CACHE_TTL_MS;
    const now = options.now ?? Date.now;
    this.verified = new ExpiringKeys(AUTH_CACHE_MAX_ENTRIES, now);
    this.failed = new ExpiringKeys(FAILURE_CACHE_MAX_ENTRIES, now);
    this.verifications = new PQueue({ concurrency: options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_VERIFICATIONS });
    this.maxWaiting = options.maxWaiting ?? DEFAULT_MAX_WAITING_VERIFICATIONS;
  }

  /** 'ok' when the header carries a configured user with the right password, else why not. */
  async verify(users: ReadonlyMap<string, string>, header: string | undefined): Promise<AuthVerdict> {
    const credentials = parseBasicAuth(header);
    if (credentials === undefined) return 'wrong';
    const known = users.get(credentials.user);
    const hash = known ?? decoyHash(users);
    const cacheKey = createHmac('sha256', this.key).update(JSON.stringify([credentials.user, hash, credentials.password])).digest('hex');
    if (known !== undefined && this.verified.has(cacheKey)) return 'ok';
    if (this.failed.has(cacheKey)) return 'repeated';
    if (this.verifications.size >= this.maxWaiting) return 'saturated';
    // bcrypt runs for unknown users too (against the decoy): see decoyHash.
    const matches = await this.verifications.add(() => this.compare(credentials.password, hash));
    if (matches !== true || known === undefined) {
      this.failed.add(cacheKey, FAILURE_CACHE_TTL_MS);
      return 'wrong';
    }
    this.verified.add(cacheKey, this.ttlMs);
    return 'ok';
  }

  /** True when the header carries a configured user with the right password. */
  async check(users: ReadonlyMap<string, string>, header: string | undefined): Promise<boolean> {
    return (await this.verify(users, header)) === 'ok';
  }

  /** Forgets every verification (the users may have changed). */
  clear(): void {
    this.verified.clear();
    this.failed.clear();
  }

  /** Stops the bcrypt worker. */
  close(): Promise<void> {
    return this.worker.close();
  }
}

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
function guardedHandler(
  app: Express,
  current: () => WebConfig,
  checker: CredentialChecker,
  logger: WebServerLogger,
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

/**
 * How each policy maps onto Node: whether the server asks for a certificate, whether OpenSSL
 * drops the connection when it does not verify, and the check made once the handshake is done
 * for what Node cannot express (a certificate that is required but not verified, or verified
 * only when given).
 */
const CLIENT_CERT_POLICY: Record<
  ClientAuthType,
  { readonly requestCert: boolean; readonly rejectUnauthorized: boolean; readonly accept: (socket: TLSSocket) => boolean }
> = {
  NoClientCert: { requestCert: false, rejectUnauthorized: false, accept: () => true },
  RequestClientCert: { requestCert: true, rejectUnauthorized: false, accept: () => true },
  RequireAnyClientCert: { requestCert: true, rejectUnauthorized: false, accept: (socket) => presented(socket) },
  VerifyClientCertIfGiven: { requestCert: true, rejectUnauthorized: false, accept: (socket) => !presented(socket) || socket.authorized },
  RequireAndVerifyClientCert: { requestCert: true, rejectUnauthorized: true, accept: (socket) => presented(socket) && socket.authorized },
};

const presented = (socket: TLSSocket): boolean => socket.getPeerX509Certificate() !== undefined;

const secureContextOptions = (tls: WebTlsConfig) => ({
  cert: tls.cert,
  key: tls.key,
  ca: tls.clientCa,
  minVersion: tls.minVersion,
  maxVersion: tls.maxVersion,
});

/**
 * tls.Server reads requestCert and rejectUnauthorized for every new connection, so setting them
 * (with setSecureContext for the certificates) applies a reloaded policy to the next handshakes.
 * They are plain fields of the server, not in @types/node.
 */
function applyTls(server: https.Server, tls: WebTlsConfig): void {
  const { requestCert, rejectUnauthorized } = CLIENT_CERT_POLICY[tls.clientAuth];
  server.setSecureContext(secureContextOptions(tls));
  Object.assign(server, { requestCert, rejectUnauthorized });
}

function createTlsServer(tls: WebTlsConfig, handler: http.RequestListener, current: () => WebConfig): https.Server {
  const { requestCert, rejectUnauthorized } = CLIENT_CERT_POLICY[tls.clientAuth];
  const server = https.createServer({ ...secureContextOptions(tls), requestCert, rejectUnauthorized }, handler);
  // Runs before the HTTP layer sees the connection; the policy is the one in force now, which is
  // also correct for a session resumed from before a reload.
  server.prependListener('secureConnection', (socket: TLSSocket) => {
    const policy = current().tls?.clientAuth ?? 'NoClientCert';
    if (!CLIENT_CERT_POLICY[policy].accept(socket)) socket.destroy();
  });
  return server;
}

/** One digest over the bytes (or the read error) of each file, in order. */
async function digestFiles(files: readonly string[]): Promise<string> {
  const digest = createHash('sha256');
  for (const file of files) {
    digest.update(`${file}\0`);
    try {
      const bytes = await readFile(file);
      digest.update(`${bytes.length}\0`).update(bytes);
    } catch (error) {
      digest.update(`!${(error as NodeJS.ErrnoException).code ?? 'error'}\0`);
    }
  }
  return digest.digest('hex');
}

/**
 * Notices changes to the config file and the files it names by polling their content.
 *
 * Content rather than fs.watchFile's stat: the digest is taken *before* a load reads the files,
 * so a write that lands during or after the load is always seen on the next poll (a stat
 * watcher's first reading races with such a write and can miss it), and same-size rewrites
 * within one mtime tick or symlink swaps (Kubernetes secrets) are caught too. The files are a
 * few KB, so reading them every couple of seconds costs nothing.
 *
 * A change must read the same on two consecutive polls before it is acted on, so a file caught
 * half-written (an empty web config would mean "no auth") is never applied.
 */
class ChangePoller {
  private files: readonly string[] = [];
  private baseline = '';
  private candidate: string | undefined;
  private polling = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly onChange: () => Promise<unknown>,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.intervalMs);
    // The poller alone must not keep the process alive.
    this.timer.unref();
  }

  get tracked(): readonly string[] {
    return this.files;
  }

  /** Records the content a load is about to read. */
  async capture(files: readonly string[]): Promise<void> {
    this.files = files;
    this.baseline = await digestFiles(files);
    this.candidate = undefined;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const now = await digestFiles(this.files);
      if (now === this.baseline) this.candidate = undefined;
      else if (now !== this.candidate) this.candidate = now;
      else await this.onChange();
    } catch {
      // onChange logs its own failures; a poll must never become an unhandled rejection.
    } finally {
      this.polling = false;
    }
  }
}

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

/** Runs one reload at a time, and folds triggers that arrive while one waits into it. */
function serialized(run: () => Promise<boolean>): () => Promise<boolean> {
  let chain: Promise<unknown> = Promise.resolve();
  let waiting: Promise<boolean> | undefined;
  return () => {
    if (waiting !== undefined) return waiting;
    const next = chain.then(() => {
      waiting = undefined;
      return run();
    });
    waiting = next;
    chain = next.catch(() => undefined);
    return next;
  };
}

type Attempt = { readonly config: WebConfig; readonly error?: undefined } | { readonly config?: undefined; readonly error: unknown };

const sameFiles = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((file, index) => file === b[index]);

/**
 * Loads the config with the poller's snapshot taken first. The files to snapshot are only known
 * once the config has been read, so when a load names files the snapshot did not cover, it is
 * taken again and the load repeated (loads are cheap: no bcrypt). A failed load keeps the last
 * good config's files watched, plus whatever the broken one names, so fixing any of them counts.
 */
async function loadTracked(configFile: string, poller: ChangePoller, lastGood: WebConfig | undefined): Promise<Attempt> {
  let files = poller.tracked.length > 0 ? poller.tracked : [resolvePath(configFile)];
  let attempt: Attempt = { error: new Error('not loaded') };
  for (let pass = 0; pass < 3; pass += 1) {
    await poller.capture(files);
    attempt = await loadWebConfig(configFile).then(
      (config): Attempt => ({ config }),
      (error: unknown): Attempt => ({ error }),
    );
    const named =
      attempt.config?.files ??
      [...new Set([...(lastGood?.files ?? []), ...((attempt.error as { files?: readonly string[] }).files ?? [])])];
    if (sameFiles(named, files)) break;
    files = named;
  }
  return attempt;
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
  const tlsServer = config.tls === undefined ? undefined : createTlsServer(config.tls, handler, current);
  const server = tlsServer ?? http.createServer(handler);
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

function closeNow(server: http.Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * The web listener's server, not yet listening. Rejects with a WebConfigError (naming the file
 * and the setting) when the config file does not load.
 */
export async function createWebServer(app: Express, options: WebServerOptions): Promise<WebServer> {
  if (options.configFile !== undefined) return createConfiguredServer(app, options.configFile, options);
  const server = http.createServer(app);
  return { server, reload: async () => false, close: () => closeNow(server) };
}

/** Listens on host:port and resolves once bound (port 0 picks a free one). */
export function listenOn<S extends http.Server>(server: S, address: { readonly host: string; readonly port: number }): Promise<S> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
