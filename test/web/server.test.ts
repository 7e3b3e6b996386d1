/**
 * The web listener's server over real HTTP and HTTPS on 127.0.0.1 (src/web/server.ts):
 * TLS versions, client certificates, basic auth and live reload of --web.config.file.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import bcrypt from 'bcryptjs';
import express from 'express';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { boundAddress, closeServer, listenOn } from '../../src/net/listener.js';
import { createExposition, renderText } from '../../src/exposition/exposition.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { familiesFor } from '../../src/metrics/registry.js';
import { parseSamples, series } from '../support/exposition.js';
import { createWebServer, WEB_SERVER_FAMILIES, type WebServer, type WebServerOptions } from '../../src/web/server.js';
import { scratchDir } from '../support/scratch.js';

// ---------------------------------------------------------------------------------------------
// Certificates, made at test time in a temp dir (no private key is committed)

let pki: string;

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: pki, stdio: 'pipe' });
}

/** Self-signed, valid for 127.0.0.1, so a client that trusts it can verify the server. */
function serverCert(name: string, serial: string): void {
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2',
    '-subj', `/CN=${name}`, '-set_serial', `0x${serial}`, '-addext', 'subjectAltName=IP:127.0.0.1');
}

beforeAll(() => {
  pki = scratchDir('sidecar-webserver-pki-');
  serverCert('server-a', '1001');
  serverCert('server-b', '2002');
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'client-ca.key', '-out', 'client-ca.crt', '-days', '2', '-subj', '/CN=test-client-ca');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'scraper.key', '-out', 'scraper.csr', '-subj', '/CN=scraper');
  openssl('x509', '-req', '-in', 'scraper.csr', '-CA', 'client-ca.crt', '-CAkey', 'client-ca.key', '-set_serial', '7', '-days', '2', '-out', 'scraper.crt');
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'rogue.key', '-out', 'rogue.crt', '-days', '2', '-subj', '/CN=rogue');
});

const pem = (name: string) => readFileSync(join(pki, name));
const serverCa = () => [pem('server-a.crt'), pem('server-b.crt')];
const scraper = () => ({ cert: pem('scraper.crt'), key: pem('scraper.key') });
const rogue = () => ({ cert: pem('rogue.crt'), key: pem('rogue.key') });

// ---------------------------------------------------------------------------------------------
// Harness

const PASSWORD = 'scrape-me';
let fastHash: string;
let cost10Hash: string;
beforeAll(async () => {
  fastHash = await bcrypt.hash(PASSWORD, 4);
  cost10Hash = await bcrypt.hash(PASSWORD, 10);
});

/** A directory holding web.yml and its own copies of the certificates (reload tests rewrite them). */
function configDir(yaml: string): { dir: string; file: string } {
  const dir = scratchDir('sidecar-webserver-');
  for (const name of ['server-a.crt', 'server-a.key', 'client-ca.crt']) copyFileSync(join(pki, name), join(dir, name));
  copyFileSync(join(pki, 'server-a.crt'), join(dir, 'server.crt'));
  copyFileSync(join(pki, 'server-a.key'), join(dir, 'server.key'));
  const file = join(dir, 'web.yml');
  writeFileSync(file, yaml);
  return { dir, file };
}

const TLS = 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n';

interface Harness {
  readonly web: WebServer;
  readonly port: number;
  readonly logs: Record<string, unknown>[];
  readonly appHits: () => number;
}

const open: WebServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((web) => web.close()));
});

function testApp() {
  const app = express();
  let hits = 0;
  app.get('/metrics', (_request, response) => {
    hits += 1;
    response.type('text/plain').send('up 1\n');
  });
  return { app, hits: () => hits };
}

async function start(configFile: string | undefined, options: Partial<WebServerOptions> = {}): Promise<Harness> {
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const { app, hits } = testApp();
  const web = await createWebServer(app, { configFile, logger, pollIntervalMs: 20, ...options });
  open.push(web);
  await listenOn(web.server, { host: '127.0.0.1', port: 0 });
  return { web, port: (web.server.address() as AddressInfo).port, logs, appHits: hits };
}

