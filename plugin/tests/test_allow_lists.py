"""Exactly which fields are sent for each canonical Hermes payload (fixtures/appendix_a_payloads.json; docs/contract.md)."""

import unittest

from plugin.tests import support
from plugin.tests.hermes_dispatch import PluginManager, load_directory_plugin
from plugin.tests.support import NotSerializable, RecordingSidecar

SESSION = "20260920_141203_9f3c2a"
TURN = "t_7c1e5b20"
MODEL = "anthropic/claude-sonnet-4.6"
# What leaves the plugin is what the sidecar reads (contract.json): the usage keys it reads.
USAGE = {"input_tokens": 1204, "output_tokens": 412, "cache_read_tokens": 18030,
         "cache_write_tokens": 952, "reasoning_tokens": 0, "prompt_tokens": 20186}
AUX_USAGE = {"input_tokens": 310, "output_tokens": 9, "cache_read_tokens": 0,
             "cache_write_tokens": 0, "reasoning_tokens": 0, "prompt_tokens": 310}
API_IDS = {"turn_id": TURN, "model": MODEL, "provider": "openrouter"}
TOOL_IDS = {"tool_name": "terminal", "tool_call_id": "toolu_01HkQ9", "turn_id": TURN}
APPROVAL = {"pattern_key": "rm_rf", "session_key": "agent:main:telegram:dm:123456",
            "surface": "gateway", "tool_call_id": "toolu_01Zz77", "turn_id": TURN}
# turn_id="" (Hermes' unknown id) is left out as absent.
AUX = {"api_request_id": "aux-3b1f", "model": "google/gemini-3.5-flash",
       "provider": "openrouter"}

# The ``data`` object the sidecar receives for each Appendix A payload, written out by hand.
# None for a hook the plugin does not register (post_llm_call: the sidecar has no use for it).
EXPECTED = {
    "A.1": {"session_id": SESSION, "platform": "cli"},
    "A.2": {"session_id": SESSION, "turn_id": TURN, "completed": True, "failed": False,
            "interrupted": False, "turn_exit_reason": "text_response",
            "model": MODEL, "platform": "cli"},
    "A.2-cli-exit": {"session_id": SESSION, "completed": False, "interrupted": True,
                     "model": MODEL, "platform": "cli", "reason": "cli_exit"},
    "A.3": {"session_id": SESSION, "platform": "telegram"},
    "A.4": {"session_id": "20260920_160511_1a2b3c", "platform": "telegram"},
    "A.5": {"session_id": SESSION, "turn_id": TURN, "model": MODEL, "platform": "cli"},
    "A.6": None,
    "A.7": dict(API_IDS, api_request_id=TURN + ":api:2"),
    "A.8": dict(API_IDS, api_request_id=TURN + ":api:2", api_duration=6.842,
                started_at=1789862412.481, first_chunk_at=1789862413.902,
                finish_reason="tool_calls", usage=USAGE),
    "A.9": dict(API_IDS, api_request_id=TURN + ":api:3", api_duration=1.207,
                started_at=1789862425.01, status_code=429,
                retry_count=0, max_retries=3, retryable=True, reason="rate_limit",
                error_type="RateLimitError"),
    "A.10": TOOL_IDS,
    # null is not sent: every sidecar reader treats it as absent (error_type=None here).
    "A.11": dict(TOOL_IDS, duration_ms=3412, status="ok"),
    "A.11-error": dict(TOOL_IDS, duration_ms=3412, status="error", error_type="tool_error"),
    "A.11-blocked": dict(TOOL_IDS, duration_ms=0, status="blocked", error_type="plugin_block"),
    "A.11-timeout": dict(TOOL_IDS, duration_ms=420000, status="timeout",
                         error_type="tool_timeout"),
    "A.13": APPROVAL,
    "A.14": dict(APPROVAL, choice="once"),
    "A.14-smart": dict(APPROVAL, surface="smart", choice="smart_deny", decided_by="aux_llm"),
    "A.15": {"child_session_id": "20260920_141530_44d1e0", "child_role": "leaf"},
    "A.16": {"child_session_id": "20260920_141530_44d1e0", "child_role": "leaf",
             "child_status": "completed", "duration_ms": 41270},
    "A.17-pre": AUX,
    "A.17-post": dict(AUX, api_duration=0.912, started_at=1789862420.100, finish_reason="stop",
                      usage=AUX_USAGE, error=False, retry_count=0),
}

# None for an envelope event the plugin does not register (agent_start: no sidecar use).
OBSERVER_EXPECTED = {
    "agent_start": None,
    "agent_end": {"run_duration_ms": 18342, "stop_reason": "end_turn"},
    "pre_api_request": {"api_request_id": TURN + ":api:1", "provider": "openrouter",
                        "model": MODEL},
    "post_api_request": {"api_request_id": TURN + ":api:1", "provider": "openrouter",
                         "model": MODEL, "usage": USAGE, "duration_ms": 6842},
    "api_request_error": {"api_request_id": TURN + ":api:2", "provider": "openrouter",
                          "model": MODEL, "error_type": "RateLimitError",
                          "duration_ms": 1207},
    "pre_tool_call": {"tool_name": "terminal", "tool_call_id": "toolu_01HkQ9"},
    "post_tool_call": {"tool_name": "terminal", "tool_call_id": "toolu_01HkQ9",
                       "duration_ms": 3412, "error": False},
    "post_tool_call-error": {"tool_name": "read_file", "tool_call_id": "toolu_01Qx2",
                             "duration_ms": 12, "error": True},
    "memory_write": {"memory_provider": "builtin", "action": "add", "size_bytes": 214},
    "turn_end": {"turn_id": TURN, "turn_start_time_ms": 1789862410100,
                 "turn_end_time_ms": 1789862428442, "turn_duration_ms": 18342},
    "session_event": {"event": "created"},
}


