/**
 * With every metric family populated: each catalogue metric has samples, `promtool check metrics`
 * reports nothing, and no sentinel planted in content fields reaches /metrics or any log line, in
 * either log format, at trace level.
 */
import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createSidecar } from '../../src/app.js';
import { defaultConfig } from '../../src/config.js';
import { createLogger, type LogFormat } from '../../src/log.js';
import { CATALOGUE } from '../../src/catalogue.js';
import { familyName, unitOf } from '../../src/exposition/serializer.js';
import { openMetricsParser, parseOpenMetrics } from '../support/openmetrics.js';
import { promtool } from '../support/tools.js';
import { FakeClock, readJsonl } from '../support/sidecar.js';

const SENTINEL = 'SECRET-';

/** Every content field Hermes passes (docs/contract.md lists what is forwarded instead), each carrying a sentinel. */
const CONTENT_FIELDS = {
  user_message: `${SENTINEL}prompt`,
  conversation_history: [{ role: 'user', content: `${SENTINEL}history` }],
  request_messages: [`${SENTINEL}messages`],
  system_prompt: `${SENTINEL}system`,
  request: { body: { messages: [`${SENTINEL}request`] } },
  response: { assistant_message: { content: `${SENTINEL}response` } },
  assistant_message: `${SENTINEL}assistant`,
  assistant_response: `${SENTINEL}answer`,
  args: { command: `${SENTINEL}args` },
  tool_args: { path: `${SENTINEL}tool-args` },
  result: `${SENTINEL}result`,
  tool_result: `${SENTINEL}tool-result`,
  command: `rm -rf /${SENTINEL}command`,
  description: `${SENTINEL}description`,
  child_goal: `${SENTINEL}goal`,
  child_summary: `${SENTINEL}summary`,
  error: { type: 'RateLimitError', message: `${SENTINEL}error-message` },
  error_message: `${SENTINEL}error`,
  memory_path: `/home/${SENTINEL}path`,
  memory_name: `${SENTINEL}memory`,
  base_url: `https://${SENTINEL}.example/v1`,
  tool_call_history: [{ tool_input: { targets: { path: `${SENTINEL}target` } } }],
};

function populatedSidecar(format: LogFormat = 'json') {
  const logs: string[] = [];
  const clock = new FakeClock();
  // semconv on, so its families are populated too.
  const config = defaultConfig({ 'correlator.span-ttl': '60', 'metrics.semconv': 'true' });
  // A small model cap and series cap, so the cardinality guard and the global cap both fold.
  const sidecar = createSidecar(
    { ...config, maxAgentSeries: 60, labels: { ...config.labels, model: { cap: 2 } } },
    { logger: createLogger('trace', format, { write: (line: string) => void logs.push(line) }), clock: clock.read },
  );
  return { sidecar, clock, logs, ingest: request(sidecar.ingestApp), web: request(sidecar.webApp) };
}