interface Reply {
  readonly status: number;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly protocol: string | null;
  readonly peer: { readonly cn: string | undefined; readonly serial: string | undefined };
}

interface RequestOptions {
  readonly tls?: boolean;
  readonly user?: string;
  readonly password?: string;
  readonly authorization?: string;
  readonly ca?: Buffer[];
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly maxVersion?: 'TLSv1.2' | 'TLSv1.3';
}

/** One GET /metrics on a fresh connection (agent: false), so every request does a new handshake. */
function get(port: number, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.user !== undefined) {
    headers.Authorization = `Basic ${Buffer.from(`${options.user}:${options.password ?? ''}`).toString('base64')}`;
  }
  if (options.authorization !== undefined) headers.Authorization = options.authorization;
  const common = { host: '127.0.0.1', port, path: '/metrics', agent: false, headers };
  return new Promise((resolve, reject) => {
    const onResponse = (response: http.IncomingMessage) => {
      const socket = response.socket as TLSSocket;
      const secure = typeof socket.getPeerCertificate === 'function';
      const peerCert = secure ? socket.getPeerCertificate() : undefined;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: response.headers,
          protocol: secure ? socket.getProtocol() : null,
          peer: { cn: peerCert?.subject?.CN as string | undefined, serial: peerCert?.serialNumber },
        }),
      );
      response.on('error', reject);
    };
    const request =
      options.tls === true
        ? https.request({ ...common, ca: options.ca ?? serverCa(), cert: options.cert, key: options.key, maxVersion: options.maxVersion }, onResponse)
        : http.request(common, onResponse);
    request.on('error', reject);
    request.end();
  });
}

const logged = (harness: Harness, message: string) => harness.logs.filter((line) => line.msg === message);
const waitFor = (check: () => Promise<void> | void) => vi.waitFor(check, { timeout: 10_000, interval: 25 });

// ---------------------------------------------------------------------------------------------

describe('without --web.config.file', () => {
  it('serves plain HTTP straight from the app', async () => {
    const harness = await start(undefined);
    expect(harness.web.server).toBeInstanceOf(http.Server);
    expect(harness.web.server).not.toBeInstanceOf(https.Server);
    const reply = await get(harness.port);
    expect(reply).toMatchObject({ status: 200, body: 'up 1\n', protocol: null });
    expect(await harness.web.reload()).toBe(false);
  });
});

describe('TLS', () => {
  it('serves HTTPS with the configured certificate, TLS 1.2 and 1.3 by default', async () => {
    const { file } = configDir(TLS);
    const harness = await start(file);
    expect(harness.web.server).toBeInstanceOf(https.Server);
    const reply = await get(harness.port, { tls: true });
    expect(reply).toMatchObject({ status: 200, body: 'up 1\n', protocol: 'TLSv1.3', peer: { cn: 'server-a', serial: '1001' } });
    expect(await get(harness.port, { tls: true, maxVersion: 'TLSv1.2' })).toMatchObject({ status: 200, protocol: 'TLSv1.2' });
    expect(logged(harness, 'web config loaded')[0]).toMatchObject({ tls: true, client_auth_type: 'NoClientCert', min_version: 'TLSv1.2' });
  });

  it('min_version TLS13 refuses a client that speaks at most TLS 1.2', async () => {
    const { file } = configDir(`${TLS}  min_version: TLS13\n`);
    const harness = await start(file);
    await expect(get(harness.port, { tls: true, maxVersion: 'TLSv1.2' })).rejects.toThrow();
    expect(await get(harness.port, { tls: true })).toMatchObject({ status: 200, protocol: 'TLSv1.3' });
    expect(harness.appHits()).toBe(1);
  });

  it('refuses plain HTTP on the HTTPS listener', async () => {
    const { file } = configDir(TLS);
    const harness = await start(file);
    const outcome = await get(harness.port).catch(() => 'refused');
    expect(outcome === 'refused' || (outcome as Reply).status === 400).toBe(true);
    expect(harness.appHits()).toBe(0);
  });
});

