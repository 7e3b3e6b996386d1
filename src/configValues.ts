/**
 * What a setting's value may be: the kinds of the option table (each a check and the "must be …"
 * text the user reads), listen addresses, and where a value came from, for the one sentence that
 * names a bad value.
 */
import { z } from 'zod';
import { numberLike, oneOf, positiveWholeNumber, show } from './configFile.js';
import type { LogFormat } from './log.js';
import { MAX_NATIVE_BUCKETS } from './metrics/native.js';

export type Kind = 'address' | 'path' | 'file' | 'positiveInt' | 'nonNegativeInt' | 'bytes' | 'bytesOrZero' | 'seconds' | 'logLevel' | 'logFormat' | 'boolean' | 'bucketFactor' | 'positiveNumber' | 'nativeBuckets';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** host:port, [v6]:port, or :port (every interface). */
export function parseListenAddress(text: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || !Number.isInteger(port) || port > 65_535) {
    throw new Error('expected host:port, [ipv6]:port or :port with a port from 0 to 65535');
  }
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const LOG_FORMATS = ['json', 'logfmt'] as const satisfies readonly LogFormat[];

/**
 * Byte units as Kubernetes, systemd and the IEC write them: Ki, Mi, Gi, Ti (with or without a
 * trailing B) are powers of 1024; k, M, G, T (with or without B) powers of 1000, as Kubernetes
 * reads them. Case is not significant (a byte size has no milli- or bit- reading here).
 */
const BYTE_UNITS: ReadonlyMap<string, number> = new Map([
  ['', 1], ['b', 1],
  ['k', 1e3], ['kb', 1e3], ['m', 1e6], ['mb', 1e6], ['g', 1e9], ['gb', 1e9], ['t', 1e12], ['tb', 1e12],
  ['ki', 2 ** 10], ['kib', 2 ** 10], ['mi', 2 ** 20], ['mib', 2 ** 20], ['gi', 2 ** 30], ['gib', 2 ** 30], ['ti', 2 ** 40], ['tib', 2 ** 40],
]);

/** A byte size: a number of bytes (whole, 0 or more), or a number and a unit (`192Mi`, `256MB`, `1GiB`); undefined otherwise. */
export function parseByteSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = BYTE_UNITS.get(match?.[2]?.toLowerCase() ?? 'none');
  if (match === null || unit === undefined) return undefined;
  const bytes = Number(match[1]) * unit;
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

const BYTES_EXPECTED = 'a size in bytes: a whole number, or a number and a unit (KiB or Ki, MiB or Mi, GiB or Gi, TiB or Ti: powers of 1024; kB or k, MB or M, GB or G, TB or T: powers of 1000), such as 192Mi'

const byteSize = (least: number) =>
  z.unknown().transform((value, ctx) => {
    const bytes = parseByteSize(value);
    if (bytes !== undefined && bytes >= least) return bytes;
    ctx.addIssue({ code: 'custom', message: 'not a byte size' });
    return z.NEVER;
  });

/** The check and the "must be …" text of each kind: the text, not the checker's, reaches the user. */
export const KINDS: Record<Kind, { readonly schema: z.ZodType; readonly expected: string }> = {
  address: {
    schema: z.string().transform((text, ctx) => {
      try {
        return parseListenAddress(text);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not an address' });
        return z.NEVER;
      }
    }),
    expected: 'host:port, [ipv6 address]:port or :port, with a port from 0 to 65535',
  },
  path: { schema: z.string().regex(/^\/[\w./-]*$/), expected: 'a URL path starting with / (letters, digits and _ . / - only)' },
  file: { schema: z.string().min(1), expected: 'a file path' },
  positiveInt: { schema: positiveWholeNumber, expected: 'a positive whole number' },
  nonNegativeInt: {
    schema: numberLike(z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)),
    expected: 'a whole number, 0 or more',
  },
  bytes: { schema: byteSize(1), expected: `${BYTES_EXPECTED}, above 0` },
  bytesOrZero: { schema: byteSize(0), expected: `${BYTES_EXPECTED}; 0 disables` },
  seconds: { schema: numberLike(z.number().positive().finite()), expected: 'a positive number of seconds' },
  bucketFactor: { schema: numberLike(z.number().gt(1).finite()), expected: 'a number above 1 (the growth factor from one native histogram bucket to the next)' },
  positiveNumber: { schema: numberLike(z.number().positive().finite()), expected: 'a positive number' },
  nativeBuckets: {
    schema: numberLike(z.number().int().min(1).max(MAX_NATIVE_BUCKETS)),
    expected: `a whole number from 1 to ${MAX_NATIVE_BUCKETS}`,
  },
  logLevel: { schema: z.enum(LOG_LEVELS), expected: `one of ${oneOf(LOG_LEVELS)}` },
  logFormat: { schema: z.enum(LOG_FORMATS), expected: oneOf(LOG_FORMATS) },
  boolean: {
    schema: z.union([z.boolean(), z.enum(['true', 'false']).transform((text) => text === 'true')]),
    expected: 'true or false',
  },
};

/** Where a value came from, for the messages: `--flag=…`, an environment variable, a file key or a default. */
export type Origin =
  | { readonly from: 'flag' }
  | { readonly from: 'env'; readonly name: string }
  | { readonly from: 'file'; readonly key: string; readonly path: string }
  | { readonly from: 'default' };

export interface Sourced {
  readonly flag: string;
  readonly value: unknown;
  readonly origin: Origin;
}

/** The subject of an error sentence: the setting, its value and where it came from. */
export function describe({ flag, value, origin }: Sourced): string {
  switch (origin.from) {
    case 'flag':
      return `--${flag}=${show(value)} (from the command line)`;
    case 'env':
      return `${origin.name}=${show(value)} (from the environment, for --${flag})`;
    case 'file':
      return `${origin.key}: ${show(value)} in the config file ${origin.path}`;
    case 'default':
      return `the default of --${flag} (${show(value)})`;
  }
}