def fixture_payload(hook, payload):
    """The Appendix A payload as Hermes would pass it (a real object in assistant_message)."""
    payload = dict(payload)
    if hook == "post_api_request":
        payload["assistant_message"] = NotSerializable()
    return payload


class AllowListTest(unittest.TestCase):
    def setUp(self):
        self.sidecar = RecordingSidecar()
        self.addCleanup(self.sidecar.close)

    def load(self, observer_hooks=False):
        manager = PluginManager()
        with support.patched_environ(support.fast_env(self.sidecar.url)):
            module = load_directory_plugin(support.PLUGIN_DIR, manager, observer_hooks)
        bridges = list(module._LIVE_BRIDGES)
        self.assertEqual(len(bridges), 1)
        self.addCleanup(bridges[0].shutdown, 0.5)
        return manager, bridges[0]

    def test_every_appendix_a_payload_sends_exactly_its_content_free_fields(self):
        manager, bridge = self.load()
        cases = support.appendix_a()
        self.assertEqual(sorted(cases), sorted(EXPECTED))
        order = sorted(cases)
        for key in order:
            hook, payload = cases[key]
            self.assertEqual(manager.invoke_hook(hook, **fixture_payload(hook, payload)), [])
        self.assertTrue(bridge.flush(2.0))
        events = self.sidecar.events()
        order = [key for key in order if EXPECTED[key] is not None]
        self.assertEqual(len(events), len(order))
        for index, (key, event) in enumerate(zip(order, events)):
            with self.subTest(payload=key):
                self.assertEqual(sorted(event), ["data", "event", "instance", "observed_at", "seq"])
                self.assertEqual(event["event"], cases[key][0])
                self.assertEqual(event["seq"], index + 1)
                self.assertEqual(event["instance"], bridge.instance)
                self.assertEqual(event["data"], EXPECTED[key])
        self.assertEqual(manager.failures, [])

    def test_agent_loop_stopped_never_forwards_profile_home(self):
        # Newer Hermes adds profile_home (a filesystem path) to agent_loop_stopped; the allow-list
        # in contract.json keeps it in the plugin, with every other unlisted kwarg.
        manager, bridge = self.load()
        home = "/home/alice/.hermes/profiles/work-secret"
        self.assertEqual(manager.invoke_hook(
            "agent_loop_stopped", session_key="agent:main:telegram:dm:123456", platform="telegram",
            reason="user_stop", invalidation_reason="session_interrupt", profile_home=home), [])
        self.assertTrue(bridge.flush(2.0))
        events = self.sidecar.events()
        self.assertEqual([event["event"] for event in events], ["agent_loop_stopped"])
        self.assertEqual(events[0]["data"], {"platform": "telegram", "reason": "user_stop"})
        self.assertNotIn(b"work-secret", self.sidecar.raw_bytes())
        self.assertNotIn(b"profile_home", self.sidecar.raw_bytes())
        self.assertEqual(manager.failures, [])

    def test_envelope_variant_sends_data_fields_and_only_an_error_flag(self):
        manager, bridge = self.load(observer_hooks=True)
        cases = support.observer_payloads()
        self.assertEqual(sorted(cases), sorted(OBSERVER_EXPECTED))
        order = sorted(cases)
        for key in order:
            event, data = cases[key]
            self.assertEqual(manager.emit_observer(event, data), [])
        self.assertTrue(bridge.flush(2.0))
        events = self.sidecar.events()
        order = [key for key in order if OBSERVER_EXPECTED[key] is not None]
        self.assertEqual([e["event"] for e in events], [cases[key][0] for key in order])
        for key, event in zip(order, events):
            with self.subTest(payload=key):
                self.assertEqual(event["data"], OBSERVER_EXPECTED[key])
        self.assertEqual(manager.failures, [])

    def test_no_allow_list_names_a_content_field(self):
        fields = support.fields_module
        for table in (fields.HOOK_FIELDS, fields.OBSERVER_FIELDS):
            for hook, allowed in table.items():
                with self.subTest(hook=hook):
                    self.assertEqual(set(allowed) & fields.CONTENT_FIELDS, set())
                    self.assertEqual(len(allowed), len(set(allowed)))
        error_hooks = {h for h, allowed in fields.HOOK_FIELDS.items() if "error" in allowed}
        self.assertEqual(error_hooks, set(fields.ERROR_FLAG_HOOKS))
        error_events = {e for e, allowed in fields.OBSERVER_FIELDS.items() if "error" in allowed}
        self.assertEqual(error_events, set(fields.OBSERVER_ERROR_FLAG_EVENTS))


if __name__ == "__main__":
    unittest.main()
