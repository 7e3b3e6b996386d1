/**
 * What the real Hermes (July 2026, NousResearch/hermes-agent) sends through the bridge plugin,
 * and the series it must move: smart approvals that escalate to a person, on_session_end as
 * run_agent.py and the CLI exit paths call it, api_request_error's exception class, and the cost
 * of each call by every pricing path. Lines are plugin lines ({event, observed_at, data}) with
 * the wire fields of plugin/hermes_prometheus_bridge/contract.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { samplesOf, series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';
import { readWebhookDelivery } from '../../src/contract/webhook.js';
import { scratchDir } from '../support/scratch.js';

const line = (event: string, observedAt: number, data: Record<string, unknown>) => ({ event, observed_at: observedAt, data });

describe('smart approvals that escalate (tools/approval_smart.py _smart_verdict, tools/approval.py _human_decision)', () => {
  // _smart_verdict fires pre_approval_request(surface="smart") and a smart post_approval_response
  // (choice smart_approve/smart_deny, decided_by="aux_llm") only on an APPROVE or DENY verdict;
  // ESCALATE (or a failed auxiliary call) goes on to the cli prompt, wrapped in its own
  // pre/post_approval_request hooks with surface="cli".
  const smart = { pattern_key: 'rm_rf', pattern_keys: ['rm_rf'], session_key: 'cli:s1', surface: 'smart' };
  const cli = { ...smart, surface: 'cli' };

  it('counts an escalation by tool_call_id as the smart outcome, leaving nothing pending or orphaned', async () => {
    const harness = startTestSidecar({ 'correlator.span-ttl': '60' });
    await harness.postNdjson([
      line('pre_approval_request', 100, { ...smart, tool_call_id: 'call-1' }),
      line('pre_approval_request', 102.5, { ...cli, tool_call_id: 'call-1' }),
      line('post_approval_response', 110, { ...cli, tool_call_id: 'call-1', choice: 'once' }),
    ]);
    harness.clock.advance(3600);
    await harness.sidecar.sweep();
    const samples = await harness.samples();
    expect(Object.fromEntries(samplesOf(new Map(samples), 'hermes_approval', 'hermes_sidecar_orphaned_spans_total{kind="approval"}'))).toEqual({
      [series('hermes_approval_requests_total', { surface: 'smart', pattern_key: 'rm_rf' })]: 1,
      [series('hermes_approval_requests_total', { surface: 'cli', pattern_key: 'rm_rf' })]: 1,
      [series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm_rf', choice: 'escalated' })]: 1,
      [series('hermes_approval_decisions_total', { surface: 'cli', pattern_key: 'rm_rf', choice: 'once' })]: 1,
      ...Object.fromEntries(
        [...samples].filter(([key]) => key.startsWith('hermes_approval_wait_seconds_bucket')),
      ),
      [series('hermes_approval_wait_seconds_sum', { surface: 'smart', choice: 'escalated' })]: 2.5,
      [series('hermes_approval_wait_seconds_count', { surface: 'smart', choice: 'escalated' })]: 1,
      [series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'once' })]: 7.5,
      [series('hermes_approval_wait_seconds_count', { surface: 'cli', choice: 'once' })]: 1,
      [series('hermes_approvals_pending', { surface: 'smart' })]: 0,
      [series('hermes_approvals_pending', { surface: 'cli' })]: 0,
      [series('hermes_sidecar_orphaned_spans_total', { kind: 'approval' })]: 0,
    });
  });

  it('matches an escalation without tool_call_id (the hooks\' own kwargs) by session_key and pattern', async () => {
    const harness = startTestSidecar({ 'correlator.span-ttl': '60' });
    await harness.postNdjson([
      line('pre_approval_request', 100, { ...smart, pattern_key: 'sudo' }),
      line('pre_approval_request', 101, smart),
      line('pre_approval_request', 104, cli),
      line('post_approval_response', 106, { ...cli, choice: 'deny' }),
      line('post_approval_response', 107, { ...smart, pattern_key: 'sudo', choice: 'smart_approve', decided_by: 'aux_llm' }),
    ]);
    harness.clock.advance(3600);
    await harness.sidecar.sweep();
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm_rf', choice: 'escalated' }))).toBe(1);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'smart', choice: 'escalated' }))).toBe(3);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'deny' }))).toBe(2);
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'smart', choice: 'smart_approve' }))).toBe(7);
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'sudo', choice: 'escalated' }))).toBeUndefined();
    expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind: 'approval' }))).toBe(0);
  });

  it('does not call a smart DENY that an owner overrides an escalation', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      line('pre_approval_request', 100, { ...smart, tool_call_id: 'call-2' }),
      line('post_approval_response', 101, { ...smart, tool_call_id: 'call-2', choice: 'smart_deny', decided_by: 'aux_llm' }),
      line('pre_approval_request', 102, { ...cli, tool_call_id: 'call-2' }),
      line('post_approval_response', 105, { ...cli, tool_call_id: 'call-2', choice: 'once' }),
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm_rf', choice: 'smart_deny' }))).toBe(1);
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm_rf', choice: 'escalated' }))).toBeUndefined();
    expect(samples.get(series('hermes_approval_wait_seconds_sum', { surface: 'cli', choice: 'once' }))).toBe(3);
    expect(samples.get(series('hermes_approvals_pending', { surface: 'cli' }))).toBe(0);
  });

  it('counts a smart verdict without its surface on the smart surface (decided_by="aux_llm")', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([line('post_approval_response', 100, { pattern_key: 'rm_rf', choice: 'smart_approve', decided_by: 'aux_llm' })]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm_rf', choice: 'smart_approve' }))).toBe(1);
  });
});

describe('on_session_end as Hermes calls it', () => {
  const turn = (turnId: string, at: number) => line('pre_llm_call', at, { session_id: 's1', turn_id: turnId, platform: 'cli', model: 'm' });

  it('takes the outcome from completed/interrupted; a CLI exit ends the open turns with its reason and is no turn itself', async () => {
    const harness = startTestSidecar({ 'correlator.span-ttl': '60' });
    // cli.py exit paths: on_session_end with reason= and no turn_id, when the session ends.
    const exit = (sessionId: string, at: number) =>
      line('on_session_end', at, { session_id: sessionId, platform: 'cli', model: 'm', completed: false, interrupted: true, reason: 'cli_exit' });
    await harness.postNdjson([
      // run_agent.py AIAgent.run_conversation, end of each turn: completed=, interrupted=, no reason.
      turn('t1', 100),
      line('on_session_end', 104, { session_id: 's1', turn_id: 't1', platform: 'cli', model: 'm', completed: true, interrupted: false }),
      turn('t2', 110),
      exit('s2', 110.5), // another session's exit leaves s1's turn open
      exit('s1', 111),
      exit('s1', 120), // between turns: no turn ends
    ]);
    harness.clock.advance(3600);
    await harness.sidecar.sweep();
    const samples = await harness.samples();
    expect(Object.fromEntries(samplesOf(new Map(samples), 'hermes_turns_finished_total'))).toEqual({
      [series('hermes_turns_finished_total', { platform: 'cli', model: 'm', outcome: 'completed', exit_reason: 'unknown' })]: 1,
      [series('hermes_turns_finished_total', { platform: 'cli', model: 'm', outcome: 'interrupted', exit_reason: 'cli_exit' })]: 1,
    });
    expect(samples.get(series('hermes_turn_duration_seconds_sum', { platform: 'cli', outcome: 'interrupted' }))).toBe(1);
    expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind: 'turn' }))).toBe(0);
  });

  it('reads turn_exit_reason and failed where a later Hermes passes them', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      turn('t1', 100),
      line('on_session_end', 101, {
        session_id: 's1', turn_id: 't1', platform: 'cli', model: 'm', completed: false, failed: true, interrupted: false,
        turn_exit_reason: 'max_iterations_reached(90/90)',
      }),
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_turns_finished_total', { platform: 'cli', model: 'm', outcome: 'failed', exit_reason: 'max_iterations_reached' }))).toBe(1);
  });

  it('keeps only the leading identifier of a raw turn_exit_reason (flat kwargs, webhooks): free text reads as other', async () => {
    const harness = startTestSidecar();
    const end = (turnId: string, at: number, reason: string) =>
      line('on_session_end', at, { session_id: 's1', turn_id: turnId, platform: 'cli', model: 'm', completed: false, failed: true, interrupted: false, turn_exit_reason: reason });
    await harness.postNdjson([
      // agent/turn_finalizer.py: local_processing_error(<the first 80 characters of an error message>).
      end('t1', 101, 'local_processing_error(FileNotFoundError: /home/alice/notes.txt)'),
      end('t2', 102, 'The file /home/alice/notes.txt was not found'),
      end('t3', 103, 'local processing error'),
    ]);
    const text = await harness.scrape();
    const samples = await harness.samples();
    expect(samples.get(series('hermes_turns_finished_total', { platform: 'cli', model: 'm', outcome: 'failed', exit_reason: 'local_processing_error' }))).toBe(1);
    expect(samples.get(series('hermes_turns_finished_total', { platform: 'cli', model: 'm', outcome: 'failed', exit_reason: 'other' }))).toBe(2);
    expect(text).not.toContain('/home/alice');
    expect(text).not.toContain('local processing error');
  });
});

describe('turn exit reasons Hermes 0.21 emits (agent/turn_finalizer.py, agent/turn_failure_copy.py)', () => {
  it('always keeps the known ones; others pass the exit_reason cap and then fold into other', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sidecar-exit-reasons-'));
    try {
      const file = join(dir, 'sidecar.yml');
      writeFileSync(file, 'labels:\n  exit_reason: {cap: 1}\n');
      const harness = startTestSidecar({}, { configFile: file });
      const end = (turnId: string, reason: string) =>
        line('on_session_end', 100, { session_id: 's1', turn_id: turnId, platform: 'cli', model: 'm', completed: true, interrupted: false, turn_exit_reason: reason });
      await harness.postNdjson([
        end('t1', 'from_a_newer_hermes'),
        end('t2', 'another_new_one'),
        end('t3', 'text_response(finish_reason=stop)'),
        end('t4', 'context_compression_exhausted'),
      ]);
      const samples = await harness.samples();
      const finished = (exitReason: string) => samples.get(series('hermes_turns_finished_total', { platform: 'cli', model: 'm', outcome: 'completed', exit_reason: exitReason }));
      expect(finished('from_a_newer_hermes')).toBe(1);
      expect(finished('other')).toBe(1);
      expect(finished('text_response')).toBe(1);
      expect(finished('context_compression_exhausted')).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('agent_loop_stopped as the gateway calls it (gateway/run_agent_cache.py _interrupt_and_clear_session)', () => {
  it('counts interrupts by platform and reason; a reason that is no identifier reads as other', async () => {
    const harness = startTestSidecar();
    const stopped = (reason: string) => line('agent_loop_stopped', 100, { session_key: 'agent:main:telegram:dm:1', platform: 'telegram', reason, invalidation_reason: 'session_interrupt' });
    await harness.postNdjson([stopped('user_stop'), stopped('user_stop'), stopped('stopped by /home/alice')]);
    const text = await harness.scrape();
    const samples = await harness.samples();
    expect(samples.get(series('hermes_agent_interrupts_total', { platform: 'telegram', reason: 'user_stop' }))).toBe(2);
    expect(samples.get(series('hermes_agent_interrupts_total', { platform: 'telegram', reason: 'other' }))).toBe(1);
    expect(text).not.toContain('/home/alice');
  });
});

describe('api_request_error\'s exception class (agent/api_request_hooks.py _invoke_api_request_error_hook)', () => {
  it('labels API errors with the exception class as error_class, capped like any open label', async () => {
    const harness = startTestSidecar();
    const error = (errorType: string | undefined, id: string) =>
      line('api_request_error', 100, {
        provider: 'openrouter', model: 'm', api_request_id: id, api_duration: 0.5, reason: 'rate_limit',
        status_code: 429, retryable: true, retry_count: 0, max_retries: 3, ...(errorType === undefined ? {} : { error_type: errorType }),
      });
    await harness.postNdjson([
      error('RateLimitError', 'a'),
      error('RateLimitError', 'b'),
      error(undefined, 'c'),
      ...Array.from({ length: 40 }, (_, index) => error(`Error${index}`, `x${index}`)),
    ]);
    const samples = await harness.samples();
    const labels = (errorType: string) => ({ kind: 'main', provider: 'openrouter', model: 'm', reason: 'rate_limit', error_class: errorType, status_code: '429', retryable: 'true' });
    expect(samples.get(series('hermes_api_errors_total', labels('RateLimitError')))).toBe(2);
    expect(samples.get(series('hermes_api_errors_total', labels('unknown')))).toBe(1);
    // cap 32: RateLimitError and Error0..Error30 are admitted, Error31..Error39 fold into other.
    expect(samples.get(series('hermes_api_errors_total', labels('Error30')))).toBe(1);
    expect(samples.get(series('hermes_api_errors_total', labels('other')))).toBe(9);
    expect(samples.get(series('hermes_sidecar_label_overflow_total', { label: 'error_class' }))).toBe(9);
  });
});

describe('cost in USD by pricing path', () => {
  // A price table with round figures, so every expected value is exact.
  const configFile = (): string => {
    const file = join(scratchDir('sidecar-prices-'), 'sidecar.yml');
    writeFileSync(file, [
      'prices:',
      '  openrouter:',
      '    acme/model-a:',
      '      input: 2',
      '      output: 8',
      '      cache_read: 0.5',
      '      cache_write: 2.5',
      '  OpenAI:',
      '    gpt-no-cache:',
      '      input: 1',
      '      output: 4',
      '',
    ].join('\n'));
    return file;
  };
  // agent/api_request_hooks.py _usage_summary_for_api_request_hook: asdict(CanonicalUsage) minus
  // raw_usage, plus prompt_tokens and total_tokens.
  const usage = (input: number, output: number, cacheRead: number, cacheWrite: number) => ({
    input_tokens: input, output_tokens: output, cache_read_tokens: cacheRead, cache_write_tokens: cacheWrite,
    reasoning_tokens: 0, request_count: 1, prompt_tokens: input + cacheRead + cacheWrite,
    total_tokens: input + cacheRead + cacheWrite + output,
  });
  const post = (id: string, provider: string, model: string, extra: Record<string, unknown>) =>
    line('post_api_request', 100, { provider, model, api_request_id: id, api_duration: 1, finish_reason: 'stop', ...extra });

  it('uses Hermes\' price first, then the config table, else counts the call unpriced', async () => {
    const harness = startTestSidecar({}, { configFile: configFile() });
    await harness.postNdjson([
      // Hermes priced it (the plugin's sender thread, agent.usage_pricing.estimate_usage_cost).
      post('h1', 'anthropic', 'claude-sonnet-4-6', { usage: usage(1000, 500, 0, 0), cost_usd: 0.0105, cost_status: 'estimated' }),
      post('h2', 'anthropic', 'claude-sonnet-4-6', { usage: usage(2000, 0, 0, 0), cost_usd: 0.006, cost_status: 'actual' }),
      // A subscription route: Hermes says included, 0 USD.
      post('i1', 'openai-codex', 'gpt-5.6-sol', { usage: usage(5000, 100, 0, 0), cost_usd: 0, cost_status: 'included' }),
      // Hermes could not price it: the table does. 1M input × 2 + 250k output × 8 + 2M cache read × 0.5 + 400k cache write × 2.5 = 2 + 2 + 1 + 1.
      post('c1', 'openrouter', 'acme/model-a', { usage: usage(1_000_000, 250_000, 2_000_000, 400_000), cost_status: 'unknown' }),
      // No Hermes cost at all (pricing module missing): the table, provider matched case-insensitively. 3M × 1 + 500k × 4 = 5.
      post('c2', 'openai', 'gpt-no-cache', { usage: usage(3_000_000, 500_000, 0, 0) }),
      // Cache tokens with no cache price in the table: not guessed.
      post('u1', 'openai', 'gpt-no-cache', { usage: usage(10, 10, 5, 0) }),
      // Neither Hermes nor the table knows the route.
      post('u2', 'openrouter', 'acme/unknown', { usage: usage(10, 10, 0, 0), cost_status: 'unknown' }),
      // No usage reported.
      post('u3', 'openrouter', 'acme/model-a', {}),
    ]);
    const samples = await harness.samples();
    const call = (provider: string, model: string) => ({ kind: 'main', provider, model });
    expect(Object.fromEntries(samplesOf(new Map(samples), 'hermes_cost_'))).toEqual({
      [series('hermes_cost_usd_total', { ...call('anthropic', 'claude-sonnet-4-6'), pricing: 'hermes' })]: 0.0165,
      [series('hermes_cost_usd_total', { ...call('openai-codex', 'gpt-5.6-sol'), pricing: 'included' })]: 0,
      [series('hermes_cost_usd_total', { ...call('openrouter', 'acme/model-a'), pricing: 'config' })]: 6,
      [series('hermes_cost_usd_total', { ...call('openai', 'gpt-no-cache'), pricing: 'config' })]: 5,
      [series('hermes_cost_unpriced_requests_total', { ...call('openai', 'gpt-no-cache'), reason: 'no_price' })]: 1,
      [series('hermes_cost_unpriced_requests_total', { ...call('openrouter', 'acme/unknown'), reason: 'no_price' })]: 1,
      [series('hermes_cost_unpriced_requests_total', { ...call('openrouter', 'acme/model-a'), reason: 'no_usage' })]: 1,
    });
  });

  it('refuses a negative or malformed price at start-up', () => {
    const file = join(scratchDir('sidecar-prices-'), 'bad.yml');
    writeFileSync(file, 'prices:\n  openrouter:\n    m:\n      input: -1\n      output: 2\n');
    expect(() => startTestSidecar({}, { configFile: file })).toThrow(/prices\.openrouter\.m\.input/);
    writeFileSync(file, 'prices:\n  openrouter:\n    m:\n      input: 1\n');
    expect(() => startTestSidecar({}, { configFile: file })).toThrow(/prices\.openrouter\.m\.output/);
  });

  it('ignores a cost that is not a finite amount of zero or more', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      post('n1', 'anthropic', 'x', { usage: usage(1, 1, 0, 0), cost_usd: -1, cost_status: 'estimated' }),
      post('n2', 'anthropic', 'x', { usage: usage(1, 1, 0, 0), cost_usd: '0.5', cost_status: 'estimated' }),
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_cost_unpriced_requests_total', { kind: 'main', provider: 'anthropic', model: 'x', reason: 'no_price' }))).toBe(2);
    expect(samples.get(series('hermes_cost_usd_total', { kind: 'main', provider: 'anthropic', model: 'x', pricing: 'hermes' }))).toBeUndefined();
  });
});

describe('webhook deliveries of api_request_error (agent/shell_hooks.py _serialize_payload: kwargs in extra)', () => {
  const delivery = (error: unknown) => ({
    hook_event_name: 'api_request_error',
    session_id: 's1',
    extra: { provider: 'openrouter', model: 'm', api_request_id: 'r1', reason: 'timeout', error },
  });

  it('takes the exception class from Hermes\' error dict, never its message', () => {
    const read = (error: unknown) => {
      const event = readWebhookDelivery(delivery(error), 100)?.event.data;
      return event?.type === 'api_attempt_failed' ? event.errorType : 'not a failure';
    };
    expect(read({ type: 'APITimeoutError', message: 'SECRET timed out' })).toBe('APITimeoutError');
    expect(read({ type: 'not a class name', message: 'x' })).toBeUndefined();
    expect(read('SECRET plain text')).toBeUndefined();
  });
});
