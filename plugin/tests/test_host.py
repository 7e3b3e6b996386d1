"""The plugin inside a host like the real Hermes: its hook list, its call sites, reloads,
the finalize wait, fork renewal, and cost in USD from Hermes' own pricing module."""

import json
import os
import threading
import time
import types
import unittest
from decimal import Decimal

from plugin.tests import support
from plugin.tests.hermes_dispatch import (
    HERMES_VALID_HOOKS, PluginManager, host_hook_list, load_directory_plugin)
from plugin.tests.support import BlackHole, RecordingSidecar

contract_module = __import__("hermes_prometheus_bridge.contract", fromlist=["CONTRACT"])
SENTINEL = "CONTENT-SENTINEL"


def sender_threads():
    return [t for t in threading.enumerate() if t.name == "hermes-prometheus-bridge"]


def call_sites():
    return support.load_fixture("hermes_call_sites.json")["steps"]


class CallSitesTest(unittest.TestCase):
    """Every hook fired with the keyword arguments the real call sites pass."""

    def run_turn(self):
        manager = PluginManager()
        sidecar = RecordingSidecar()
        self.addCleanup(sidecar.close)
        with host_hook_list(), self.assertLogs("hermes_prometheus_bridge", "INFO") as logs:
            with support.patched_environ(support.fast_env(sidecar.url)):
                module = load_directory_plugin(support.PLUGIN_DIR, manager)
            bridge = list(module._LIVE_BRIDGES)[0]
            self.addCleanup(bridge.shutdown, 0.5)
            for step in call_sites():
                self.assertEqual(manager.invoke_hook(step["hook"], **step["kwargs"]), [])
            self.assertTrue(bridge.flush(2.0))
        return manager, sidecar, logs.output

    def test_only_hooks_the_host_knows_are_registered_and_the_skipped_ones_are_logged(self):
        manager, _sidecar, logs = self.run_turn()
        self.assertEqual(manager.warnings, [])  # no "unknown hook" at all
        self.assertTrue(set(manager.hook_names()) <= HERMES_VALID_HOOKS)
        self.assertNotIn("pre_auxiliary_call", manager.hook_names())
        self.assertEqual(
            [line for line in logs if "does not offer" in line],
            ["INFO:hermes_prometheus_bridge:hermes_prometheus_bridge: this Hermes does not "
             "offer pre_auxiliary_call, post_auxiliary_call; not registered"])

    def test_the_turn_arrives_with_error_class_exit_reason_and_the_escalation(self):
        manager, sidecar, _logs = self.run_turn()
        events = [(e["event"], e["data"]) for e in sidecar.events()]
        self.assertEqual([name for name, _ in events], [
            step["hook"] for step in call_sites() if step["hook"] != "post_llm_call"])
        by_hook = {}
        for name, data in events:
            by_hook.setdefault(name, []).append(data)
        self.assertEqual(by_hook["api_request_error"], [{
            "turn_id": "t_1", "api_request_id": "t_1:api:1", "model": "anthropic/claude-sonnet-4.6",
            "provider": "openrouter", "api_duration": 1.25, "started_at": 1789862412.0,
            "status_code": 429, "retry_count": 0,
            "max_retries": 3, "retryable": True, "reason": "rate_limit",
            "error_type": "RateLimitError"}])
        self.assertEqual(by_hook["on_session_end"], [
            {"session_id": "20260920_141203_9f3c2a", "turn_id": "t_1", "completed": True,
             "interrupted": False, "model": "anthropic/claude-sonnet-4.6", "platform": "cli"},
            {"session_id": "20260920_141203_9f3c2a", "completed": False, "interrupted": True,
             "model": "anthropic/claude-sonnet-4.6", "platform": "cli", "reason": "cli_exit"}])
        self.assertEqual(by_hook["pre_approval_request"], [
            {"surface": "smart", "pattern_key": "rm_rf", "tool_call_id": "toolu_1",
             "session_key": "agent:main:cli", "turn_id": "t_1"},
            {"surface": "cli", "pattern_key": "rm_rf", "tool_call_id": "toolu_1",
             "session_key": "agent:main:cli", "turn_id": "t_1"}])
        self.assertEqual(by_hook["post_approval_response"], [
            {"surface": "cli", "pattern_key": "rm_rf", "tool_call_id": "toolu_1",
             "session_key": "agent:main:cli", "choice": "once", "decided_by": "user",
             "turn_id": "t_1"}])
        self.assertEqual(by_hook["post_api_request"][0]["usage"], {
            "input_tokens": 1204, "output_tokens": 412, "cache_read_tokens": 18030,
            "cache_write_tokens": 952, "reasoning_tokens": 0, "prompt_tokens": 20186})
        self.assertNotIn(SENTINEL.encode(), sidecar.raw_bytes())
        self.assertNotIn(b"openrouter.ai", sidecar.raw_bytes())  # base_url stays inside
        self.assertEqual(manager.failures, [])

    def test_an_error_type_that_is_not_an_identifier_is_not_forwarded(self):
        fields = support.fields_module
        self.assertEqual(fields.error_class({"type": "RateLimitError", "message": "x"}),
                         "RateLimitError")
        self.assertEqual(fields.error_class({"type": "openai.APITimeoutError"}),
                         "openai.APITimeoutError")
        for odd in ({"type": "rate limit: try later"}, {"message": "x"}, {"type": "x" * 65},
                    {"type": 42}, "has spaces", None, ["RateLimitError"]):
            with self.subTest(value=repr(odd)[:30]):
                self.assertIs(fields.error_class(odd), fields.MISSING)
        self.assertIs(fields.short_identifier("Exit Now"), fields.MISSING)
        self.assertEqual(fields.short_identifier("cli_exit"), "cli_exit")


