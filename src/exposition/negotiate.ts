/**
 * Content negotiation for /metrics: which format (Accept) and whether to gzip (Accept-Encoding),
 * honouring quality values as RFC 9110 §12.5 describes.
 *
 * The formats on offer are OpenMetrics 1.0 (`application/openmetrics-text`, version 1.0.0 or
 * 0.0.1, the same wire format), the text format 0.0.4 (`text/plain`) and delimited protobuf
 * MetricFamily messages (`application/vnd.google.protobuf` with `proto=io.prometheus.client.MetricFamily`
 * and `encoding=delimited`: a range naming another proto or encoding does not match it). Each gets
 * the quality of the most specific range that matches it; the highest quality wins and a tie goes
 * to the text format, then OpenMetrics. Like client_golang, an Accept header nothing matches (or
 * none at all) gets the text format rather than a 406: Prometheus can always read it.
 */
import type { ExpositionFormat } from './exposition.js';
/** The protobuf exposition's media type, as client_golang sends it (delimited MetricFamily messages). */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';

export const CONTENT_TYPES: Readonly<Record<ExpositionFormat, string>> = {
  text: 'text/plain; version=0.0.4; charset=utf-8',
  openmetrics: 'application/openmetrics-text; version=1.0.0; charset=utf-8',
  protobuf: PROTOBUF_CONTENT_TYPE,
};

interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly params: ReadonlyMap<string, string>;
  readonly quality: number;
}

interface Offer {
  readonly format: ExpositionFormat;
  readonly type: string;
  readonly subtype: string;
  /** Versions this offer satisfies when the range names one. */
  readonly versions: ReadonlySet<string>;
  /** Parameters a range may name, with the one value each must have to match this offer. */
  readonly required?: ReadonlyMap<string, string>;
}

// In order of preference on a tie.
const OFFERS: readonly Offer[] = [
  { format: 'text', type: 'text', subtype: 'plain', versions: new Set(['0.0.4']) },
  { format: 'openmetrics', type: 'application', subtype: 'openmetrics-text', versions: new Set(['1.0.0', '0.0.1']) },
  {
    format: 'protobuf',
    type: 'application',
    subtype: 'vnd.google.protobuf',
    versions: new Set(),
    required: new Map([
      ['proto', 'io.prometheus.client.metricfamily'],
      ['encoding', 'delimited'],
    ]),
  },
];

/** Headers beyond this many characters are read no further (they come before authentication). */
const MAX_HEADER_LENGTH = 4096;
const MAX_ELEMENTS = 64;

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/** `q=0.5` → 0.5; anything malformed is 0 (not acceptable), as a strict reading of the grammar gives. */
function parseQuality(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (!/^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(raw)) return 0;
  return Number(raw);
}

/** Comma-separated elements, each `token;param=value;...`, bounded in length and count. */
function elements(header: string): { value: string; params: Map<string, string> }[] {
  return header
    .slice(0, MAX_HEADER_LENGTH)
    .split(',')
    .slice(0, MAX_ELEMENTS)
    .flatMap((element) => {
      const [value = '', ...rest] = element.split(';').map((part) => part.trim());
      if (value === '') return [];
      const params = new Map<string, string>();
      for (const param of rest) {
        const equals = param.indexOf('=');
        if (equals > 0) params.set(param.slice(0, equals).trim().toLowerCase(), unquote(param.slice(equals + 1).trim()));
      }
      return [{ value: value.toLowerCase(), params }];
    });
}

function mediaRanges(accept: string): MediaRange[] {
  return elements(accept).flatMap(({ value, params }) => {
    const [type, subtype, extra] = value.split('/');
    if (type === undefined || subtype === undefined || extra !== undefined || type === '' || subtype === '') return [];
    const quality = parseQuality(params.get('q'));
    params.delete('q');
    return [{ type, subtype, params, quality }];
  });
}

/** How specific a range is for an offer (3 = the exact type and version, 0 = any type), or -1 when it does not match. */
function specificity(range: MediaRange, offer: Offer): number {
  if (range.type === '*' && range.subtype === '*') return 0;
  if (range.type !== offer.type) return -1;
  if (range.subtype === '*') return 1;
  if (range.subtype !== offer.subtype) return -1;
  if (offer.required !== undefined) return requiredParamsMatch(range, offer.required) ? 3 : -1;
  const version = range.params.get('version');
  if (version === undefined) return 2;
  return offer.versions.has(version) ? 3 : -1;
}

/** Whether every parameter the offer requires that the range names has the required value (case-insensitive). */
function requiredParamsMatch(range: MediaRange, required: ReadonlyMap<string, string>): boolean {
  for (const [name, value] of required) {
    const named = range.params.get(name);
    if (named !== undefined && named.toLowerCase() !== value) return false;
  }
  return true;
}

/** The quality of an offer: that of the most specific matching range (0 when none matches). */
function qualityOf(offer: Offer, ranges: readonly MediaRange[]): number {
  let best = -1;
  let quality = 0;
  for (const range of ranges) {
    const level = specificity(range, offer);
    if (level > best) {
      best = level;
      quality = range.quality;
    }
  }
  return quality;
}

/** The format to answer with for an Accept header. */
export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  if (accept === undefined || accept.trim() === '') return 'text';
  const ranges = mediaRanges(accept);
  let chosen: ExpositionFormat = 'text';
  let chosenQuality = 0;
  for (const offer of OFFERS) {
    const quality = qualityOf(offer, ranges);
    if (quality > chosenQuality) {
      chosen = offer.format;
      chosenQuality = quality;
    }
  }
  return chosen;
}

/** Whether to gzip for an Accept-Encoding header: gzip (or `*`) acceptable with q > 0 and not below identity. */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (acceptEncoding === undefined) return false;
  let gzip: number | undefined;
  let wildcard: number | undefined;
  let identity: number | undefined;
  for (const { value, params } of elements(acceptEncoding)) {
    const quality = parseQuality(params.get('q'));
    if (value === 'gzip' || value === 'x-gzip') gzip = Math.max(gzip ?? 0, quality);
    else if (value === '*') wildcard = quality;
    else if (value === 'identity') identity = quality;
  }
  const gzipQuality = gzip ?? wildcard ?? 0;
  return gzipQuality > 0 && gzipQuality >= (identity ?? 0);
}
