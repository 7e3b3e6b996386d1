/**
 * The real bridge plugin in a real Python process (through the Hermes dispatch harness) against
 * the real sidecar binary over loopback HTTP: a scripted conversation gives exact values; a
 * sidecar stopped mid-stream (SIGTERM or SIGKILL) and restarted loses nothing while the plugin's
 * retry buffer holds; an overflowing buffer's losses are counted exactly, on both sides.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { appliedEvents, droppedTotal, scrapeSamples } from '../support/accounting.js';
import { parseSamples, series } from '../support/exposition.js';
import { HeldPlugin, runScenario, totalDropped } from '../support/driver.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';
import { retryOnAddressInUse } from '../support/ports.js';
import { python3 } from '../support/tools.js';

const python = python3();
const M = 'anthropic/claude-sonnet-4.6';
const main = { kind: 'main', provider: 'openrouter', model: M };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the sidecar's /metrics until its applied-event count satisfies `done` (10 s at most). */
async function untilApplied(sidecar: { readonly web: string }, done: (applied: number) => boolean): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    if (done(appliedEvents(await scrapeSamples(sidecar)))) return;
    await sleep(20);
  }
  throw new Error('the sidecar never applied the expected events');
}

const running: { stop(signal?: NodeJS.Signals): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const process of running.splice(0)) await process.stop('SIGKILL').catch(() => undefined);
});

async function sidecarOn(args: string[] = []): Promise<SidecarProcess> {
  const sidecar = await startSidecarProcess(args);
  running.push(sidecar);
  return sidecar;
}

/**
 * A second sidecar on the ingest port of one that was just stopped, where the plugin keeps
 * sending. The port was held by the first until it exited; a bind that races another process's
 * is tried again.
 */
function restartOn(stopped: SidecarProcess): Promise<SidecarProcess> {
  const ingest = new URL(stopped.ingest).host;
  return retryOnAddressInUse(() => sidecarOn([`--ingest.listen-address=${ingest}`]));
}

const pluginEnv = { HERMES_SIDECAR_HEARTBEAT_INTERVAL: '0.5', HERMES_SIDECAR_TIMEOUT: '0.5' };