class ContractTableTest(unittest.TestCase):
    def test_allow_lists_are_exactly_the_table(self):
        table = contract_module.CONTRACT
        fields = support.fields_module
        for kind, allow in (("hooks", fields.HOOK_FIELDS), ("observer", fields.OBSERVER_FIELDS)):
            self.assertEqual(sorted(allow), sorted(table[kind]))
            for hook, entry in table[kind].items():
                with self.subTest(hook=hook):
                    self.assertEqual(allow[hook],
                                     tuple(entry["fields"]) + tuple(entry.get("added", {})))
                    for name, field in entry["fields"].items():
                        self.assertIn(field["type"],
                                      ("string", "number", "integer", "boolean", "object"))
                    self.assertNotIn("base_url", entry["fields"])
        with open(os.path.join(support.PLUGIN_DIR, "contract.json"), encoding="utf-8") as handle:
            self.assertEqual(json.load(handle), table)

    def test_the_manifest_names_every_flat_hook_of_the_table(self):
        from plugin.tests.test_register import manifest_hooks
        self.assertEqual(manifest_hooks(), list(contract_module.CONTRACT["hooks"]))


class LifecycleTest(unittest.TestCase):
    def test_start_twice_runs_one_thread_and_a_stopped_bridge_does_not_restart(self):
        bridge = support.bridge_module.Bridge(
            support.fast_config(support.unused_port_url()[1]))
        self.assertTrue(bridge.start())
        thread = bridge._sender._thread
        self.assertFalse(bridge.start())
        self.assertIs(bridge._sender._thread, thread)
        self.assertEqual(sum(1 for t in sender_threads() if t is thread), 1)
        bridge.shutdown(0.2)
        self.assertFalse(bridge.start())
        thread.join(1.0)
        self.assertFalse(thread.is_alive())
        self.assertNotIn(thread, sender_threads())

    def test_unload_stops_the_sender_and_a_reload_starts_one(self):
        support.wait_until(lambda: not sender_threads())  # earlier tests' threads are gone
        with RecordingSidecar() as sidecar:
            with support.patched_environ(support.fast_env(sidecar.url)):
                first = load_directory_plugin(support.PLUGIN_DIR, PluginManager())
                old = list(first._LIVE_BRIDGES)[0]
                self.assertEqual(len(sender_threads()), 1)
                first.hermes_test_context.unload()  # Hermes: on_unload, then the new load
                second = load_directory_plugin(support.PLUGIN_DIR, PluginManager())
            new = list(second._LIVE_BRIDGES)[0]
            self.addCleanup(new.shutdown, 0.2)
            support.wait_until(lambda: len(sender_threads()) == 1)
            self.assertTrue(new.flush(1.0))
            self.assertFalse(old.start())
            second.hermes_test_context.unload()
            support.wait_until(lambda: not sender_threads())

    def test_a_second_profile_in_the_process_does_not_stop_the_first(self):
        support.wait_until(lambda: not sender_threads())
        with support.patched_environ(support.fast_env(support.unused_port_url()[1])):
            first = load_directory_plugin(support.PLUGIN_DIR, PluginManager())
            second = load_directory_plugin(support.PLUGIN_DIR, PluginManager())
        bridges = list(first._LIVE_BRIDGES) + list(second._LIVE_BRIDGES)
        for bridge in bridges:
            self.addCleanup(bridge.shutdown, 0.1)
        time.sleep(0.05)
        self.assertEqual(len(sender_threads()), 2)

    def test_without_on_unload_a_reload_retires_the_earlier_sender(self):
        support.wait_until(lambda: not sender_threads())
        plugin = support.hermes_prometheus_bridge

        class OldHost(object):
            def __init__(self):
                self.hooks = {}

            def register_hook(self, name, callback):
                self.hooks[name] = callback

        with support.patched_environ(support.fast_env(support.unused_port_url()[1])):
            plugin.register(OldHost())
            self.assertEqual(len(sender_threads()), 1)
            plugin.register(OldHost())
        for bridge in list(plugin._LIVE_BRIDGES):
            self.addCleanup(bridge.shutdown, 0.1)
        support.wait_until(lambda: len(sender_threads()) == 1)

    def test_finalize_waits_briefly_for_a_hung_sidecar_and_not_at_all_for_a_dead_one(self):
        hole = BlackHole()
        self.addCleanup(hole.close)
        bridge = support.bridge_module.Bridge(support.fast_config(hole.url, timeout=2.0))
        self.addCleanup(bridge.shutdown, 0.1)
        finalize = bridge.finalize_callback("on_session_finalize")
        bridge.start()
        started = time.monotonic()
        finalize(session_id="s", platform="cli")
        waited = time.monotonic() - started
        self.assertGreaterEqual(waited, 0.2)
        self.assertLess(waited, 0.6)  # FINALIZE_WAIT_MAX (0.25 s), never the 2 s HTTP timeout

        dead = support.bridge_module.Bridge(support.fast_config(
            support.unused_port_url()[1], backoff_initial=5.0, backoff_max=5.0))
        self.addCleanup(dead.shutdown, 0.1)
        dead.hook_callback("on_session_start")(session_id="s")
        dead.start()
        support.wait_until(lambda: dead.stats()["retries"] >= 1)
        finalize = dead.finalize_callback("on_session_finalize")
        started = time.monotonic()
        finalize(session_id="s", platform="cli")
        self.assertLess(time.monotonic() - started, 0.05)  # back-off: no wait at all

    def test_a_failed_renewal_after_fork_is_counted(self):
        manager = PluginManager()
        with support.patched_environ(support.fast_env(support.unused_port_url()[1])):
            module = load_directory_plugin(support.PLUGIN_DIR, manager)
        bridge = list(module._LIVE_BRIDGES)[0]
        self.addCleanup(bridge.shutdown, 0.1)

        def broken():
            raise RuntimeError("renewal failed")

        bridge.after_fork_in_child = broken
        module._renew_after_fork()
        self.assertEqual(bridge.stats()["errors"], {"fork_renew_error": 1})
        line = json.loads(support.bridge_module.Bridge.heartbeat_line(bridge))
        self.assertEqual(line["data"]["plugin_errors"], {"fork_renew_error": 1})


