"""The plugin inside a host like the real Hermes: its hook list and its call sites."""

import unittest

from plugin.tests import support
from plugin.tests.hermes_dispatch import (
    HERMES_VALID_HOOKS, PluginManager, host_hook_list, load_directory_plugin)
from plugin.tests.support import RecordingSidecar

contract_module = __import__("hermes_prometheus_bridge.contract", fromlist=["CONTRACT"])
SENTINEL = "CONTENT-SENTINEL"


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


if __name__ == "__main__":
    unittest.main()
