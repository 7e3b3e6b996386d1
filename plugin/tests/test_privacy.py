"""Content never leaves the process: sentinel secrets planted in every content field of every
hook (flat and envelope) never appear in the bytes the sidecar receives."""

import unittest
import uuid

from plugin.tests import gateway_sessions, support
from plugin.tests.hermes_dispatch import (
    HERMES_021_VALID_HOOKS, HERMES_021_VERSION, PluginManager, host_hook_list, load_directory_plugin)
from plugin.tests.support import NotSerializable, RecordingSidecar


def plant(secret, payload):
    """Every content field, whether or not this hook usually carries it, holds the secret in a
    shape Hermes might use (string, nested dict/list, exception-like dict, object)."""
    planted = dict(payload)
    for name in sorted(support.fields_module.CONTENT_FIELDS):
        planted[name] = {"text": secret, "nested": [secret, {"deeper": secret}]}
    planted.update({
        "user_message": "please use key " + secret,
        "assistant_response": secret,
        "system_prompt": secret,
        "command": "curl -H 'Authorization: " + secret + "'",
        "description": secret,
        "child_goal": secret,
        "child_summary": secret,
        "error_message": secret,
        "result": '{"output": "' + secret + '"}',
        "base_url": "https://user:" + secret + "@example.invalid/v1",
        "assistant_message": NotSerializable(secret),
        "error": {"type": "RateLimitError", "message": secret},
        "tool_args": {"path": secret},
        "tool_result": secret,
        "memory_path": "/home/" + secret,
        "memory_name": secret,
        "pattern_keys": [secret],
        "sender_id": secret,
        # An unknown future field must not pass either.
        "future_field_" + secret[-6:]: secret,
    })
    return planted


class PrivacyTest(unittest.TestCase):
    def test_sentinels_in_every_content_field_never_reach_the_sidecar(self):
        secret = "SECRET-" + uuid.uuid4().hex
        manager = PluginManager()
        with RecordingSidecar() as sidecar:
            with support.patched_environ(support.fast_env(sidecar.url)):
                module = load_directory_plugin(support.PLUGIN_DIR, manager, observer_hooks=True)
            bridge = list(module._LIVE_BRIDGES)[0]
            flat = support.appendix_a()
            for key in sorted(flat):
                hook, payload = flat[key]
                manager.invoke_hook(hook, **plant(secret, payload))
            envelope = support.observer_payloads()
            for key in sorted(envelope):
                event, data = envelope[key]
                manager.emit_observer(event, plant(secret, data))
            bridge.shutdown(1.0)
            received = sidecar.raw_bytes()
            events = sidecar.events()
        # Not vacuous: every event of a registered hook arrived, plus the final heartbeat.
        registered = [key for key in flat if manager.has_hook(flat[key][0])] + [
            key for key in envelope if manager.has_observer_hook(envelope[key][0])]
        self.assertEqual(len(registered), len(flat) + len(envelope) - 2)  # post_llm_call, agent_start
        self.assertEqual(len(events), len(registered))
        self.assertGreaterEqual(len(sidecar.heartbeats()), 1)
        self.assertNotIn(secret.encode(), received)
        self.assertNotIn(secret[len("SECRET-"):].encode(), received)
        self.assertNotIn(b"SECRET", received)
        self.assertEqual(manager.failures, [])

    def test_sentinels_at_the_hermes_021_call_sites_never_reach_the_sidecar(self):
        """Hermes 0.21's keyword arguments (gateway_sessions.CALL_SITES), every content field
        planted, and the sentinel also inside turn_exit_reason (agent/turn_finalizer.py passes
        local_processing_error(<the first 80 characters of an error message>))."""
        secret = "SECRET-" + uuid.uuid4().hex
        manager = PluginManager()
        with RecordingSidecar() as sidecar:
            with host_hook_list(HERMES_021_VALID_HOOKS, version=HERMES_021_VERSION):
                with support.patched_environ(support.fast_env(sidecar.url)):
                    module = load_directory_plugin(support.PLUGIN_DIR, manager, profile="default")
            bridge = list(module._LIVE_BRIDGES)[0]
            turns, finalize = gateway_sessions.session_steps("default", "telegram", 0)
            calls = [step for steps in turns for step in steps] + [finalize]
            for hook, kwargs in calls:
                planted = plant(secret, kwargs)
                if hook == "on_session_end":
                    planted["turn_exit_reason"] = (
                        "local_processing_error(FileNotFoundError: /home/" + secret + ")")
                manager.invoke_hook(hook, **planted)
            bridge.shutdown(1.0)
            received = sidecar.raw_bytes()
            events = sidecar.events()
        self.assertNotIn(secret.encode(), received)
        self.assertNotIn(secret[len("SECRET-"):].encode(), received)
        self.assertNotIn(b"SECRET", received)
        self.assertNotIn(b"/home/", received)
        # Not vacuous: every call arrived, and the exit reasons crossed as identifiers.
        self.assertEqual(len(events), len(calls))
        self.assertEqual(sorted({event["event"] for event in events}), sorted({hook for hook, _ in calls}))
        exit_reasons = [event["data"]["turn_exit_reason"] for event in events
                        if event["event"] == "on_session_end"]
        self.assertEqual(exit_reasons, ["local_processing_error"] * gateway_sessions.TURNS)
        self.assertEqual(manager.failures, [])

    def test_the_plugin_logs_no_content_when_delivery_fails(self):
        secret = "SECRET-" + uuid.uuid4().hex
        config = support.fast_config(support.unused_port_url()[1], heartbeat_interval=0.05)
        bridge = support.bridge_module.Bridge(config)
        callback = bridge.hook_callback("post_tool_call",
                                        support.fields_module.HOOK_FIELDS["post_tool_call"])
        with self.assertLogs("hermes_prometheus_bridge", level="DEBUG") as logs:
            bridge.start()
            callback(**plant(secret, support.appendix_a()["A.11"][1]))
            support.wait_until(lambda: bridge.stats()["retries"] >= 2)
            bridge.shutdown(0.2)
        self.assertTrue(logs.output)
        self.assertNotIn(secret, "\n".join(logs.output))


if __name__ == "__main__":
    unittest.main()