class FakePricing(object):
    """Stands in for ``agent.usage_pricing`` with known prices (per million tokens)."""

    def __init__(self, prices, fail=False):
        self.prices = prices
        self.fail = fail
        self.calls = []
        self.threads = set()
        pricing = self

        class CanonicalUsage(object):
            def __init__(self, input_tokens=0, output_tokens=0, cache_read_tokens=0,
                         cache_write_tokens=0, reasoning_tokens=0, request_count=1):
                self.input_tokens, self.output_tokens = input_tokens, output_tokens
                self.cache_read_tokens, self.cache_write_tokens = cache_read_tokens, \
                    cache_write_tokens

        def estimate_usage_cost(model, usage, *, provider=None, base_url=None, api_key=None):
            pricing.calls.append((model, provider, base_url, api_key))
            pricing.threads.add(threading.current_thread().name)
            if pricing.fail:
                raise AttributeError("changed module")
            if provider == "openai-codex":
                return types.SimpleNamespace(amount_usd=Decimal("0"), status="included")
            rates = pricing.prices.get((provider, model))
            if rates is None:
                return types.SimpleNamespace(amount_usd=None, status="unknown")
            amount = sum(Decimal(tokens) * Decimal(rate) / Decimal(1000000) for tokens, rate in (
                (usage.input_tokens, rates[0]), (usage.output_tokens, rates[1]),
                (usage.cache_read_tokens, rates[2]), (usage.cache_write_tokens, rates[3])))
            return types.SimpleNamespace(amount_usd=amount, status="estimated")

        self.module = types.ModuleType("agent.usage_pricing")
        self.module.CanonicalUsage = CanonicalUsage
        self.module.estimate_usage_cost = estimate_usage_cost


