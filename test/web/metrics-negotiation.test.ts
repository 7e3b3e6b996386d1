/**
 * /metrics over real HTTP: the format follows Accept (with quality values), gzip follows
 * Accept-Encoding, and both formats carry the same samples.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import { parseSamples } from '../support/exposition.js';
import { classicSamples, decodeExposition, sortedLabelSamples } from '../support/protobuf.js';
import { startTestSidecar, type TestSidecar } from '../support/sidecar.js';

interface Raw {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

let harness: TestSidecar;
let server: Server;

/** A GET with exactly these headers, body bytes as sent (no automatic decompression). */
function get(headers: Record<string, string>): Promise<Raw> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: '/metrics', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

/** The samples that count the scrapes themselves, which move from one scrape to the next. */
const SCRAPE_COUNTERS = /^hermes_sidecar_(scrape_renders|scrapes_paced)_total /;
const withoutScrapeCounters = (text: string) =>
  text
    .split('\n')
    .filter((line) => !SCRAPE_COUNTERS.test(line))
    .join('\n');

const OPENMETRICS = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
const TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const PROTOBUF = 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';
// Prometheus 2.42 with --enable-feature=native-histograms (scrape.go, scrapeAcceptHeaderWithProtobuf).
const PROMETHEUS_NATIVE =
  'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

beforeAll(async () => {
  harness = startTestSidecar();
  await harness.postNdjson([
    { event: 'post_tool_call', tool_name: 'terminal', status: 'ok', tool_call_id: 'call_1', duration_ms: 30 },
    { event: 'post_api_request', provider: 'openrouter', model: 'm', api_request_id: 'r1', api_duration: 1.5, usage: { input_tokens: 10, output_tokens: 5 } },
  ]);
  await harness.sidecar.queue.drained();
  server = harness.sidecar.webApp.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('/metrics negotiation', () => {
  it('answers the text format without an Accept header, uncompressed', async () => {
    const answer = await get({});
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe(TEXT);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.headers.vary).toBe('Accept, Accept-Encoding');
    const text = answer.body.toString('utf8');
    expect(text).toContain('# TYPE hermes_tool_calls_total counter\nhermes_tool_calls_total{tool="terminal",status="ok"} 1\n');
    expect(text).not.toContain('# EOF');
  });

  it('answers OpenMetrics to what Prometheus sends, ending in # EOF', async () => {
    const answer = await get({ Accept: 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' });
    expect(answer.headers['content-type']).toBe(OPENMETRICS);
    const text = answer.body.toString('utf8');
    expect(text).toContain('# TYPE hermes_tool_calls counter\nhermes_tool_calls_total{tool="terminal",status="ok"} 1\n');
    expect(text).toContain('# TYPE hermes_tool_call_duration_seconds histogram\n# UNIT hermes_tool_call_duration_seconds seconds\n');
    expect(text.endsWith('\n# EOF\n')).toBe(true);
  });

  it('follows quality values', async () => {
    expect((await get({ Accept: 'application/openmetrics-text;q=0.2, text/plain;q=0.9' })).headers['content-type']).toBe(TEXT);
    expect((await get({ Accept: 'text/plain;q=0.2, application/openmetrics-text;q=0.9' })).headers['content-type']).toBe(OPENMETRICS);
  });

  it.each([
    ['text', 'text/plain'],
    ['OpenMetrics', 'application/openmetrics-text'],
  ])('gzips the %s format when accepted, and the bytes gunzip to the uncompressed answer', async (_name, accept) => {
    const plain = await get({ Accept: accept });
    const zipped = await get({ Accept: accept, 'Accept-Encoding': 'gzip, deflate' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-type']).toBe(plain.headers['content-type']);
    expect(zipped.body.length).toBeLessThan(plain.body.length);
    expect(withoutScrapeCounters(gunzipSync(zipped.body).toString('utf8'))).toBe(withoutScrapeCounters(plain.body.toString('utf8')));
    const refused = await get({ Accept: accept, 'Accept-Encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it('answers protobuf to Prometheus with native histograms, plain or gzipped, with the text format\'s samples', async () => {
    const plain = await get({ Accept: PROMETHEUS_NATIVE });
    expect(plain.headers['content-type']).toBe(PROTOBUF);
    const zipped = await get({ Accept: PROMETHEUS_NATIVE, 'Accept-Encoding': 'gzip' });
    expect(zipped.headers['content-type']).toBe(PROTOBUF);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    const text = sortedLabelSamples(parseSamples(withoutScrapeCounters((await get({})).body.toString('utf8'))));
    for (const body of [plain.body, gunzipSync(zipped.body)]) {
      const families = decodeExposition(body);
      const duration = families.find((family) => family.name === 'hermes_tool_call_duration_seconds');
      // One 30 ms observation: schema 3, key ceil(8·log2 0.03) = -40.
      expect(duration?.metric[0]?.histogram).toMatchObject({ sampleCount: 1, schema: 3, zeroCount: 0, positiveSpan: [{ offset: -40, length: 1 }], positiveDelta: [1] });
      const samples = classicSamples(families.filter((family) => !SCRAPE_COUNTERS.test(`${family.name} `)));
      expect(samples).toEqual(text);
    }
  });

  it('carries the same sample values in both formats', async () => {
    const text = parseSamples(withoutScrapeCounters((await get({})).body.toString('utf8')));
    const openmetrics = parseSamples(
      withoutScrapeCounters((await get({ Accept: 'application/openmetrics-text' })).body.toString('utf8'))
        .split('\n')
        .map((line) => line.split(' # ')[0] ?? '')
        .join('\n'),
    );
    // OpenMetrics names counters' samples with _total as the text format does; exemplars aside, the samples are equal.
    expect(new Map([...openmetrics].filter(([series]) => series !== 'EOF'))).toEqual(text);
  });
});
