/**
 * What a setting's value may be: the kinds of the option table (each a check and the "must be …"
 * text the user reads), listen addresses, and where a value came from, for the one sentence that
 * names a bad value.
 */
import { z } from 'zod';
import { numberLike, oneOf, positiveWholeNumber, show } from './configFile.js';
import type { LogFormat } from './log.js';
import { MAX_NATIVE_BUCKETS } from './metrics/native.js';

export type Kind = 'address' | 'path' | 'file' | 'positiveInt' | 'nonNegativeInt' | 'seconds' | 'logLevel' | 'logFormat' | 'boolean' | 'bucketFactor' | 'positiveNumber' | 'nativeBuckets';

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
