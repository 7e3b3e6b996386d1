/**
 * A Hermes 0.21 gateway in one process (plugin/tests/gateway_sessions.py): two profiles, each
 * with its own plugin manager and so its own bridge plugin instance, and ten worker threads (as
 * gateway/run.py's ThreadPoolExecutor(max_workers=10)) running 40 whole sessions whose turns
 * interleave at a shared barrier: interrupted turns, failed API attempts that streamed, tool
 * calls, approvals, with Hermes 0.21's keyword arguments and a sentinel in every content field.
 * Against the real sidecar every count is exact: nothing lost, duplicated or orphaned, each
 * profile reports as its own instance, and no content reaches /metrics.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { appliedEvents, droppedTotal, scrapeSamples, sumOf } from '../support/accounting.js';
import { parseSamples, series } from '../support/exposition.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';
import { python3 } from '../support/tools.js';

const python = python3();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DRIVER = fileURLToPath(new URL('../../plugin/tests/gateway_sessions.py', import.meta.url));
const M = 'anthropic/claude-sonnet-4.6';
const main = { kind: 'main', provider: 'openrouter', model: M };
const PLATFORMS = { default: 'telegram', work: 'discord' } as const;
const SESSIONS_PER_PROFILE = 20;
const TURNS_PER_SESSION = 3;

interface GatewayRun {
  readonly expected: { readonly events: number };
  readonly flushed: Record<string, boolean>;
  readonly failures: readonly string[];
  /** Calls Hermes' dispatch gate skipped before the plugin saw them, by profile and hook. */
  readonly skipped: Record<string, Record<string, number>>;
}

const running: SidecarProcess[] = [];
afterEach(async () => {
  for (const sidecar of running.splice(0)) await sidecar.stop('SIGKILL').catch(() => undefined);
});

