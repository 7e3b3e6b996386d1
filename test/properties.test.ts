/**
 * Properties (fast-check, time-boxed): no request body or field value makes the sidecar answer
 * 5xx, throw, emit NaN or write a value storage refuses; distinct label values never merge into one series; /metrics always
 * parses; webhook bodies and config files never fail in an unplanned way. `npm run fuzz` runs
 * the same properties for longer (FUZZ_SECONDS per property).
 */
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify as stringifyYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { BoundCheck, DEFAULT_STRING_LIMITS } from '../src/contract/bounds.js';
import { readEventData } from '../src/contract/events.js';
import { MAPPED_EVENTS } from '../src/contract/hooks.js';
import { VALUES } from '../src/contract/vocabulary.js';
import { sanitizeLabelValue } from '../src/metrics/labels.js';
import { series } from './support/exposition.js';
import { startTestSidecar, type TestSidecar } from './support/sidecar.js';
import { scratchDir } from './support/scratch.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const TIME_LIMIT_MS = Number(process.env.FUZZ_SECONDS ?? 8) * 1000;

// One exposition line: a metric name, optional labels with escaped values, a number.
const LABEL = String.raw`[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"`;
const SAMPLE_LINE = new RegExp(String.raw`^[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{${LABEL}(?:,${LABEL})*\})? (?:[-+]?[0-9.]+(?:e[-+]?[0-9]+)?|\+Inf|-Inf)$`);

/** Asserts the exposition parses line by line, holds no NaN and no series twice. */
function expectValidExposition(text: string): void {
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    expect(line).toMatch(SAMPLE_LINE);
    const key = line.slice(0, line.lastIndexOf(' '));
    expect(seen.has(key), `series rendered twice: ${key}`).toBe(false);
    seen.add(key);
  }
}

async function scrapeValid(harness: TestSidecar): Promise<void> {
  const text = await harness.scrape();
  expect(text).not.toMatch(/ NaN$/m);
  expectValidExposition(text);
  // Whatever arrived, storage refused nothing: every closed label value was a declared one.
  expect(text).toMatch(/^hermes_sidecar_invalid_values_total 0$/m);
}

const eventName = fc.oneof(fc.constantFrom(...MAPPED_EVENTS), fc.string({ maxLength: 20 }));
const fieldValue = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(Number.MAX_VALUE, -0, 1e308, 2 ** 53 + 1),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.oneof(fc.double(), fc.integer(), fc.string()), { maxKeys: 6 }),
  fc.array(fc.anything(), { maxLength: 3 }),
);
const FIELDS = [
  'provider', 'model', 'tool_name', 'platform', 'reason', 'status_code', 'pattern_key', 'turn_exit_reason', 'finish_reason',
  'child_role', 'status', 'error_type', 'choice', 'surface', 'api_duration', 'duration_ms', 'started_at', 'first_chunk_at',
  'usage', 'retryable', 'retry_count', 'max_retries', 'api_request_id', 'tool_call_id', 'turn_id', 'session_id',
  'child_session_id', 'session_key', 'completed', 'failed', 'interrupted', 'error', 'dropped', 'interval_seconds',
  'size_bytes', 'run_duration_ms', 'turn_duration_ms', 'event', 'stop_reason', 'memory_provider', 'action', 'child_status',
];
const fields = fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 12 });
const flatLine = fc.tuple(eventName, fields).map(([event, data]) => ({ ...data, event }));
const envelopeLine = fc.tuple(eventName, fields).map(([event, data]) => ({ event, data }));
const pluginLine = fc
  .tuple(eventName, fields, fc.constantFrom('i1', 'i2'), fc.oneof(fc.nat(50), fc.anything()), fc.oneof(fc.double(), fc.constant(undefined)))
  .map(([event, data, instance, seq, observed]) => ({ event, data, instance, seq, observed_at: observed }));
const anyLine = fc.oneof(flatLine, envelopeLine, pluginLine, fc.anything());

describe('properties', () => {
  it('arbitrary bytes never get a 5xx and never break /metrics', async () => {
    const harness = startTestSidecar();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), fc.constantFrom('application/x-ndjson', 'application/json'), async (bytes, type) => {
        const response = await harness.ingest.post('/v1/events').set('Content-Type', type).send(Buffer.from(bytes));
        expect([202, 400]).toContain(response.status);
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
    await scrapeValid(harness);
  });

  it('arbitrary events in every shape never get a 5xx, never emit NaN, and /metrics always parses', async () => {
    const harness = startTestSidecar();
    await fc.assert(
      fc.asyncProperty(fc.array(anyLine, { minLength: 1, maxLength: 20 }), async (lines) => {
        const body = lines.map((line) => JSON.stringify(line) ?? 'undefined').join('\n');
        const response = await harness.ingest.post('/v1/events').set('Content-Type', 'application/x-ndjson').send(body);
        expect([202, 400]).toContain(response.status);
        await scrapeValid(harness);
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
  });

  it('distinct label values never merge into one series', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 40 }),
        async (first, second) => {
          const [a, b] = [sanitizeLabelValue(first), sanitizeLabelValue(second)];
          fc.pre(a !== '' && b !== '' && a !== b && a !== 'other' && b !== 'other' && a !== 'unknown' && b !== 'unknown');
          const harness = startTestSidecar();
          const call = (tool: string, model: string) => ({ event: 'post_tool_call', tool_name: tool, status: 'ok' , model });
          await harness.postNdjson([call(first, second), call(second, first)]);
          const text = await harness.scrape();
          expectValidExposition(text);
          const toolSeries = text.split('\n').filter((line) => line.startsWith('hermes_tool_calls_total{'));
          expect(toolSeries).toHaveLength(2);
          for (const line of toolSeries) expect(line.endsWith(' 1')).toBe(true);
        },
      ),
      { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
  });

  it('non-finite and negative numbers never reach a metric', async () => {
    const harness = startTestSidecar();
    const bad = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, -1e-9];
    // JSON cannot carry NaN or Infinity; these arrive as null or huge numbers, negatives as is.
    const lines = bad.flatMap((value) => [
      { event: 'post_tool_call', tool_name: 't', status: 'ok', duration_ms: value },
      { event: 'post_api_request', provider: 'p', model: 'm', api_duration: value, usage: { input_tokens: value, output_tokens: value } },
      { event: 'memory_write', memory_provider: 'x', action: 'a', size_bytes: value },
    ]);
    const body = lines.map((line) => JSON.stringify(line)).join('\n').replaceAll('null', '1e999');
    await harness.ingest.post('/v1/events').set('Content-Type', 'application/x-ndjson').send(body).expect(202);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 't', status: 'ok' }))).toBe(5);
    expect(samples.get(series('hermes_tool_call_duration_seconds_count', { tool: 't', status: 'ok' }))).toBeUndefined();
    expect(samples.get(series('hermes_tokens_total', { kind: 'main', provider: 'p', model: 'm', token_type: 'input' }))).toBeUndefined();
    expect(samples.get(series('hermes_memory_write_bytes_total', { memory_provider: 'x', action: 'a' }))).toBeUndefined();
    await scrapeValid(harness);
  });
});