describe('client certificates', () => {
  const withPolicy = (policy: string) =>
    configDir(`${TLS}  client_auth_type: ${policy}\n${policy.includes('Verify') ? '  client_ca_file: client-ca.crt\n' : ''}`).file;

  it('RequireAndVerifyClientCert: refused without a certificate or with one the CA did not sign, accepted with one it did', async () => {
    const harness = await start(withPolicy('RequireAndVerifyClientCert'));
    await expect(get(harness.port, { tls: true })).rejects.toThrow();
    await expect(get(harness.port, { tls: true, ...rogue() })).rejects.toThrow();
    await expect(get(harness.port, { tls: true, maxVersion: 'TLSv1.2' })).rejects.toThrow();
    expect(await get(harness.port, { tls: true, ...scraper() })).toMatchObject({ status: 200, body: 'up 1\n' });
    expect(await get(harness.port, { tls: true, maxVersion: 'TLSv1.2', ...scraper() })).toMatchObject({ status: 200 });
    expect(harness.appHits()).toBe(2);
  });

  it('VerifyClientCertIfGiven: accepted without a certificate or with a signed one, refused with an unsigned one', async () => {
    const harness = await start(withPolicy('VerifyClientCertIfGiven'));
    expect(await get(harness.port, { tls: true })).toMatchObject({ status: 200 });
    expect(await get(harness.port, { tls: true, ...scraper() })).toMatchObject({ status: 200 });
    await expect(get(harness.port, { tls: true, ...rogue() })).rejects.toThrow();
    expect(harness.appHits()).toBe(2);
  });

  it('RequireAnyClientCert: refused without a certificate, accepted with any (it does not verify)', async () => {
    const harness = await start(withPolicy('RequireAnyClientCert'));
    await expect(get(harness.port, { tls: true })).rejects.toThrow();
    expect(await get(harness.port, { tls: true, ...rogue() })).toMatchObject({ status: 200 });
  });

  it('RequestClientCert: accepted with or without a certificate', async () => {
    const harness = await start(withPolicy('RequestClientCert'));
    expect(await get(harness.port, { tls: true })).toMatchObject({ status: 200 });
    expect(await get(harness.port, { tls: true, ...rogue() })).toMatchObject({ status: 200 });
  });
});

