/**
 * Basic-auth verification for the web listener: which credentials are right, remembered for a
 * while, and how much bcrypt a stranger can make the sidecar run.
 *
 * bcrypt at cost 10 costs 50-100 ms of CPU per check by design. It runs in one worker thread
 * (bcryptWorker.ts), never on the event loop, so a flood of wrong passwords costs that thread,
 * not the loop that serves scrapes and ingest.
 */
import { createHmac, randomBytes } from 'node:crypto';
import PQueue from 'p-queue';
import { BcryptWorker } from './bcryptWorker.js';

export type PasswordCompare = (password: string, hash: string) => Promise<boolean>;

const DEFAULT_AUTH_CACHE_TTL_MS = 120_000;
const AUTH_CACHE_MAX_ENTRIES = 256;
/** Failed credentials are remembered this long, so repeating one costs no bcrypt. */
const FAILURE_CACHE_TTL_MS = 60_000;
const FAILURE_CACHE_MAX_ENTRIES = 1024;
/** The worker is one thread: a second verification at once would only wait inside it. */
const DEFAULT_MAX_CONCURRENT_VERIFICATIONS = 1;
/** Verifications allowed to wait; past this a request is refused at once (429), with no bcrypt. */
const DEFAULT_MAX_WAITING_VERIFICATIONS = 8;

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
