/** --web.config.file: the exporter-toolkit format, loaded and validated (src/web/webConfig.ts). */
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { loadWebConfig, WebConfigError } from '../../src/web/webConfig.js';
import { scratchDir } from '../support/scratch.js';

const HASH = bcrypt.hashSync('correct horse', 4);

/** Self-signed RSA certificates made at test time: no private key is ever committed. */
function selfSigned(dir: string, name: string): void {
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`],
    { cwd: dir, stdio: 'pipe' },
  );
}

let dir: string;
let written = 0;

/** A config file next to the certificates, so relative names resolve against its directory. */
function configFile(yaml: string): string {
  const file = join(dir, `web-${++written}.yml`);
  writeFileSync(file, yaml);
  return file;
}

const read = (name: string) => readFileSync(join(dir, name));

beforeAll(() => {
  dir = scratchDir('sidecar-webconfig-');
  selfSigned(dir, 'server');
  selfSigned(dir, 'other');
  selfSigned(dir, 'ca');
});

describe('loadWebConfig: valid files', () => {
  it('loads TLS, client verification, users and headers, resolving files against the config directory', async () => {
    const file = configFile(`
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  min_version: TLS13
basic_auth_users:
  alice: ${HASH}
  bob: ${HASH.replace('$2b$', '$2y$')}
http_server_config:
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
`);
    const config = await loadWebConfig(file);
    expect(config.file).toBe(file);
    expect(config.tls).toEqual({
      cert: read('server.crt'),
      key: read('server.key'),
      clientCa: read('ca.crt'),
      clientAuth: 'RequireAndVerifyClientCert',
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
    });
    expect([...config.users.keys()]).toEqual(['alice', 'bob']);
    expect(config.users.get('alice')).toBe(HASH);
    expect(config.headers).toEqual({ 'X-Frame-Options': 'deny', 'Strict-Transport-Security': 'max-age=31536000' });
    expect(config.files).toEqual([file, join(dir, 'server.crt'), join(dir, 'server.key'), join(dir, 'ca.crt')]);
  });

  it('defaults to NoClientCert and TLS 1.2 to 1.3; an absolute path is kept', async () => {
    const config = await loadWebConfig(configFile(`tls_server_config: {cert_file: ${join(dir, 'server.crt')}, key_file: server.key}\n`));
    expect(config.tls).toMatchObject({ clientAuth: 'NoClientCert', clientCa: undefined, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3' });
    expect(config.users.size).toBe(0);
  });

  it.each([
    ['an empty file', ''],
    ['empty sections', 'tls_server_config:\nbasic_auth_users:\nhttp_server_config:\n'],
    ['an empty tls_server_config (exporter-toolkit: plain HTTP)', 'tls_server_config: {}\n'],
  ])('%s means plain HTTP without auth', async (_name, yaml) => {
    const config = await loadWebConfig(configFile(yaml));
    expect(config.tls).toBeUndefined();
    expect(config.users.size).toBe(0);
    expect(config.headers).toEqual({});
  });

  it('takes inline PEM (cert, key, client_ca) and the old RequireClientCert name', async () => {
    const indent = (name: string) => read(name).toString('utf8').trim().replaceAll('\n', '\n    ');
    const config = await loadWebConfig(
      configFile(`tls_server_config:
  cert: |
    ${indent('server.crt')}
  key: |
    ${indent('server.key')}
  client_ca: |
    ${indent('ca.crt')}
  client_auth_type: RequireClientCert
`),
    );
    expect(config.tls?.clientAuth).toBe('RequireAnyClientCert');
    expect(config.tls?.cert.toString('utf8').trim()).toBe(read('server.crt').toString('utf8').trim());
  });

  it('drops a blank header value (exporter-toolkit: unset if blank)', async () => {
    const config = await loadWebConfig(configFile('http_server_config:\n  headers:\n    Content-Security-Policy: ""\n'));
    expect(config.headers).toEqual({});
  });

  it('fingerprints the content, so an untouched rewrite is recognisable', async () => {
    const yaml = 'tls_server_config: {cert_file: server.crt, key_file: server.key}\n';
    const [first, second, other] = await Promise.all([
      loadWebConfig(configFile(yaml)),
      loadWebConfig(configFile(yaml)),
      loadWebConfig(configFile(`${yaml}basic_auth_users: {alice: ${HASH}}\n`)),
    ]);
    expect(first.fingerprint).toBe(second.fingerprint);
    expect(other.fingerprint).not.toBe(first.fingerprint);
  });
});

describe('docs/web-config.md', () => {
  it('its example loads (with certificates under the names it uses)', async () => {
    const doc = readFileSync(new URL('../../docs/web-config.md', import.meta.url), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const exampleDir = scratchDir('sidecar-webconfig-doc-');
    for (const [from, to] of [['server.crt', 'server.crt'], ['server.key', 'server.key'], ['ca.crt', 'scrapers-ca.crt']] as const) {
      copyFileSync(join(dir, from), join(exampleDir, to));
    }
    const file = join(exampleDir, 'web.yml');
    writeFileSync(file, example);
    const config = await loadWebConfig(file);
    expect(config.tls).toMatchObject({ clientAuth: 'RequireAndVerifyClientCert', minVersion: 'TLSv1.3' });
    expect([...config.users.keys()]).toEqual(['prometheus']);
    expect(Object.keys(config.headers)).toEqual(['X-Frame-Options', 'X-Content-Type-Options', 'Strict-Transport-Security']);
  });
});

const TLS = 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n';

describe('loadWebConfig: invalid files are refused with the file and the setting named', () => {
  it.each([
    ['bad YAML', 'basic_auth_users: [alice\n', 'is not valid YAML'],
    ['a duplicate key', `basic_auth_users:\n  alice: ${HASH}\n  alice: ${HASH}\n`, 'is not valid YAML'],
    ['a list at the top', '- tls_server_config\n', '(top level)'],
    ['an unknown top-level key', 'tls_config: {}\n', 'tls_config: unknown setting'],
    ['an unknown TLS key', `${TLS}  certfile: server.crt\n`, 'tls_server_config.certfile: unknown setting'],
    ['an unknown http_server_config key', 'http_server_config: {header: {}}\n', 'http_server_config.header: unknown setting'],
    ['unsupported rate_limit', 'rate_limit: {interval: 1s, burst: 5}\n', 'rate_limit: this exporter-toolkit setting is not supported'],
    ['unsupported client_allowed_sans', `${TLS}  client_allowed_sans: [scraper]\n`, 'tls_server_config.client_allowed_sans: this exporter-toolkit'],
    ['unsupported http2', 'http_server_config: {http2: false}\n', 'http_server_config.http2: this exporter-toolkit'],
    ['an unknown client_auth_type', `${TLS}  client_auth_type: Mutual\n`, 'tls_server_config.client_auth_type'],
    ['an unknown min_version', `${TLS}  min_version: TLS14\n`, 'tls_server_config.min_version'],
    ['min_version above max_version', `${TLS}  min_version: TLS13\n  max_version: TLS12\n`, 'tls_server_config.min_version: is above max_version'],
    ['a plain-text password', 'basic_auth_users: {alice: correct-horse}\n', 'basic_auth_users.alice: is not a bcrypt hash'],
    ['an MD5-crypt hash', 'basic_auth_users: {alice: "$1$saltsalt$qjXMvbEw8oaL.CzflDugX/"}\n', 'basic_auth_users.alice: is not a bcrypt hash'],
    ['a bcrypt cost below 4', `basic_auth_users: {alice: "${HASH.replace('$04$', '$03$')}"}\n`, 'basic_auth_users.alice: is not a bcrypt hash'],
    ['a truncated bcrypt hash', `basic_auth_users: {alice: "${HASH.slice(0, -1)}"}\n`, 'basic_auth_users.alice: is not a bcrypt hash'],
    ['a user without a hash', 'basic_auth_users:\n  alice:\n', 'basic_auth_users.alice'],
    ['a user name with a colon', `basic_auth_users: {"al:ice": "${HASH}"}\n`, 'basic_auth_users.al:ice: a user name cannot contain'],
    ['a header outside the allowed set', 'http_server_config: {headers: {X-Powered-By: sidecar}}\n', 'http_server_config.headers.X-Powered-By: cannot be configured'],
    ['a header name in another case', 'http_server_config: {headers: {x-frame-options: deny}}\n', 'http_server_config.headers.x-frame-options: cannot be configured'],
    ['a bad X-Frame-Options', 'http_server_config: {headers: {X-Frame-Options: allow}}\n', 'http_server_config.headers.X-Frame-Options: must be one of deny, sameorigin'],
    ['a bad X-Content-Type-Options', 'http_server_config: {headers: {X-Content-Type-Options: sniff}}\n', 'X-Content-Type-Options: must be one of nosniff'],
    ['a header value with a newline', 'http_server_config: {headers: {Content-Security-Policy: "a\\nb"}}\n', 'Content-Security-Policy: is not a valid HTTP header value'],
    ['TLS without cert_file', 'tls_server_config: {key_file: server.key}\n', 'tls_server_config.cert_file: is required'],
    ['TLS without key_file', 'tls_server_config: {cert_file: server.crt}\n', 'tls_server_config.key_file: is required'],
    ['TLS settings but no certificate', 'tls_server_config: {min_version: TLS13}\n', 'tls_server_config.cert_file: is required'],
    ['both cert and cert_file', `${TLS}  cert: inline\n`, 'tls_server_config.cert_file: set cert or cert_file, not both'],
    ['an empty cert_file', 'tls_server_config: {cert_file: "", key_file: server.key}\n', 'tls_server_config.cert_file: expected a file path'],
    ['a missing cert_file', 'tls_server_config: {cert_file: missing.crt, key_file: server.key}\n', 'tls_server_config.cert_file: cannot read'],
    ['a cert_file that is not a certificate', 'tls_server_config: {cert_file: server.key, key_file: server.key}\n', 'tls_server_config.cert_file: does not hold a PEM certificate'],
    ['a key_file that is not a key', 'tls_server_config: {cert_file: server.crt, key_file: server.crt}\n', 'tls_server_config.key_file: does not hold an unencrypted PEM private key'],
    ['a key_file for another certificate', 'tls_server_config: {cert_file: server.crt, key_file: other.key}\n', 'tls_server_config.key_file: does not match the certificate of tls_server_config.cert_file'],
    ['an inline key for another certificate', `tls_server_config: {cert_file: server.crt, key: "${'x'.repeat(8)}"}\n`, 'tls_server_config.key: does not hold'],
    ['a client CA without a client auth policy', `${TLS}  client_ca_file: ca.crt\n`, 'tls_server_config.client_ca_file: is set but client_auth_type is NoClientCert'],
    ['verification without a client CA', `${TLS}  client_auth_type: VerifyClientCertIfGiven\n`, 'tls_server_config.client_ca_file: is required with client_auth_type VerifyClientCertIfGiven'],
    ['a client CA file without certificates', `${TLS}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: server.key\n`, 'tls_server_config.client_ca_file: holds no PEM certificate'],
    ['a missing client CA file', `${TLS}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: nope.crt\n`, 'tls_server_config.client_ca_file: cannot read'],
  ])('%s', async (_name, yaml, expected) => {
    const file = configFile(yaml);
    const error = await loadWebConfig(file).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(WebConfigError);
    expect(error).toBeInstanceOf(ConfigError);
    const { message } = error as WebConfigError;
    expect(message.startsWith(`--web.config.file: ${file}: `)).toBe(true);
    expect(message).toContain(expected);
    // Content never reaches the message: no hash, no key material, no header value.
    expect(message).not.toContain(HASH.slice(7));
    expect(message).not.toContain('PRIVATE KEY');
    expect(message).not.toContain('correct-horse');
    expect(message).not.toContain('sidecar}');
  });

  it('names a missing config file', async () => {
    const file = join(dir, 'absent.yml');
    await expect(loadWebConfig(file)).rejects.toThrow(`--web.config.file: ${file}: cannot read ${file}: ENOENT`);
  });

  it('lists the files the broken config names, so a watcher notices when they appear', async () => {
    const file = configFile('tls_server_config: {cert_file: later.crt, key_file: later.key}\n');
    const error = (await loadWebConfig(file).catch((caught: unknown) => caught)) as WebConfigError;
    expect(error.message).toContain(`cannot read ${join(dir, 'later.crt')}: ENOENT`);
    expect(error.files).toEqual([file, join(dir, 'later.crt'), join(dir, 'later.key')]);
  });
});