async function populate(harness: ReturnType<typeof populatedSidecar>, accept?: string): Promise<string> {
  const post = (lines: unknown[], type = 'application/x-ndjson') =>
    harness.ingest.post('/v1/events').set('Content-Type', type).send(lines.map((line) => JSON.stringify(line)).join('\n'));
  const withContent = (lines: Record<string, unknown>[]) => lines.map((line) => ({ ...CONTENT_FIELDS, ...line }));
  await post(withContent(readJsonl('conversation.jsonl')));
  await post(readJsonl('envelope.jsonl').map((line) => ({ ...line, data: { ...CONTENT_FIELDS, ...(line.data as object) } })));
  // delivery health: a gap, a duplicate, a heartbeat with drops
  const seq = (n: number) => ({ event: 'pre_llm_call', instance: 'p1', seq: n, data: { ...CONTENT_FIELDS, turn_id: `x${n}`, platform: 'cli', model: `model-${n}` } });
  await post([seq(1), seq(2), seq(2), seq(5)]);
  await post([{ event: 'plugin_heartbeat', instance: 'p1', data: { interval_seconds: 5, dropped: { post_tool_call: { queue_full: 2 } }, hermes_version: '0.21.3', plugin_version: '0.1.0', profile: 'default', refused_fields: { turn_exit_reason: 1 } } }]);
  await post([{ event: 'agent_loop_stopped', data: { ...CONTENT_FIELDS, platform: 'telegram', reason: 'user_stop' } }]);
  // a call Hermes priced (the plugin adds cost_usd / cost_status)
  await post([{ event: 'post_api_request', data: { ...CONTENT_FIELDS, provider: 'anthropic', model: 'model-1', api_request_id: 'c1', usage: { input_tokens: 10, output_tokens: 5 }, context_length: 200000, cost_usd: 0.001, cost_status: 'estimated', started_at: 1789862400, first_chunk_at: 1789862400.5, ended_at: 1789862401, api_duration: 1 } }]);
  // a session whose on_session_start Hermes skipped: counted from its first turn
  await post([{ event: 'pre_llm_call', data: { ...CONTENT_FIELDS, session_id: 'start-skipped', turn_id: 'ts', platform: 'cli', model: 'model-1' } }]);
  // a session whose one call Hermes priced, so it has a cost
  await post([
    { event: 'on_session_start', data: { session_id: 'priced', platform: 'cli' } },
    { event: 'pre_llm_call', data: { ...CONTENT_FIELDS, session_id: 'priced', turn_id: 'tp', platform: 'cli', model: 'model-1' } },
    { event: 'post_api_request', data: { ...CONTENT_FIELDS, provider: 'anthropic', model: 'model-1', api_request_id: 'c2', turn_id: 'tp', usage: { input_tokens: 10, output_tokens: 5 }, cost_usd: 0.002, cost_status: 'estimated' } },
    { event: 'on_session_finalize', data: { session_id: 'priced', platform: 'cli' } },
  ]);
  // refusals of each kind
  await post(['{broken', { nothing: true }, 7]);
  await harness.ingest.post('/v1/events').set('Content-Type', 'text/plain').send(`${SENTINEL}body`);
  await harness.ingest.post('/v1/events').set('Content-Type', 'application/json').send(`{"${SENTINEL}": `);
  await harness.ingest.post(`/v1/${SENTINEL}path`).set('Content-Type', 'application/json').send(`{"${SENTINEL}": 1}`);
  // orphans: the open spans expire
  harness.clock.advance(61);
  await harness.sidecar.sweep();
  // the plugin instance reports again, so it is live (and described) at the scrape
  await post([{ event: 'plugin_heartbeat', instance: 'p1', data: { interval_seconds: 5, dropped: { post_tool_call: { queue_full: 2 } }, hermes_version: '0.21.3', plugin_version: '0.1.0', profile: 'default', refused_fields: { turn_exit_reason: 1 } } }]);
  await harness.sidecar.queue.drained();
  return (await harness.web.get('/metrics').set(accept === undefined ? {} : { Accept: accept }).expect(200)).text;
}

const OPENMETRICS = 'application/openmetrics-text; version=1.0.0';
/** The histograms whose buckets link to the call behind them, and the ids each may carry. */
const EXEMPLAR_IDS: Readonly<Record<string, readonly string[]>> = {
  hermes_api_request_duration_seconds: ['api_request_id', 'turn_id'],
  gen_ai_client_operation_duration_seconds: ['api_request_id', 'turn_id'],
  hermes_tool_call_duration_seconds: ['tool_call_id', 'turn_id'],
  hermes_turn_duration_seconds: ['turn_id', 'session_id'],
  hermes_session_cost_usd: ['session_id'],
  hermes_session_duration_seconds: ['session_id'],
};

