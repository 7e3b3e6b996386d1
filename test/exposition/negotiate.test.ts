/** Content negotiation: formats by Accept with quality values, gzip by Accept-Encoding. */
import { describe, expect, it } from 'vitest';
import { acceptsGzip, negotiateFormat } from '../../src/exposition/negotiate.js';

// What Prometheus 2.42 sends (scrape.go, acceptHeader) with and without OpenMetrics.
const PROMETHEUS_OPENMETRICS =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
const PROMETHEUS_TEXT = 'text/plain;version=0.0.4;q=1,*/*;q=0.1';
// What Prometheus 2.42 sends with --enable-feature=native-histograms (scrape.go, scrapeAcceptHeaderWithProtobuf).
const PROMETHEUS_NATIVE =
  'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

describe('negotiateFormat', () => {
  it.each([
    [undefined, 'text'],
    ['', 'text'],
    ['*/*', 'text'],
    [PROMETHEUS_OPENMETRICS, 'openmetrics'],
    [PROMETHEUS_TEXT, 'text'],
    ['application/openmetrics-text', 'openmetrics'],
    ['application/openmetrics-text; version=1.0.0', 'openmetrics'],
    ['application/openmetrics-text; version="0.0.1"', 'openmetrics'],
    ['Application/OpenMetrics-Text; Version=1.0.0', 'openmetrics'],
    // quality values decide, whatever the order
    ['text/plain;q=0.4, application/openmetrics-text;q=0.9', 'openmetrics'],
    ['application/openmetrics-text;q=0.3, text/plain;q=0.8', 'text'],
    ['application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.6', 'text'],
    // a tie goes to the text format
    ['application/openmetrics-text;q=0.5, text/plain;q=0.5', 'text'],
    // q=0 excludes; the most specific range sets the quality
    ['application/openmetrics-text;q=0, */*', 'text'],
    ['text/plain;q=0, application/*;q=0.2', 'openmetrics'],
    ['text/*;q=0, application/openmetrics-text;q=0.1', 'openmetrics'],
    ['*/*;q=0.9, text/plain;q=0.1', 'openmetrics'],
    // versions we do not speak are not a match
    ['application/openmetrics-text;version=2.0.0', 'text'],
    ['text/plain;version=1.0.0, application/openmetrics-text;q=0.1', 'openmetrics'],
    // malformed quality values make a range unacceptable; garbage falls back to text
    ['application/openmetrics-text;q=high', 'text'],
    ['application/openmetrics-text;q=1.5', 'text'],
    ['application/json', 'text'],
    [';;;,,,/,*/,/*', 'text'],
    // protobuf: Prometheus with native histograms gets it; without, it gets what it always got
    [PROMETHEUS_NATIVE, 'protobuf'],
    ['application/vnd.google.protobuf', 'protobuf'],
    ['application/vnd.google.protobuf; proto="io.prometheus.client.MetricFamily"; encoding="delimited"', 'protobuf'],
    ['Application/Vnd.Google.Protobuf;Proto=IO.Prometheus.Client.MetricFamily;Encoding=Delimited', 'protobuf'],
    ['application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5,text/plain;q=0.9', 'text'],
    // an encoding or message we do not send is not a match
    ['application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text', 'text'],
    ['application/vnd.google.protobuf;proto=other.Message;encoding=delimited', 'text'],
    ['application/vnd.google.protobuf;encoding=compact-text, application/openmetrics-text;q=0.2', 'openmetrics'],
    // a tie goes to the text format, then OpenMetrics
    ['application/vnd.google.protobuf;q=0.5, text/plain;q=0.5', 'text'],
    ['application/vnd.google.protobuf;q=0.5, application/openmetrics-text;q=0.5', 'openmetrics'],
    ['application/*', 'openmetrics'],
  ] as const)('%j → %s', (accept, format) => {
    expect(negotiateFormat(accept)).toBe(format);
  });

  it('reads a bounded prefix of a huge header', () => {
    expect(negotiateFormat(`${'text/x;q=0.1,'.repeat(100_000)}application/openmetrics-text`)).toBe('text');
  });
});

describe('acceptsGzip', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['deflate, br', false],
    ['GZIP;q=0.5', true],
    ['gzip;q=0', false],
    ['x-gzip', true],
    ['*', true],
    ['*;q=0', false],
    ['gzip;q=0, *', false],
    ['identity;q=1, gzip;q=0.5', false],
    ['identity;q=0.5, gzip;q=0.5', true],
    ['identity', false],
  ] as const)('%j → %s', (header, gzip) => {
    expect(acceptsGzip(header)).toBe(gzip);
  });
});