describe('basic auth', () => {
  const usersFile = (hash: string, extra = '') =>
    configDir(`basic_auth_users:\n  alice: ${hash}\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n${extra}`).file;

  it('answers 401 with a Basic challenge to missing, malformed, wrong and unknown credentials, and never reaches the app', async () => {
    const harness = await start(usersFile(fastHash));
    for (const options of [
      {},
      { authorization: 'Bearer abc' },
      { authorization: 'Basic !!!' },
      { authorization: `Basic ${Buffer.from('alice').toString('base64')}` },
      { user: 'alice', password: 'wrong' },
      { user: 'alice', password: '' },
      { user: 'mallory', password: PASSWORD },
      { user: 'Alice', password: PASSWORD },
    ]) {
      const reply = await get(harness.port, options);
      expect(reply.status, JSON.stringify(options)).toBe(401);
      expect(reply.headers['www-authenticate']).toBe('Basic realm="hermes-prometheus-sidecar"');
      expect(reply.headers['x-frame-options']).toBe('deny');
      expect(reply.body).toBe('Unauthorized\n');
    }
    expect(harness.appHits()).toBe(0);
    const ok = await get(harness.port, { user: 'alice', password: PASSWORD });
    expect(ok).toMatchObject({ status: 200, body: 'up 1\n' });
    expect(ok.headers['x-frame-options']).toBe('deny');
    expect(ok.headers['www-authenticate']).toBeUndefined();
    expect(harness.appHits()).toBe(1);
  });

  it('warns that basic auth without TLS sends passwords in the clear', async () => {
    const harness = await start(usersFile(fastHash));
    expect(harness.logs.some((line) => line.level === 40 && String(line.msg).includes('clear text'))).toBe(true);
  });

  it('runs bcrypt for an unknown user (against a decoy of the same cost) as for a wrong password', async () => {
    const compare = vi.fn((password: string, hash: string) => bcrypt.compare(password, hash));
    const harness = await start(usersFile(cost10Hash), { compare });

    expect((await get(harness.port)).status).toBe(401);
    expect(compare).not.toHaveBeenCalled();

    expect((await get(harness.port, { user: 'mallory', password: PASSWORD })).status).toBe(401);
    expect(compare).toHaveBeenCalledTimes(1);
    const decoy = compare.mock.calls[0]?.[1] ?? '';
    expect(decoy).not.toBe(cost10Hash);
    expect(bcrypt.getRounds(decoy)).toBe(10);
    // The decoy is a real bcrypt computation: it verifies nothing, whatever the password.
    expect(await bcrypt.compare(PASSWORD, decoy)).toBe(false);

    expect((await get(harness.port, { user: 'alice', password: 'wrong' })).status).toBe(401);
    expect(compare).toHaveBeenCalledTimes(2);
    expect(compare.mock.calls[1]).toEqual(['wrong', cost10Hash]);
  });

  it('remembers a success for the cache TTL, and a failure for a minute (refused again without bcrypt)', async () => {
    let now = 1_000_000;
    const compare = vi.fn((password: string, hash: string) => bcrypt.compare(password, hash));
    const harness = await start(usersFile(fastHash), { compare, now: () => now, authCacheTtlMs: 60_000 });
    const right = { user: 'alice', password: PASSWORD };

    expect((await get(harness.port, right)).status).toBe(200);
    expect((await get(harness.port, right)).status).toBe(200);
    expect(compare).toHaveBeenCalledTimes(1);

    now += 59_000;
    expect((await get(harness.port, right)).status).toBe(200);
    expect(compare).toHaveBeenCalledTimes(1);
    now += 2_000;
    expect((await get(harness.port, right)).status).toBe(200);
    expect(compare).toHaveBeenCalledTimes(2);

    for (let attempt = 0; attempt < 2; attempt += 1) expect((await get(harness.port, { user: 'alice', password: 'x' })).status).toBe(401);
    expect(compare).toHaveBeenCalledTimes(3);
    now += 61_000;
    expect((await get(harness.port, { user: 'alice', password: 'x' })).status).toBe(401);
    expect(compare).toHaveBeenCalledTimes(4);
  });

  it('under a flood of wrong passwords: bcrypt runs one at a time, the excess is refused at once (429), a verified scraper is served', async () => {
    let running = 0;
    let mostRunning = 0;
    const compare = vi.fn(async (password: string, hash: string) => {
      running += 1;
      mostRunning = Math.max(mostRunning, running);
      try {
        // As slow as a cost-10 check on a busy machine, without spending the CPU in a test.
        await new Promise((resolve) => setTimeout(resolve, 50));
        return await bcrypt.compare(password, hash);
      } finally {
        running -= 1;
      }
    });
    const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 100, defaultMetrics: false });
    const harness = await start(usersFile(fastHash), { compare, metrics: familiesFor(registry.metrics, WEB_SERVER_FAMILIES) });
    const refusals = async (reason: string) => parseSamples(await renderText(createExposition(registry))).get(series('hermes_sidecar_web_auth_failures_total', { reason }));
    const right = { user: 'alice', password: PASSWORD };
    expect((await get(harness.port, right)).status).toBe(200); // verified once, then remembered
    const flood = Array.from({ length: 150 }, (_, index) => get(harness.port, { user: 'alice', password: `guess-${index}` }));
    const scrape = await get(harness.port, right);
    const answers = await Promise.all(flood);
    expect(scrape.status).toBe(200);
    expect(mostRunning).toBe(1);
    const saturated = answers.filter((answer) => answer.status === 429);
    const wrong = answers.filter((answer) => answer.status === 401);
    expect(saturated.length + wrong.length).toBe(150);
    expect(saturated.length).toBeGreaterThan(0);
    expect(saturated[0]?.headers['retry-after']).toBe('1');
    // Each verification that ran was one of the wrong guesses (plus the first right one).
    expect(compare).toHaveBeenCalledTimes(wrong.length + 1);
    expect(await refusals('saturated')).toBe(saturated.length);
    expect(await refusals('wrong')).toBe(wrong.length);
    // Repeating a guess that failed costs no bcrypt.
    const failedGuess = answers.findIndex((answer) => answer.status === 401);
    expect((await get(harness.port, { user: 'alice', password: `guess-${failedGuess}` })).status).toBe(401);
    expect(compare).toHaveBeenCalledTimes(wrong.length + 1);
    expect(await refusals('repeated')).toBe(1);
  });

  it('works over HTTPS together with a client certificate', async () => {
    const { file } = configDir(
      `${TLS}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: client-ca.crt\nbasic_auth_users:\n  alice: ${fastHash}\n`,
    );
    const harness = await start(file);
    expect((await get(harness.port, { tls: true, ...scraper() })).status).toBe(401);
    expect((await get(harness.port, { tls: true, ...scraper(), user: 'alice', password: PASSWORD })).status).toBe(200);
  });
});