describe('a /metrics output with every family populated', () => {
  it('has samples for every catalogue metric', async () => {
    const text = await populate(populatedSidecar());
    const missing = Object.values(CATALOGUE)
      .map((spec) => spec.name)
      .filter((name) => !new RegExp(`^${name}(_bucket|_sum|_count)?[{ ]`, 'm').test(text));
    expect(missing).toEqual([]);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('carries no content: sentinels in every content field reach neither /metrics nor the logs', async () => {
    const harness = populatedSidecar();
    const text = await populate(harness);
    expect(text).not.toContain(SENTINEL);
    expect(harness.logs.join('\n')).not.toContain(SENTINEL);
    // ids are never labels either
    expect(text).not.toMatch(/20260920_141203_9f3c2a|toolu_|T1:api/);
  });

  // The refusals above are logged at debug with code, route and counts; the sentinels they carried
  // in bodies and paths must not come along, in either format.
  const REFUSALS = [
    { code: 'lines_rejected', route: '/v1/events', lines: 3, accepted: 0, rejected: { invalid_event: 2, unknown_shape: 1 } },
    { code: 'unsupported_media_type', status: 415, route: '/v1/events' },
    { code: 'invalid_json', status: 400, route: '/v1/events' },
    { code: 'not_found', status: 404, route: 'other' },
  ];

  it('json logs at trace level: every line content-free, the refusals logged with code, route and counts', async () => {
    const harness = populatedSidecar('json');
    await populate(harness);
    for (const line of harness.logs) expect(line).not.toContain(SENTINEL);
    const records = harness.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const refusal of REFUSALS) expect(records).toContainEqual(expect.objectContaining({ level: 'debug', ...refusal }));
  });

  it('logfmt logs at trace level: every line content-free and key=value only, the refusals logged', async () => {
    const harness = populatedSidecar('logfmt');
    await populate(harness);
    const pair = String.raw`[\w.-]+=(?:[^\s"=\\]+|"(?:[^"\\]|\\.)*")`;
    for (const line of harness.logs) {
      expect(line).not.toContain(SENTINEL);
      expect(line).toMatch(new RegExp(`^time=\\S+ level=\\w+ msg=\\S.*\\n$`));
      expect(line.trimEnd()).toMatch(new RegExp(`^${pair}(?: ${pair})*$`));
    }
    expect(harness.logs.join('')).toContain(
      'level=debug msg="request had rejected lines" service=hermes-prometheus-sidecar code=lines_rejected route=/v1/events lines=3 accepted=0 rejected.invalid_event=2 rejected.unknown_shape=1\n',
    );
    expect(harness.logs.join('')).toMatch(/level=debug msg="request rejected" service=hermes-prometheus-sidecar code=not_found status=404 route=other body_bytes=\d+\n/);
  });

  const tool = promtool();
  it.skipIf(tool.path === undefined)(`passes promtool check metrics${tool.skipReason ? ` (${tool.skipReason})` : ''}`, async () => {
    const text = await populate(populatedSidecar());
    const result = spawnSync(tool.path ?? 'promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
  });
});

describe('the OpenMetrics output with every family populated', () => {
  const parser = openMetricsParser();
  it.skipIf(parser.path === undefined)(`passes a strict OpenMetrics parser, with every family, unit and exemplar as declared${parser.skipReason ? ` (${parser.skipReason})` : ''}`, async () => {
    const text = await populate(populatedSidecar(), OPENMETRICS);
    const result = parseOpenMetrics(text);
    if (!result.ok) throw new Error(result.error);
    const families = new Map(result.families.map((family) => [family.name, family]));
    for (const spec of Object.values(CATALOGUE)) {
      const name = familyName({ ...spec, bounds: undefined, stable: true, series: () => [] }, 'openmetrics');
      expect({ name, type: families.get(name)?.type, unit: families.get(name)?.unit }).toEqual({ name, type: spec.type, unit: unitOf(name) ?? '' });
      expect(families.get(name)?.samples, name).toBeGreaterThan(0);
    }
    // prom-client's runtime metrics come out valid too, counters renamed by the OpenMetrics rules.
    expect(families.get('process_cpu_seconds')?.type).toBe('counter');
    expect(families.get('nodejs_gc_duration_seconds')?.type).toBe('histogram');
    expect(families.get('process_resident_memory_bytes')?.unit).toBe('bytes');
    // Exemplars: on the call histograms only, carrying only the call's content-free ids.
    const withExemplars = result.families.filter((family) => family.exemplars.length > 0).map((family) => family.name);
    expect(withExemplars.sort()).toEqual(Object.keys(EXEMPLAR_IDS).sort());
    for (const [name, ids] of Object.entries(EXEMPLAR_IDS)) {
      for (const exemplar of families.get(name)?.exemplars ?? []) {
        expect(Object.keys(exemplar.labels).every((label) => ids.includes(label)), `${name}: ${JSON.stringify(exemplar.labels)}`).toBe(true);
        expect(exemplar.timestamp).toBeGreaterThan(0);
      }
    }
    const apiExemplars = families.get('hermes_api_request_duration_seconds')?.exemplars ?? [];
    expect(apiExemplars).toContainEqual({ sample: 'hermes_api_request_duration_seconds_bucket', labels: { api_request_id: 'T1:api:1', turn_id: 'T1' }, value: 6.842, timestamp: 1009 });
    expect(text).not.toContain(SENTINEL);
  });
});
