/**
 * With every metric family populated: each catalogue metric has samples, `promtool check metrics`
 * reports nothing, and no sentinel planted in content fields reaches /metrics or the logs.
 */
import { spawnSync } from 'node:child_process';
import { pino } from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createSidecar } from '../../src/app.js';
import { defaultConfig } from '../../src/config.js';
import { CATALOGUE } from '../../src/metrics/catalogue.js';
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

function populatedSidecar() {
  const logs: string[] = [];
  const clock = new FakeClock();
  const config = defaultConfig({ 'correlator.span-ttl': '60' });
  // A small model cap and series cap, so the cardinality guard and the global cap both fold.
  const sidecar = createSidecar(
    { ...config, maxAgentSeries: 60, labels: { ...config.labels, model: { cap: 2 } } },
    { logger: pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) }), clock: clock.read },
  );
  return { sidecar, clock, logs, ingest: request(sidecar.ingestApp), web: request(sidecar.webApp) };
}

async function populate(harness: ReturnType<typeof populatedSidecar>): Promise<string> {
  const post = (lines: unknown[], type = 'application/x-ndjson') =>
    harness.ingest.post('/v1/events').set('Content-Type', type).send(lines.map((line) => JSON.stringify(line)).join('\n'));
  const withContent = (lines: Record<string, unknown>[]) => lines.map((line) => ({ ...CONTENT_FIELDS, ...line }));
  await post(withContent(readJsonl('conversation.jsonl')));
  await post(readJsonl('envelope.jsonl').map((line) => ({ ...line, data: { ...CONTENT_FIELDS, ...(line.data as object) } })));
  // delivery health: a gap, a duplicate, a heartbeat with drops
  const seq = (n: number) => ({ event: 'pre_llm_call', instance: 'p1', seq: n, data: { ...CONTENT_FIELDS, turn_id: `x${n}`, platform: 'cli', model: `model-${n}` } });
  await post([seq(1), seq(2), seq(2), seq(5)]);
  await post([{ event: 'plugin_heartbeat', instance: 'p1', data: { interval_seconds: 5, dropped: { post_tool_call: { queue_full: 2 } } } }]);
  // a call Hermes priced (the plugin adds cost_usd / cost_status)
  await post([{ event: 'post_api_request', data: { ...CONTENT_FIELDS, provider: 'anthropic', model: 'model-1', api_request_id: 'c1', usage: { input_tokens: 10, output_tokens: 5 }, cost_usd: 0.001, cost_status: 'estimated' } }]);
  // refusals of each kind
  await post(['{broken', { nothing: true }, 7]);
  await harness.ingest.post('/v1/events').set('Content-Type', 'text/plain').send(`${SENTINEL}body`);
  await harness.ingest.post('/v1/events').set('Content-Type', 'application/json').send(`{"${SENTINEL}": `);
  // orphans: the open spans expire
  harness.clock.advance(61);
  harness.sidecar.sweep();
  await harness.sidecar.queue.drained();
  return (await harness.web.get('/metrics').expect(200)).text;
}

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

  const tool = promtool();
  it.skipIf(tool.path === undefined)(`passes promtool check metrics${tool.skipReason ? ` (${tool.skipReason})` : ''}`, async () => {
    const text = await populate(populatedSidecar());
    const result = spawnSync(tool.path ?? 'promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
  });
});
