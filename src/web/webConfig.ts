/**
 * The web listener's security file (`--web.config.file`), in the Prometheus exporter-toolkit
 * format so the files and habits of node_exporter and friends carry over (docs/web-config.md):
 * TLS with optional client certificates, bcrypt basic-auth users and a few response headers.
 *
 * Loading validates everything the listener will need — the YAML, the settings, the bcrypt
 * hashes, and that the certificate, key and client CAs really load — so a bad file stops the
 * start (or is refused on reload) with a message naming the file and the setting. Messages
 * never quote the file's content: it holds password hashes and may hold private keys.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { validateHeaderValue } from 'node:http';
import { dirname, resolve } from 'node:path';
import type { SecureVersion } from 'node:tls';
import { yaml } from '../lazyYaml.js';
import { z } from 'zod';
import { ConfigError } from '../errors.js';

/** tls.createSecureContext, loaded only when the web config file sets TLS (node:tls costs RSS a plain sidecar never uses). */
const secureContext = (options: import('node:tls').SecureContextOptions): import('node:tls').SecureContext =>
  process.getBuiltinModule('node:tls').createSecureContext(options);

/** Go's crypto/tls client auth policies, by the names exporter-toolkit uses. */
const CLIENT_AUTH_TYPES = [
  'NoClientCert',
  'RequestClientCert',
  'RequireAnyClientCert',
  'VerifyClientCertIfGiven',
  'RequireAndVerifyClientCert',
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

/** exporter-toolkit still accepts this old name for RequireAnyClientCert. */
const CLIENT_AUTH_ALIASES: Record<string, ClientAuthType> = { RequireClientCert: 'RequireAnyClientCert' };

/** The policies that check the client certificate against client_ca_file. */
const VERIFYING: ReadonlySet<ClientAuthType> = new Set(['VerifyClientCertIfGiven', 'RequireAndVerifyClientCert']);

const TLS_VERSIONS = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' } as const satisfies Record<
  string,
  SecureVersion
>;
type TlsVersionName = keyof typeof TLS_VERSIONS;
const VERSION_NAMES = Object.keys(TLS_VERSIONS) as [TlsVersionName, ...TlsVersionName[]];

/**
 * The only headers exporter-toolkit lets a web config set, with the values it accepts where the
 * header is an enumeration (undefined: any value). Kept identical so one file works everywhere.
 */
const EXTRA_HEADERS: Readonly<Record<string, readonly string[] | undefined>> = {
  'Strict-Transport-Security': undefined,
  'X-Content-Type-Options': ['nosniff'],
  'X-Frame-Options': ['deny', 'sameorigin'],
  'X-XSS-Protection': undefined,
  'Content-Security-Policy': undefined,
};

/**
 * exporter-toolkit settings this sidecar does not implement. They are refused rather than
 * ignored: silently dropping client_allowed_sans or rate_limit would leave the listener more
 * open than its operator believes.
 */
const UNSUPPORTED = new Set([
  'client_allowed_sans',
  'cipher_suites',
  'curve_preferences',
  'prefer_server_cipher_suites',
  'http2',
  'rate_limit',
]);

/** $2a$/$2b$/$2y$, a two-digit cost Go's bcrypt accepts (4-31), 22 salt + 31 hash characters. */
const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

export interface WebTlsConfig {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientCa: Buffer | undefined;
  readonly clientAuth: ClientAuthType;
  readonly minVersion: SecureVersion;
  readonly maxVersion: SecureVersion;
}

export interface WebConfig {
  /** Absolute path of the file this was loaded from. */
  readonly file: string;
  /** Undefined: plain HTTP. */
  readonly tls: WebTlsConfig | undefined;
  /** User name → bcrypt hash; empty: no basic auth. */
  readonly users: ReadonlyMap<string, string>;
  readonly headers: Readonly<Record<string, string>>;
  /** The config file and every file it names: a change to any of them means a reload. */
  readonly files: readonly string[];
  /** Digest of everything loaded, so a reload that changes nothing can be told apart. */
  readonly fingerprint: string;
}

export class WebConfigError extends ConfigError {
  constructor(
    message: string,
    /** Files worth watching to notice a fix: the config file and any file it names. */
    readonly files: readonly string[],
  ) {
    super(message);
  }
}

type Fail = (setting: string, problem: string) => never;

function failer(file: string, files: readonly string[]): Fail {
  return (setting, problem) => {
    const where = setting === '' ? '' : `${setting}: `;
    throw new WebConfigError(`--web.config.file: ${file}: ${where}${problem}`, files);
  };
}

const pem = z.string().min(1, 'must not be empty');
const path = z.string().min(1, 'expected a file path');

const tlsSchema = z.strictObject({
  cert: pem.optional(),
  key: pem.optional(),
  client_ca: pem.optional(),
  cert_file: path.optional(),
  key_file: path.optional(),
  client_ca_file: path.optional(),
  client_auth_type: z.enum([...CLIENT_AUTH_TYPES, ...Object.keys(CLIENT_AUTH_ALIASES)]).optional(),
  min_version: z.enum(VERSION_NAMES).optional(),
  max_version: z.enum(VERSION_NAMES).optional(),
});
type TlsSettings = z.infer<typeof tlsSchema>;

const fileSchema = z.strictObject({
  tls_server_config: tlsSchema.nullish(),
  http_server_config: z.strictObject({ headers: z.record(z.string(), z.string()).nullish() }).nullish(),
  basic_auth_users: z
    .record(z.string(), z.string().regex(BCRYPT_HASH, 'is not a bcrypt hash ($2a$, $2b$ or $2y$ with a cost of 04 to 31)'))
    .nullish(),
});
type FileSettings = z.infer<typeof fileSchema>;

/** One line per problem; unknown keys are told apart from exporter-toolkit keys we refuse. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap((issue) => {
    const at = issue.path.map(String).join('.');
    if (issue.code !== 'unrecognized_keys') return [`${at === '' ? '(top level)' : at}: ${issue.message}`];
    return issue.keys.map((key) => {
      const setting = at === '' ? key : `${at}.${key}`;
      return UNSUPPORTED.has(key)
        ? `${setting}: this exporter-toolkit setting is not supported by hermes-prometheus-sidecar`
        : `${setting}: unknown setting`;
    });
  });
}

function parseSettings(text: string, fail: Fail): FileSettings {
  let parsed: unknown;
  try {
    parsed = yaml().parse(text);
  } catch (error) {
    // Only the first line: the rest of a YAML error quotes the offending source lines.
    const firstLine = (error as Error).message.split('\n')[0] ?? '';
    return fail('', `is not valid YAML: ${firstLine.replace(/:$/, '')}`);
  }
  const result = fileSchema.safeParse(parsed ?? {});
  if (!result.success) return fail('', describeIssues(result.error.issues).join('; '));
  return result.data;
}

async function readBytes(file: string, setting: string, fail: Fail): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    return fail(setting, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/** Inline PEM or a file relative to the config file's directory (as exporter-toolkit resolves it). */
interface Source {
  readonly setting: string;
  readonly inline: string | undefined;
  readonly file: string | undefined;
}

function sources(settings: TlsSettings, baseDir: string) {
  const at = (name: string) => `tls_server_config.${name}`;
  const file = (value: string | undefined) => (value === undefined ? undefined : resolve(baseDir, value));
  return {
    cert: { setting: at(settings.cert_file === undefined ? 'cert' : 'cert_file'), inline: settings.cert, file: file(settings.cert_file) },
    key: { setting: at(settings.key_file === undefined ? 'key' : 'key_file'), inline: settings.key, file: file(settings.key_file) },
    clientCa: {
      setting: at(settings.client_ca_file === undefined ? 'client_ca' : 'client_ca_file'),
      inline: settings.client_ca,
      file: file(settings.client_ca_file),
    },
  } satisfies Record<string, Source>;
}

async function loadSource(source: Source, fail: Fail): Promise<Buffer | undefined> {
  if (source.file !== undefined) return readBytes(source.file, source.setting, fail);
  return source.inline === undefined ? undefined : Buffer.from(source.inline, 'utf8');
}

/** OpenSSL's messages name the routine and reason, never the bytes, so they are safe to show. */
const opensslReason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function checkCertAndKey(cert: Buffer, key: Buffer, names: { cert: string; key: string }, fail: Fail): void {
  try {
    secureContext({ cert });
  } catch (error) {
    fail(names.cert, `does not hold a PEM certificate: ${opensslReason(error)}`);
  }
  try {
    secureContext({ key });
  } catch (error) {
    fail(names.key, `does not hold an unencrypted PEM private key: ${opensslReason(error)}`);
  }
  try {
    secureContext({ cert, key });
  } catch (error) {
    fail(names.key, `does not match the certificate of ${names.cert}: ${opensslReason(error)}`);
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** createSecureContext silently skips CA text that is not a certificate, so parse each one. */
function checkClientCa(ca: Buffer, setting: string, fail: Fail): void {
  const blocks = ca.toString('utf8').match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) fail(setting, 'holds no PEM certificate');
  for (const [index, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (error) {
      fail(setting, `certificate ${index + 1} does not parse: ${opensslReason(error)}`);
    }
  }
}

function clientAuthOf(settings: TlsSettings): ClientAuthType {
  const name = settings.client_auth_type ?? 'NoClientCert';
  return CLIENT_AUTH_ALIASES[name] ?? (name as ClientAuthType);
}

function checkTlsSettings(settings: TlsSettings, clientAuth: ClientAuthType, fail: Fail): void {
  const at = (name: string) => `tls_server_config.${name}`;
  for (const [inline, file] of [['cert', 'cert_file'], ['key', 'key_file'], ['client_ca', 'client_ca_file']] as const) {
    if (settings[inline] !== undefined && settings[file] !== undefined) fail(at(file), `set ${inline} or ${file}, not both`);
  }
  if (settings.cert === undefined && settings.cert_file === undefined) fail(at('cert_file'), 'is required for TLS (or cert)');
  if (settings.key === undefined && settings.key_file === undefined) fail(at('key_file'), 'is required for TLS (or key)');
  const hasCa = settings.client_ca !== undefined || settings.client_ca_file !== undefined;
  if (hasCa && clientAuth === 'NoClientCert') {
    fail(at('client_ca_file'), 'is set but client_auth_type is NoClientCert: set a client_auth_type that uses it');
  }
  // Go would verify against the system roots here; a public CA vouching for scrapers is never
  // what anyone means, so insist on the CA that issued them.
  if (!hasCa && VERIFYING.has(clientAuth)) fail(at('client_ca_file'), `is required with client_auth_type ${clientAuth}`);
  const order = (name: TlsVersionName | undefined, fallback: TlsVersionName) => VERSION_NAMES.indexOf(name ?? fallback);
  if (order(settings.min_version, 'TLS12') > order(settings.max_version, 'TLS13')) fail(at('min_version'), 'is above max_version');
}

async function loadTls(settings: TlsSettings, baseDir: string, fail: Fail): Promise<WebTlsConfig> {
  const clientAuth = clientAuthOf(settings);
  checkTlsSettings(settings, clientAuth, fail);
  const from = sources(settings, baseDir);
  const cert = (await loadSource(from.cert, fail)) ?? fail(from.cert.setting, 'is required');
  const key = (await loadSource(from.key, fail)) ?? fail(from.key.setting, 'is required');
  const clientCa = await loadSource(from.clientCa, fail);
  checkCertAndKey(cert, key, { cert: from.cert.setting, key: from.key.setting }, fail);
  if (clientCa !== undefined) checkClientCa(clientCa, from.clientCa.setting, fail);
  const minVersion = TLS_VERSIONS[settings.min_version ?? 'TLS12'];
  const maxVersion = TLS_VERSIONS[settings.max_version ?? 'TLS13'];
  try {
    secureContext({ cert, key, ca: clientCa, minVersion, maxVersion });
  } catch (error) {
    fail('tls_server_config', `does not load: ${opensslReason(error)}`);
  }
  return { cert, key, clientCa, clientAuth, minVersion, maxVersion };
}

function loadUsers(users: Record<string, string> | null | undefined, fail: Fail): ReadonlyMap<string, string> {
  const map = new Map(Object.entries(users ?? {}));
  // Basic auth splits user from password at the first colon: such a user could never log in.
  for (const user of map.keys()) if (user.includes(':')) fail(`basic_auth_users.${user}`, 'a user name cannot contain ":"');
  return map;
}

function loadHeaders(headers: Record<string, string> | null | undefined, fail: Fail): Readonly<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const setting = `http_server_config.headers.${name}`;
    if (!Object.hasOwn(EXTRA_HEADERS, name)) {
      fail(setting, `cannot be configured (allowed: ${Object.keys(EXTRA_HEADERS).join(', ')})`);
    }
    const allowed = EXTRA_HEADERS[name];
    if (allowed !== undefined && !allowed.includes(value)) fail(setting, `must be one of ${allowed.join(', ')}`);
    try {
      validateHeaderValue(name, value);
    } catch {
      fail(setting, 'is not a valid HTTP header value');
    }
    // exporter-toolkit documents a blank value as "unset".
    if (value !== '') result[name] = value;
  }
  return result;
}

/** True when the section configures anything at all; an empty section means plain HTTP. */
const tlsRequested = (settings: TlsSettings | null | undefined): settings is TlsSettings =>
  settings !== null && settings !== undefined && Object.values(settings).some((value) => value !== undefined);

function namedFiles(settings: FileSettings, baseDir: string): string[] {
  const tls = settings.tls_server_config;
  const named = [tls?.cert_file, tls?.key_file, tls?.client_ca_file].filter((file) => file !== undefined);
  return named.map((file) => resolve(baseDir, file));
}

function fingerprintOf(text: string, tls: WebTlsConfig | undefined): string {
  const digest = createHash('sha256').update(text);
  for (const part of [tls?.cert, tls?.key, tls?.clientCa]) {
    digest.update(String(part?.length ?? -1)).update(':');
    if (part !== undefined) digest.update(part);
  }
  return digest.digest('hex');
}

/** Reads, validates and loads a web config file; throws WebConfigError naming the setting. */
export async function loadWebConfig(configPath: string): Promise<WebConfig> {
  const file = resolve(configPath);
  const baseDir = dirname(file);
  const text = (await readBytes(file, '', failer(file, [file]))).toString('utf8');
  const settings = parseSettings(text, failer(file, [file]));
  const files = [file, ...namedFiles(settings, baseDir)];
  const fail = failer(file, files);
  const tls = tlsRequested(settings.tls_server_config) ? await loadTls(settings.tls_server_config, baseDir, fail) : undefined;
  return {
    file,
    tls,
    users: loadUsers(settings.basic_auth_users, fail),
    headers: loadHeaders(settings.http_server_config?.headers, fail),
    files,
    fingerprint: fingerprintOf(text, tls),
  };
}