describe.skipIf(python.path === undefined)(`bridge plugin end to end${python.skipReason ? ` (${python.skipReason})` : ''}`, () => {
  it('a scripted conversation gives exact values, and no content reaches /metrics', async () => {
    const sidecar = await sidecarOn();
    const summary = await runScenario(python.path ?? 'python3', ['--url', `${sidecar.ingest}/v1/events`, '--scenario', 'conversation'], pluginEnv);
    expect(summary.drained).toBe(true);
    expect(summary.emitted_total).toBe(49); // the 52 hook calls less the 3 post_llm_call ones, which the plugin does not ship
    const text = await (await fetch(`${sidecar.web}/metrics`)).text();
    const samples = parseSamples(text);
    const get = (name: string, labels: Record<string, string> = {}) => samples.get(series(name, labels));
    expect(get('hermes_api_requests_total', { ...main, outcome: 'success' })).toBe(7);
    expect(get('hermes_api_requests_total', { ...main, outcome: 'error' })).toBe(1);
    expect(get('hermes_api_requests_total', { kind: 'auxiliary', provider: 'openrouter', model: 'google/gemini-3.5-flash', outcome: 'success' })).toBe(1);
    // The plugin forwards only error['type'] of Hermes' error dict: the exception class.
    expect(get('hermes_api_errors_total', { ...main, reason: 'rate_limit', error_class: 'RateLimitError', status_code: '429', retryable: 'true' })).toBe(1);
    expect(get('hermes_api_retries_total', { ...main, reason: 'rate_limit' })).toBe(1);
    expect(get('hermes_api_request_duration_seconds_sum', { ...main, outcome: 'success' })).toBe(20.5);
    expect(get('hermes_tokens_total', { ...main, token_type: 'input' })).toBe(5454);
    expect(get('hermes_tokens_total', { ...main, token_type: 'cache_read' })).toBe(80530);
    expect(get('hermes_tokens_total', { ...main, token_type: 'cache_write' })).toBe(2752);
    expect(get('hermes_tokens_total', { ...main, token_type: 'output' })).toBe(1492);
    expect(get('hermes_tokens_total', { ...main, token_type: 'reasoning' })).toBe(64);
    expect(get('hermes_api_finish_reasons_total', { ...main, finish_reason: 'tool_calls' })).toBe(3);
    expect(get('hermes_api_finish_reasons_total', { ...main, finish_reason: 'stop' })).toBe(4);
    expect(get('hermes_turns_started_total', { platform: 'cli', model: M })).toBe(2);
    expect(get('hermes_turns_started_total', { platform: 'telegram', model: M })).toBe(1);
    expect(get('hermes_turns_finished_total', { platform: 'cli', model: M, outcome: 'completed', exit_reason: 'text_response' })).toBe(2);
    expect(get('hermes_turn_api_calls_sum', { platform: 'cli' })).toBe(5);
    expect(get('hermes_turn_tool_calls_sum', { platform: 'cli' })).toBe(4);
    expect(get('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' })).toBe(2);
    expect(get('hermes_tool_calls_total', { tool: 'read_file', status: 'error' })).toBe(1);
    expect(get('hermes_tool_calls_total', { tool: 'terminal', status: 'blocked' })).toBe(1);
    expect(get('hermes_tool_calls_total', { tool: 'terminal', status: 'timeout' })).toBe(1);
    expect(get('hermes_tool_call_duration_seconds_sum', { tool: 'terminal', status: 'timeout' })).toBe(420);
    expect(get('hermes_tool_errors_total', { tool: 'terminal', error_type: 'plugin_block' })).toBe(1);
    expect(get('hermes_approval_decisions_total', { surface: 'cli', pattern_key: 'rm_rf', choice: 'deny' })).toBe(1);
    expect(get('hermes_approval_decisions_total', { surface: 'gateway', pattern_key: 'sudo', choice: 'once' })).toBe(1);
    expect(get('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'sudo', choice: 'smart_approve' })).toBe(1);
    expect(get('hermes_approval_wait_seconds_count', { surface: 'gateway', choice: 'once' })).toBe(1);
    expect(get('hermes_approvals_pending', { surface: 'gateway' })).toBe(0);
    expect(get('hermes_sessions_started_total', { platform: 'telegram' })).toBe(1);
    expect(get('hermes_sessions_finalized_total', { platform: 'telegram' })).toBe(1);
    expect(get('hermes_session_resets_total', { platform: 'telegram' })).toBe(1);
    // Each finalized session's turns and tokens (prompt = input + cache_read + cache_write, plus
    // output) of the calls in its turns; the subagent's call names the child's turn, not t_3.
    expect(get('hermes_session_turns_sum', { platform: 'cli' })).toBe(2);
    expect(get('hermes_session_turns_sum', { platform: 'telegram' })).toBe(1);
    expect(get('hermes_session_tokens_sum', { platform: 'cli' })).toBe((1204 + 18030 + 952 + 412) + (300 + 19000 + 120) + (500 + 19500 + 200) + (250 + 20000 + 90));
    expect(get('hermes_session_tokens_sum', { platform: 'telegram' })).toBe((2000 + 1800 + 150) + (400 + 4000 + 300));
    expect(get('hermes_session_duration_seconds_count', { platform: 'cli' })).toBe(1);
    expect(get('hermes_session_duration_seconds_count', { platform: 'telegram' })).toBe(1);
    // Seven streamed successes, each with its first chunk 0.8 s in: 2.5 s calls stream for 1.7 s,
    // 3.5 s calls for 2.7 s.
    expect(get('hermes_api_output_tokens_per_second_count', main)).toBe(7);
    expect(get('hermes_api_output_tokens_per_second_sum', main)).toBeCloseTo((412 + 200 + 150 + 220) / 1.7 + (120 + 90 + 300) / 2.7, 3);
    expect(get('hermes_subagents_finished_total', { role: 'leaf', status: 'completed' })).toBe(1);
    expect(get('hermes_subagent_duration_seconds_sum', { role: 'leaf', status: 'completed' })).toBe(41.27);
    expect(get('hermes_sidecar_events_lost_total')).toBe(0);
    expect(get('hermes_sidecar_events_duplicate_total')).toBe(0);
    expect(droppedTotal(samples)).toBe(0);
    expect(appliedEvents(samples)).toBe(49);
    expect(text).not.toContain(String(summary.sentinel));
  });

  it('the envelope variant through register_observer_hook moves the run and memory families', async () => {
    const sidecar = await sidecarOn();
    const summary = await runScenario(python.path ?? 'python3', ['--url', `${sidecar.ingest}/v1/events`, '--scenario', 'envelope'], pluginEnv);
    expect(summary.drained).toBe(true);
    const samples = await scrapeSamples(sidecar);
    const emitted = summary.emitted_total as number;
    expect(appliedEvents(samples)).toBe(emitted);
    const runs = [...samples].filter(([key]) => key.startsWith('hermes_agent_runs_total{')).reduce((sum, [, value]) => sum + value, 0);
    const writes = [...samples].filter(([key]) => key.startsWith('hermes_memory_writes_total{')).reduce((sum, [, value]) => sum + value, 0);
    const emittedByHook = summary.emitted as Record<string, number>;
    expect(runs).toBe(emittedByHook.agent_end);
    expect(writes).toBe(emittedByHook.memory_write);
    expect(runs).toBeGreaterThan(0);
    expect(writes).toBeGreaterThan(0);
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)('a sidecar stopped mid-stream with %s and restarted loses nothing the buffer held', async (signal) => {
    const first = await sidecarOn();
    const plugin = await HeldPlugin.start(python.path ?? 'python3', `${first.ingest}/v1/events`, pluginEnv);
    running.push({ stop: () => plugin.stop() });
    await plugin.command('events 300 0');
    expect((await plugin.flushAll()).events_delivered).toBe(300);

    const emitting = plugin.command('events 600 600');
    // Stop once the first sidecar has applied part of the second burst: a condition, so a
    // loaded machine cannot make the stop fall before any of it arrived.
    await untilApplied(first, (applied) => applied > 300);
    await first.stop(signal);
    await emitting;
    const atStop = await plugin.stats();
    // The stop fell mid-stream: the first sidecar took part of the second burst, not all of it.
    expect(atStop.events_delivered).toBeGreaterThan(300);
    expect(atStop.events_delivered).toBeLessThan(900);
    const second = await restartOn(first);
    const final = await plugin.flushAll();

    expect(final.events_numbered).toBe(900);
    expect(final.events_delivered).toBe(900);
    expect(totalDropped(final.dropped)).toBe(0);
    const samples = await scrapeSamples(second);
    // What the first sidecar acknowledged (and applied: a 202 waits for that), the second never saw.
    expect(appliedEvents(samples)).toBe(900 - atStop.events_delivered);
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
    expect(droppedTotal(samples)).toBe(0);
  });

  it('an overflowing retry buffer: the plugin’s drops and the sidecar’s lost count both equal the true loss', async () => {
    const first = await sidecarOn();
    const plugin = await HeldPlugin.start(python.path ?? 'python3', `${first.ingest}/v1/events`, { ...pluginEnv, HERMES_SIDECAR_BUFFER_SIZE: '100' });
    running.push({ stop: () => plugin.stop() });
    await plugin.command('events 50 0');
    expect((await plugin.flushAll()).events_delivered).toBe(50);
    await first.stop('SIGKILL');
    await plugin.command('events 400 0');
    const second = await restartOn(first);
    const final = await plugin.flushAll();
    // One more heartbeat after the flush carries the final drop counts.
    await vi.waitFor(async () => expect((await plugin.stats()).heartbeats_sent).toBeGreaterThan(final.heartbeats_sent), { timeout: 20_000, interval: 50 });

    const trueLoss = final.events_numbered - final.events_delivered;
    expect(final.events_numbered).toBe(450);
    expect(trueLoss).toBe(300);
    expect(totalDropped(final.dropped)).toBe(trueLoss);
    const samples = await scrapeSamples(second);
    expect(droppedTotal(samples)).toBe(trueLoss);
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(trueLoss);
    expect(appliedEvents(samples)).toBe(100);
  });
});