describe('properties of the other inputs', () => {
  it('arbitrary signed webhook bodies never get a 5xx and never break /metrics', async () => {
    const secretDir = scratchDir('sidecar-fuzz-');
    writeFileSync(join(secretDir, 'secret'), 'fuzz-secret');
    const harness = startTestSidecar({ 'webhook.secret-file': join(secretDir, 'secret') });
    const delivery = fc.oneof(
      fc.anything(),
      fc.record({ hook_event_name: eventName, tool_name: fieldValue, session_id: fieldValue, extra: fc.oneof(fields, fieldValue), delivery_id: fc.oneof(fc.uuid(), fieldValue), timestamp: fc.oneof(fc.date().map((date) => (Number.isNaN(date.getTime()) ? 'x' : date.toISOString())), fieldValue) }, { requiredKeys: [] }),
    );
    await fc.assert(
      fc.asyncProperty(delivery, fc.boolean(), async (body, signed) => {
        const text = JSON.stringify(body) ?? 'null';
        const signature = `sha256=${createHmac('sha256', signed ? 'fuzz-secret' : 'other').update(text).digest('hex')}`;
        const response = await harness.ingest.post('/v1/hooks').set({ 'Content-Type': 'application/json', 'X-Hermes-Signature-256': signature }).send(text);
        expect(signed ? [202, 400] : [403]).toContain(response.status);
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
    await scrapeValid(harness);
  });

  it('arbitrary config files either load or fail with a ConfigError, never anything else', async () => {
    const dir = scratchDir('sidecar-fuzz-config-');
    const file = join(dir, 'config.yaml');
    const value = fc.oneof(fc.integer(), fc.double(), fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.oneof(fc.double(), fc.string()), { maxLength: 4 }));
    const section = fc.dictionary(fc.constantFrom('listen_address', 'queue_capacity', 'max-body-bytes', 'telemetry-path', 'cap', 'allow', 'rewrite', 'api_seconds', 'count', 'level', 'bogus'), value, { maxKeys: 4 });
    const document = fc.oneof(
      fc.string(),
      fc.dictionary(fc.constantFrom('web', 'ingest', 'labels', 'buckets', 'log', 'correlator', 'unknown'), fc.oneof(section, value, fc.dictionary(fc.constantFrom('model', 'tool', 'session_id'), section)), { maxKeys: 4 }),
    );
    await fc.assert(
      fc.asyncProperty(document, async (doc) => {
        writeFileSync(file, typeof doc === 'string' ? doc : stringifyYaml(doc));
        try {
          const config = loadConfig({ argv: [`--config.file=${file}`], env: {} });
          expect(config.ingest.queueCapacity).toBeGreaterThan(0);
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
        }
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
  });
});

describe('properties of client strings', () => {
  it('whatever strings arrive in whatever fields of any hook, the event data holds none past its byte limit', () => {
    const { maxIdBytes, maxLabelValueBytes } = DEFAULT_STRING_LIMITS;
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 400 }),
      fc.string({ unit: 'binary', maxLength: 2000 }),
      fc.integer({ min: 0, max: 70_000 }).map((length) => 'é'.repeat(length)),
    );
    const field = fc.constantFrom(...VALUES.bounded_field, ...Object.getOwnPropertyNames(Object.prototype));
    const strings = (value: unknown, key = '', found: [string, string][] = []): [string, string][] => {
      if (typeof value === 'string') found.push([key, value]);
      else if (typeof value === 'object' && value !== null) for (const [inner, nested] of Object.entries(value)) strings(nested, inner, found);
      return found;
    };
    fc.assert(
      fc.property(fc.constantFrom(...MAPPED_EVENTS), fc.dictionary(field, text), (hook, fields) => {
        const data = readEventData(hook, fields, new BoundCheck());
        for (const [key, value] of strings(data)) {
          const limit = /Id$|^sessionKey$/.test(key) ? maxIdBytes : maxLabelValueBytes;
          expect(Buffer.byteLength(value, 'utf8')).toBeLessThanOrEqual(limit);
        }
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
  });
});