class CostTest(unittest.TestCase):
    USAGE = {"input_tokens": 1000000, "output_tokens": 200000, "cache_read_tokens": 500000,
             "cache_write_tokens": 0, "reasoning_tokens": 0, "request_count": 1,
             "prompt_tokens": 1500000, "total_tokens": 1700000}

    def send(self, modules, *calls):
        with RecordingSidecar() as sidecar:
            bridge = support.bridge_module.Bridge(support.fast_config(sidecar.url), pricing_modules=modules)
            callback = bridge.hook_callback("post_api_request")
            for kwargs in calls:
                callback(**kwargs)
            bridge.start()
            self.assertTrue(bridge.flush(2.0))
            bridge.shutdown(0.5)
            return [e["data"] for e in sidecar.events()], bridge.stats()["errors"]

    def call(self, provider, model, usage=None):
        return {"provider": provider, "model": model, "base_url": "https://example.invalid/v1",
                "api_key": "sk-never-read", "usage": dict(usage or self.USAGE)}

    def test_known_prices_give_exact_cost_on_the_sender_thread(self):
        pricing = FakePricing({("anthropic", "claude-x"): ("3", "15", "0.3", "3.75")})
        data, errors = self.send(
            {"agent.usage_pricing": pricing.module},
            self.call("anthropic", "claude-x"), self.call("openai-codex", "gpt-5.6-sol"),
            self.call("custom", "local-model"), self.call("custom", "local-model"),
            {"provider": "anthropic", "model": "claude-x"})  # no usage: not priced
        self.assertEqual([(d.get("cost_usd"), d.get("cost_status")) for d in data], [
            (3.0 + 3.0 + 0.15, "estimated"), (0.0, "included"), (None, "unknown"),
            (None, "unknown"), (None, None)])
        # The unknown route was asked once (cached), never with an API key.
        self.assertEqual(pricing.calls, [
            ("claude-x", "anthropic", "https://example.invalid/v1", None),
            ("gpt-5.6-sol", "openai-codex", "https://example.invalid/v1", None),
            ("local-model", "custom", "https://example.invalid/v1", None)])
        self.assertEqual(errors, {})
        self.assertNotIn("base_url", data[0])
        self.assertEqual(pricing.threads, {"hermes-prometheus-bridge"})  # never the agent's

    def test_without_hermes_pricing_there_is_no_cost_field_and_one_counter(self):
        data, errors = self.send({}, self.call("anthropic", "claude-x"),
                                 self.call("anthropic", "claude-x"))
        self.assertEqual([sorted(d) for d in data], [sorted(data[0])] * 2)
        self.assertNotIn("cost_usd", data[0])
        self.assertNotIn("cost_status", data[0])
        self.assertEqual(errors, {"cost_unavailable": 1})

    def test_a_changed_pricing_module_costs_a_counter_not_the_event(self):
        pricing = FakePricing({}, fail=True)
        data, errors = self.send({"agent.usage_pricing": pricing.module},
                                 self.call("anthropic", "claude-x"),
                                 self.call("anthropic", "claude-x"))
        self.assertEqual(len(data), 2)
        self.assertNotIn("cost_usd", data[0])
        self.assertEqual(errors, {"cost_error": 1})  # the route is not asked again


if __name__ == "__main__":
    unittest.main()


class ForkWakeTest(unittest.TestCase):
    def test_in_a_forked_child_a_full_batch_still_wakes_the_new_sender(self):
        with RecordingSidecar() as sidecar:
            bridge = support.bridge_module.Bridge(support.fast_config(
                sidecar.url, batch_size=2, flush_interval=30.0))
            support.hermes_prometheus_bridge.start(bridge)
            self.addCleanup(bridge.shutdown, 0.2)
            callback = bridge.hook_callback("pre_llm_call")
            pid = os.fork()
            if pid == 0:  # child: two events make a batch; no flush, no timer (30 s)
                code = 1
                try:
                    callback(turn_id="child-1")
                    callback(turn_id="child-2")
                    deadline = time.monotonic() + 3.0
                    while time.monotonic() < deadline:
                        if bridge.stats()["events_delivered"] == 2:
                            code = 0
                            break
                        time.sleep(0.01)
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            self.assertEqual(os.waitstatus_to_exitcode(status), 0)
            self.assertEqual([e["data"]["turn_id"] for e in sidecar.events()],
                             ["child-1", "child-2"])
