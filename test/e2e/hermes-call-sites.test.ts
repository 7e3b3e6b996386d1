/**
 * One CLI turn of the real Hermes (NousResearch/hermes-agent, July 2026), hook by hook as its
 * call sites pass the keyword arguments (plugin/tests/fixtures/hermes_call_sites.json, each step
 * naming file and function), through the real bridge plugin in the Hermes dispatch harness, to
 * the real sidecar binary. Hermes' own pricing module is stood in for with known prices, so the
 * cost is exact. The smart approval escalates to the CLI: counted as `escalated`, no orphan.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSamples, samplesOf, series } from '../support/exposition.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';
import { python3 } from '../support/tools.js';

const python = python3();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// FakePricing (plugin/tests/test_pricing.py) answers like agent.usage_pricing.estimate_usage_cost.
const TURN = `
import json, sys
from plugin.tests import support
from plugin.tests.hermes_dispatch import PluginManager, host_hook_list, load_directory_plugin
from plugin.tests.test_pricing import FakePricing

pricing = FakePricing({("openrouter", "anthropic/claude-sonnet-4.6"): ("3", "15", "0.3", "3.75")})
sys.modules["agent.usage_pricing"] = pricing.module
manager = PluginManager()
with host_hook_list():
    with support.patched_environ(support.fast_env(sys.argv[1])):
        module = load_directory_plugin(support.PLUGIN_DIR, manager)
    bridge = list(module._LIVE_BRIDGES)[0]
    for step in support.load_fixture("hermes_call_sites.json")["steps"]:
        manager.invoke_hook(step["hook"], **step["kwargs"])
    flushed = bridge.flush(5.0)
    bridge.shutdown(1.0)
print(json.dumps({"flushed": flushed, "priced": len(pricing.calls)}))
`;

const running: SidecarProcess[] = [];
afterEach(async () => {
  for (const sidecar of running.splice(0)) await sidecar.stop('SIGKILL').catch(() => undefined);
});

describe.skipIf(python.path === undefined)(`Hermes call sites through the real plugin${python.skipReason ? ` (${python.skipReason})` : ''}`, () => {
  it('shows the escalation, the exception class, one turn and Hermes\' price, with no orphan', async () => {
    const sidecar = await startSidecarProcess(['--correlator.span-ttl=1', '--correlator.sweep-interval=1']);
    running.push(sidecar);
    const { stdout } = await promisify(execFile)(python.path ?? 'python3', ['-c', TURN, `${sidecar.ingest}/v1/events`], { cwd: ROOT, timeout: 30_000 });
    expect(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}')).toEqual({ flushed: true, priced: 1 });
    // Past the span TTL and a sweep: anything still open would now count as orphaned.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const samples = parseSamples(await (await fetch(`${sidecar.web}/metrics`)).text());
    const main = { kind: 'main', provider: 'openrouter', model: 'anthropic/claude-sonnet-4.6' };

    expect(Object.fromEntries(samplesOf(new Map(samples), 'hermes_approval_decisions_total', 'hermes_approval_requests_total', 'hermes_approvals_pending'))).toEqual({
      [series('hermes_approval_requests_total', { surface: 'smart', pattern_key: 'rm_rf' })]: 1,
      [series('hermes_approval_requests_total', { surface: 'cli', pattern_key: 'rm_rf' })]: 1,
      [series('hermes_approval_decisions_total', { surface: 'smart', pattern_key: 'rm_rf', choice: 'escalated' })]: 1,
      [series('hermes_approval_decisions_total', { surface: 'cli', pattern_key: 'rm_rf', choice: 'once' })]: 1,
      [series('hermes_approvals_pending', { surface: 'smart' })]: 0,
      [series('hermes_approvals_pending', { surface: 'cli' })]: 0,
    });
    for (const kind of ['api', 'tool', 'turn', 'approval', 'subagent']) {
      expect(samples.get(series('hermes_sidecar_orphaned_spans_total', { kind })), kind).toBe(0);
    }
    const errors = samplesOf(new Map(samples), 'hermes_api_errors_total');
    expect([...errors].map(([key, value]) => [/error_class="(\w+)"/.exec(key)?.[1], /reason="(\w+)"/.exec(key)?.[1], value])).toEqual([
      ['RateLimitError', 'rate_limit', 1],
    ]);
    const finished = samplesOf(new Map(samples), 'hermes_turns_finished_total');
    // The CLI's exit on_session_end (reason="cli_exit") comes after the turn ended: it is no turn.
    expect([...finished].map(([key, value]) => [/outcome="(\w+)"/.exec(key)?.[1], /exit_reason="(\w+)"/.exec(key)?.[1], value])).toEqual([
      ['completed', 'unknown', 1],
    ]);
    // 1204 input × 3 + 412 output × 15 + 18030 cache read × 0.3 + 952 cache write × 3.75, per million.
    expect(samples.get(series('hermes_cost_usd_total', { ...main, pricing: 'hermes' }))).toBe(0.018771);
    expect(samples.get(series('hermes_cost_unpriced_requests_total', { ...main, reason: 'no_price' }))).toBeUndefined();
  });
});