describe('live reload', () => {
  it('rotates the certificate and adds a user without a restart', async () => {
    const { dir, file } = configDir(`${TLS}basic_auth_users:\n  alice: ${fastHash}\n`);
    const harness = await start(file);
    const bob = { tls: true, user: 'bob', password: 'builder' };
    expect(await get(harness.port, { tls: true, user: 'alice', password: PASSWORD })).toMatchObject({ status: 200, peer: { cn: 'server-a', serial: '1001' } });
    expect((await get(harness.port, bob)).status).toBe(401);

    copyFileSync(join(pki, 'server-b.crt'), join(dir, 'server.crt'));
    copyFileSync(join(pki, 'server-b.key'), join(dir, 'server.key'));
    writeFileSync(file, `${TLS}basic_auth_users:\n  alice: ${fastHash}\n  bob: ${bcrypt.hashSync('builder', 4)}\n`);

    await waitFor(async () => {
      expect(await get(harness.port, bob)).toMatchObject({ status: 200, peer: { cn: 'server-b', serial: '2002' } });
    });
    expect(await get(harness.port, { tls: true, user: 'alice', password: PASSWORD })).toMatchObject({ status: 200, peer: { cn: 'server-b' } });
    expect(logged(harness, 'web config reloaded').at(-1)).toMatchObject({ tls: true, basic_auth_users: 2 });
  });

  it('applies a new client_auth_type to the next connections', async () => {
    const { file } = configDir(TLS);
    const harness = await start(file);
    expect((await get(harness.port, { tls: true })).status).toBe(200);
    writeFileSync(file, `${TLS}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: client-ca.crt\n`);
    await waitFor(() => expect(logged(harness, 'web config reloaded')).toHaveLength(1));
    await expect(get(harness.port, { tls: true })).rejects.toThrow();
    expect((await get(harness.port, { tls: true, ...scraper() })).status).toBe(200);
  });

  it('keeps the last good configuration when a rewrite is invalid, logs only the error, and takes the fix', async () => {
    const { dir, file } = configDir(`${TLS}basic_auth_users:\n  alice: ${fastHash}\n`);
    const harness = await start(file);
    const alice = { tls: true, user: 'alice', password: PASSWORD };

    writeFileSync(file, `${TLS}  client_auth_type: Mutual\nbasic_auth_users:\n  alice: ${fastHash}\n  bob: not-a-hash\n`);
    await waitFor(() => expect(logged(harness, 'web config reload failed; keeping the last good configuration')).toHaveLength(1));
    const [failure] = logged(harness, 'web config reload failed; keeping the last good configuration');
    expect(failure).toMatchObject({ level: 50, code: 'web_config_reload_failed', file });
    expect(String(failure?.error)).toContain('tls_server_config.client_auth_type');
    expect(String(failure?.error)).toContain('basic_auth_users.bob: is not a bcrypt hash');
    expect(JSON.stringify(harness.logs)).not.toContain(fastHash.slice(7));
    expect(JSON.stringify(harness.logs)).not.toContain('not-a-hash');
    expect(await get(harness.port, alice)).toMatchObject({ status: 200, peer: { cn: 'server-a' } });

    // A key that does not match the certificate is refused too, and the old pair keeps serving.
    writeFileSync(file, `${TLS}basic_auth_users:\n  alice: ${fastHash}\n`);
    copyFileSync(join(pki, 'server-b.key'), join(dir, 'server.key'));
    await waitFor(() => {
      const errors = logged(harness, 'web config reload failed; keeping the last good configuration').map((line) => String(line.error));
      expect(errors.some((error) => error.includes('tls_server_config.key_file: does not match'))).toBe(true);
    });
    expect(JSON.stringify(harness.logs)).not.toContain('PRIVATE KEY');
    expect(await get(harness.port, alice)).toMatchObject({ status: 200, peer: { cn: 'server-a' } });

    copyFileSync(join(pki, 'server-b.crt'), join(dir, 'server.crt'));
    await waitFor(async () => expect(await get(harness.port, alice)).toMatchObject({ status: 200, peer: { cn: 'server-b' } }));
  });

  it('watches files a broken config names, so creating them later applies it', async () => {
    const { dir, file } = configDir(TLS);
    const harness = await start(file);
    writeFileSync(file, 'tls_server_config:\n  cert_file: next.crt\n  key_file: next.key\n');
    await waitFor(() => expect(logged(harness, 'web config reload failed; keeping the last good configuration').length).toBeGreaterThan(0));
    copyFileSync(join(pki, 'server-b.key'), join(dir, 'next.key'));
    copyFileSync(join(pki, 'server-b.crt'), join(dir, 'next.crt'));
    await waitFor(async () => expect((await get(harness.port, { tls: true })).peer.cn).toBe('server-b'));
  });

  it('does not switch between HTTP and HTTPS: that needs a restart', async () => {
    const { file } = configDir(`basic_auth_users:\n  alice: ${fastHash}\n`);
    const harness = await start(file);
    writeFileSync(file, `${TLS}basic_auth_users:\n  alice: ${fastHash}\n`);
    expect(await harness.web.reload()).toBe(false);
    const [failure] = logged(harness, 'web config not applied; keeping the last good configuration');
    expect(failure).toMatchObject({ level: 50, error: 'switching between HTTP and HTTPS needs a restart' });
    expect((await get(harness.port, { user: 'alice', password: PASSWORD })).status).toBe(200);
  });

  it('ignores a rewrite that changes nothing, and stops watching on close', async () => {
    const { file } = configDir(`basic_auth_users:\n  alice: ${fastHash}\n`);
    const harness = await start(file);
    writeFileSync(file, `basic_auth_users:\n  alice: ${fastHash}\n`);
    expect(await harness.web.reload()).toBe(false);
    expect(logged(harness, 'web config reloaded')).toHaveLength(0);

    await harness.web.close();
    expect(harness.web.server.listening).toBe(false);
    writeFileSync(file, 'basic_auth_users: {}\n');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(logged(harness, 'web config reloaded')).toHaveLength(0);
  });
});

describe('start-up and shutdown', () => {
  it("fits main's wiring: boundAddress, a graceful closeServer, then close()", async () => {
    const { file } = configDir(TLS);
    const harness = await start(file);
    expect(boundAddress(harness.web.server)).toBe(`127.0.0.1:${harness.port}`);
    await closeServer(harness.web.server, 100);
    expect(harness.web.server.listening).toBe(false);
    await harness.web.close();
  });

  it('rejects an invalid file with a message naming the file and the setting', async () => {
    const { file } = configDir(`${TLS}  client_auth_type: VerifyClientCertIfGiven\n`);
    const { app } = testApp();
    const logger = pino({ level: 'silent' });
    await expect(createWebServer(app, { configFile: file, logger })).rejects.toThrow(
      `--web.config.file: ${file}: tls_server_config.client_ca_file: is required with client_auth_type VerifyClientCertIfGiven`,
    );
  });
});