/** Polls /metrics until the sidecar applied `events` hook events (10 s at most). */
async function untilApplied(sidecar: SidecarProcess, events: number): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    if (appliedEvents(await scrapeSamples(sidecar)) >= events) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the sidecar never applied ${events} events`);
}

describe.skipIf(python.path === undefined)(`a Hermes 0.21 gateway, ten threads and two profiles${python.skipReason ? ` (${python.skipReason})` : ''}`, () => {
  it('counts every session, turn, call, approval and interrupt exactly, per profile, without content', async () => {
    const sidecar = await startSidecarProcess(['--correlator.span-ttl=1', '--correlator.sweep-interval=1', '--log.level=debug']);
    running.push(sidecar);
    const { stdout } = await promisify(execFile)(python.path ?? 'python3', [DRIVER, `${sidecar.ingest}/v1/events`], { cwd: ROOT, timeout: 60_000 });
    const run = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as GatewayRun;
    expect(run.failures).toEqual([]);
    expect(run.flushed).toEqual({ default: true, work: true });
    // Hermes' gate skips only calls without tool_call_id/turn_id, here on_session_start.
    const skippedStarts = (profile: 'default' | 'work') => run.skipped[profile]?.on_session_start ?? 0;
    const skippedHooks = Object.values(run.skipped).flatMap((hooks) => Object.keys(hooks));
    expect(skippedHooks.filter((hook) => hook !== 'on_session_start')).toEqual([]);
    const delivered = run.expected.events - skippedStarts('default') - skippedStarts('work');
    await untilApplied(sidecar, delivered);
    // Past the span TTL and a sweep: anything still open would now count as orphaned.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const text = await (await fetch(`${sidecar.web}/metrics`)).text();
    const samples = parseSamples(text);
    const get = (name: string, labels: Record<string, string> = {}) => samples.get(series(name, labels));

    expect(appliedEvents(samples)).toBe(delivered);
    expect(get('hermes_sidecar_events_lost_total')).toBe(0);
    expect(get('hermes_sidecar_events_duplicate_total')).toBe(0);
    expect(droppedTotal(samples)).toBe(0);
    expect(sumOf(samples, 'hermes_plugin_values_refused_total{')).toBe(0);
    for (const kind of ['api', 'tool', 'turn', 'approval', 'subagent']) {
      expect(get('hermes_sidecar_orphaned_spans_total', { kind }), kind).toBe(0);
    }

    // Two profiles in one process: two live instances, each with its own profile and version.
    expect(get('hermes_plugin_instances', { state: 'live' })).toBe(2);
    expect(get('hermes_plugin_info', { hermes_version: '0.21.3', plugin_version: '0.1.0', profile: 'default' })).toBe(1);
    expect(get('hermes_plugin_info', { hermes_version: '0.21.3', plugin_version: '0.1.0', profile: 'work' })).toBe(1);

    const perProfileTurns = SESSIONS_PER_PROFILE * TURNS_PER_SESSION;
    for (const [profile, platform] of Object.entries(PLATFORMS) as ['default' | 'work', string][]) {
      // Hermes skipped some on_session_start calls; each of those sessions is counted once, from its first pre_llm_call.
      expect(get('hermes_sessions_started_total', { platform }), platform).toBe(SESSIONS_PER_PROFILE);
      expect(get('hermes_sidecar_sessions_inferred_total', { platform }) ?? 0, platform).toBe(skippedStarts(profile));
      expect(get('hermes_sessions_finalized_total', { platform }), platform).toBe(SESSIONS_PER_PROFILE);
      expect(get('hermes_sessions_active', { platform }), platform).toBe(0);
      expect(get('hermes_turns_started_total', { platform, model: M }), platform).toBe(perProfileTurns);
      // Every session ends one turn each way; only the leading identifier of turn_exit_reason crossed.
      expect(get('hermes_turns_finished_total', { platform, model: M, outcome: 'completed', exit_reason: 'text_response' }), platform).toBe(SESSIONS_PER_PROFILE);
      expect(get('hermes_turns_finished_total', { platform, model: M, outcome: 'failed', exit_reason: 'local_processing_error' }), platform).toBe(SESSIONS_PER_PROFILE);
      expect(get('hermes_turns_finished_total', { platform, model: M, outcome: 'interrupted', exit_reason: 'interrupted_during_api_call' }), platform).toBe(SESSIONS_PER_PROFILE);
      expect(get('hermes_turn_api_calls_sum', { platform }), platform).toBe(perProfileTurns + SESSIONS_PER_PROFILE);
      expect(get('hermes_turn_tool_calls_sum', { platform }), platform).toBe(perProfileTurns);
      expect(get('hermes_agent_interrupts_total', { platform, reason: 'user_stop' }), platform).toBe(SESSIONS_PER_PROFILE);
    }

    const sessions = 2 * SESSIONS_PER_PROFILE;
    const turns = sessions * TURNS_PER_SESSION;
    expect(get('hermes_api_requests_total', { ...main, outcome: 'success' })).toBe(turns);
    expect(get('hermes_api_requests_total', { ...main, outcome: 'error' })).toBe(sessions);
    expect(get('hermes_api_errors_total', { ...main, reason: 'server_error', error_class: 'APIConnectionError', status_code: '502', retryable: 'true' })).toBe(sessions);
    // Time to first chunk: 1 s for every success, 0.5 s for every failed attempt that streamed, apart. Hermes
    // times a call's first chunk from its first attempt, so the success that follows each session's failed
    // attempt of the same call is not timed, and counted as unmeasured instead.
    expect(get('hermes_api_time_to_first_chunk_seconds_count', { ...main, outcome: 'success' })).toBe(turns - sessions);
    expect(get('hermes_api_time_to_first_chunk_seconds_sum', { ...main, outcome: 'success' })).toBe(turns - sessions);
    expect(get('hermes_sidecar_time_to_first_chunk_unmeasured_total', { reason: 'after_failed_attempt' })).toBe(sessions);
    expect(get('hermes_api_time_to_first_chunk_seconds_count', { ...main, outcome: 'error' })).toBe(sessions);
    expect(get('hermes_api_time_to_first_chunk_seconds_sum', { ...main, outcome: 'error' })).toBe(sessions * 0.5);
    // Context use: 4000 prompt tokens of a 200000-token window, in the 0.1 bucket.
    expect(get('hermes_api_context_utilization_ratio_count', main)).toBe(turns);
    expect(get('hermes_api_context_utilization_ratio_sum', main)).toBeCloseTo(turns * 0.02, 9);
    expect(get('hermes_api_context_utilization_ratio_bucket', { le: '0.1', ...main })).toBe(turns);
    // The provider reported no cache writes: no series, not a measured 0.
    expect(get('hermes_tokens_total', { ...main, token_type: 'input' })).toBe(turns * 1000);
    expect(get('hermes_tokens_total', { ...main, token_type: 'cache_read' })).toBe(turns * 3000);
    expect(get('hermes_tokens_total', { ...main, token_type: 'output' })).toBe(turns * 200);
    expect(get('hermes_tokens_total', { ...main, token_type: 'reasoning' })).toBe(turns * 50);
    expect(get('hermes_tokens_total', { ...main, token_type: 'cache_write' })).toBeUndefined();

    expect(get('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' })).toBe(turns - sessions);
    expect(get('hermes_tool_calls_total', { tool: 'terminal', status: 'cancelled' })).toBe(sessions);
    expect(get('hermes_tool_calls_in_flight', { tool: 'terminal' })).toBe(0);
    expect(get('hermes_approval_requests_total', { surface: 'gateway', pattern_key: 'rm_rf' })).toBe(sessions);
    expect(get('hermes_approval_decisions_total', { surface: 'gateway', pattern_key: 'rm_rf', choice: 'once' })).toBe(sessions / 2);
    expect(get('hermes_approval_decisions_total', { surface: 'gateway', pattern_key: 'rm_rf', choice: 'deny' })).toBe(sessions / 2);
    expect(get('hermes_approvals_pending', { surface: 'gateway' })).toBe(0);

    // The sentinel was in every content field and inside turn_exit_reason: not in the metrics,
    // nor in anything the sidecar logged (plugin/tests/test_gateway.py checks the bytes sent).
    for (const output of [text, JSON.stringify(sidecar.logs), sidecar.stderr()]) {
      expect(output).not.toContain('SENTINEL');
      expect(output).not.toContain('/home/alice');
    }
  });
});
