/**
 * Errors with stable codes, and the one table that maps each code to an HTTP status and to the
 * `reason` of hermes_sidecar_events_rejected_total. Messages are fixed text: they never echo
 * request content.
 */

export const ERRORS = {
  empty_body: { status: 400, rejected: 'invalid_json', message: 'the request body is empty' },
  invalid_json: { status: 400, rejected: 'invalid_json', message: 'the request body is not JSON or NDJSON' },
  invalid_body: { status: 400, rejected: 'invalid_event', message: 'the JSON body must be an event object or an array of them' },
  invalid_compact_body: { status: 400, rejected: 'invalid_event', message: 'the compact body does not match its frame or schema (docs/contract.md, Compact encoding)' },
  invalid_encoding: { status: 400, rejected: 'invalid_json', message: 'the request body could not be decompressed' },
  body_timeout: { status: 408, rejected: 'body_timeout', message: 'the request body did not arrive in time' },
  unauthorized: { status: 401, rejected: 'unauthorized', message: 'a valid bearer token is required' },
  signature_missing: { status: 401, rejected: 'missing_signature', message: 'the X-Hermes-Signature-256 header is missing' },
  bad_signature: { status: 403, rejected: 'bad_signature', message: 'the webhook signature does not match' },
  not_found: { status: 404, rejected: undefined, message: 'not found' },
  // An ingest URL opened in a browser or with curl's default GET: the route exists, only for POST.
  method_not_allowed: { status: 405, rejected: undefined, message: 'this ingest route accepts only POST', allow: 'POST' },
  webhooks_disabled: { status: 404, rejected: undefined, message: 'webhooks are disabled: no webhook secret is configured' },
  too_large: { status: 413, rejected: 'too_large', message: 'the request body is over the size limit (after decompression); split it' },
  too_many_events: { status: 413, rejected: 'too_large', message: 'the request has more events than allowed; split it' },
  unsupported_media_type: {
    status: 415,
    rejected: 'unsupported_media_type',
    message: 'use Content-Type application/x-ndjson or application/json',
  },
  // /v1/hooks takes one signed JSON delivery: offering NDJSON there would invite a second 415.
  unsupported_media_type_json: {
    status: 415,
    rejected: 'unsupported_media_type',
    message: 'use Content-Type application/json',
  },
  // A newer plugin's compact body: the plugin answers a 415 by sending NDJSON.
  unsupported_compact_version: {
    status: 415,
    rejected: 'unsupported_media_type',
    message: 'this sidecar reads version 1 of the compact body only; send NDJSON',
  },
  unsupported_encoding: {
    status: 415,
    rejected: 'unsupported_media_type',
    message: 'the only Content-Encoding accepted is gzip',
  },
  queue_full: { status: 429, rejected: undefined, message: 'the ingest queue is full; retry after the Retry-After delay' },
  delivery_in_progress: {
    status: 429,
    rejected: undefined,
    message: 'a delivery with this delivery_id is being applied; retry after the Retry-After delay',
  },
  inflight_limit: {
    status: 503,
    rejected: 'inflight_limit',
    message: 'too many request bytes are being read; retry after the Retry-After delay',
  },
  memory_limit: {
    status: 503,
    rejected: 'memory_limit',
    message: 'the sidecar is over its memory limit; retry after the Retry-After delay',
  },
  shutting_down: { status: 503, rejected: undefined, message: 'the sidecar is shutting down; retry after the Retry-After delay' },
  internal: { status: 500, rejected: undefined, message: 'internal error' },
} as const satisfies Record<string, { status: number; rejected: string | undefined; message: string; allow?: string }>;

export type ErrorCode = keyof typeof ERRORS;

export class SidecarError extends Error {
  override readonly name = 'SidecarError';

  constructor(readonly code: ErrorCode) {
    super(ERRORS[code].message);
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  /** The methods a 405 offers (the Allow header), else undefined. */
  get allow(): string | undefined {
    const entry = ERRORS[this.code];
    return 'allow' in entry ? entry.allow : undefined;
  }

  /** Whether the sender should retry later (429/503 carry Retry-After). */
  get retryable(): boolean {
    return this.status === 429 || this.status === 503;
  }
}

/** A setting that cannot be used: the message names the setting and where it came from. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
