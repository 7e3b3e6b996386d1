"""The harness behaves like Hermes' invoke_hook, and the plugin behaves well inside it."""

import threading
import time
import unittest

from plugin.tests import support
from plugin.tests.hermes_dispatch import PluginManager, load_directory_plugin
from plugin.tests.support import RecordingSidecar


class HarnessSemanticsTest(unittest.TestCase):
    def test_schema_version_is_injected_except_for_gateway_platform_events(self):
        manager = PluginManager()
        seen = {}
        for hook in ("post_tool_call", "on_session_finalize", "gateway_platform_event"):
            manager.add_hook(hook, lambda _hook=hook, **kwargs: seen.__setitem__(_hook, kwargs))
            manager.invoke_hook(hook, platform="cli")
        self.assertEqual(seen["post_tool_call"]["telemetry_schema_version"], "hermes.observer.v1")
        self.assertEqual(seen["on_session_finalize"]["telemetry_schema_version"],
                         "hermes.observer.v1")
        self.assertNotIn("telemetry_schema_version", seen["gateway_platform_event"])
        manager.add_hook("post_llm_call", lambda **kwargs: seen.__setitem__("given", kwargs))
        manager.invoke_hook("post_llm_call", telemetry_schema_version="custom")
        self.assertEqual(seen["given"]["telemetry_schema_version"], "custom")  # setdefault

    def test_each_callback_gets_its_own_shallow_copy(self):
        manager = PluginManager()
        shared_list = []
        received = []

        def mutating(**kwargs):
            kwargs["status"] = "mutated"
            kwargs["history"].append("seen")
            received.append(kwargs)

        def observing(**kwargs):
            received.append(kwargs)

        manager.add_hook("on_session_reset", mutating)
        manager.add_hook("on_session_reset", observing)
        manager.invoke_hook("on_session_reset", status="ok", history=shared_list)
        self.assertEqual(received[1]["status"], "ok")
        self.assertIs(received[1]["history"], shared_list)  # shallow: lists are shared
        self.assertEqual(shared_list, ["seen"])

    def test_bounded_hooks_run_on_a_worker_and_others_on_the_caller_thread(self):
        manager = PluginManager()
        threads = {}

        def record(hook):
            return lambda **_kwargs: threads.__setitem__(hook, threading.current_thread())

        for hook in ("post_api_request", "pre_tool_call", "on_session_start",
                     "on_session_finalize", "subagent_stop", "post_approval_response"):
            manager.add_hook(hook, record(hook))
            manager.invoke_hook(hook)
        caller = threading.current_thread()
        for hook in ("post_api_request", "pre_tool_call", "on_session_start"):
            self.assertIsNot(threads[hook], caller, hook)
            self.assertTrue(threads[hook].daemon)
            self.assertTrue(threads[hook].name.startswith("hermes-hook-"))
        for hook in ("on_session_finalize", "subagent_stop", "post_approval_response"):
            self.assertIs(threads[hook], caller, hook)

    def test_exceptions_are_swallowed_and_pre_tool_call_fails_closed(self):
        manager = PluginManager()

        def boom(**_kwargs):
            raise SystemExit(3)

        manager.add_hook("post_tool_call", boom)
        manager.add_hook("post_tool_call", lambda **_kwargs: "after")
        self.assertEqual(manager.invoke_hook("post_tool_call"), ["after"])
        manager.add_hook("pre_tool_call", boom)
        (directive,) = manager.invoke_hook("pre_tool_call")
        self.assertEqual(directive["action"], "block")
        self.assertEqual([f.hook_name for f in manager.failures],
                         ["post_tool_call", "pre_tool_call"])

    def test_a_slow_bounded_callback_is_abandoned_then_suppressed(self):
        manager = PluginManager(hook_callback_timeout=0.05)
        release = threading.Event()
        calls = []

        def slow(**_kwargs):
            calls.append(1)
            release.wait(2)

        manager.add_hook("post_llm_call", slow)
        started = time.monotonic()
        self.assertEqual(manager.invoke_hook("post_llm_call", turn_id="t1"), [])
        self.assertLess(time.monotonic() - started, 0.5)
        manager.invoke_hook("post_llm_call", turn_id="t2")  # suppressed for 60 s: not called
        release.set()
        self.assertEqual(len(calls), 1)
        self.assertEqual(manager.skipped, ["post_llm_call", "post_llm_call"])

    def test_narrow_signatures_get_only_the_names_they_declare(self):
        manager = PluginManager()
        got = []

        def narrow(tool_name, duration_ms=None):
            got.append((tool_name, duration_ms))

        manager.add_hook("post_tool_call", narrow)
        manager.invoke_hook("post_tool_call", tool_name="terminal", duration_ms=5, args={})
        self.assertEqual(got, [("terminal", 5)])
        self.assertEqual(manager.failures, [])


class PluginInsideHarnessTest(unittest.TestCase):
    def test_every_callback_returns_none_fast_on_the_thread_hermes_uses(self):
        manager = PluginManager()
        with RecordingSidecar() as sidecar:
            with support.patched_environ(support.fast_env(sidecar.url)):
                module = load_directory_plugin(support.PLUGIN_DIR, manager)
            bridge = list(module._LIVE_BRIDGES)[0]
            for key, (hook, payload) in sorted(support.appendix_a().items()):
                started = time.monotonic()
                self.assertEqual(manager.invoke_hook(hook, **payload), [], key)
                if hook != "on_session_finalize":  # that one flushes, by design
                    self.assertLess(time.monotonic() - started, 0.25, key)  # no network wait
            self.assertTrue(bridge.flush(2.0))
            registered = [key for key, (hook, _) in support.appendix_a().items()
                          if manager.has_hook(hook)]
            self.assertEqual(len(registered), len(support.appendix_a()) - 1)  # not post_llm_call
            self.assertEqual(len(sidecar.events()), len(registered))
            bridge.shutdown(0.5)
        self.assertEqual(manager.failures, [])
        self.assertEqual(manager.skipped, [])

    def test_on_session_finalize_is_delivered_before_the_hook_returns(self):
        manager = PluginManager()
        with RecordingSidecar() as sidecar:
            env = support.fast_env(sidecar.url, HERMES_SIDECAR_FLUSH_INTERVAL="30")
            with support.patched_environ(env):
                module = load_directory_plugin(support.PLUGIN_DIR, manager)
            bridge = list(module._LIVE_BRIDGES)[0]
            manager.invoke_hook("on_session_end", session_id="s", turn_id="t1", completed=True)
            manager.invoke_hook("on_session_finalize", session_id="s", platform="cli")
            events = sidecar.events()  # no waiting: the finalize hook flushed
            self.assertEqual([(e["event"], e["seq"]) for e in events],
                             [("on_session_end", 1), ("on_session_finalize", 2)])
            self.assertEqual(len(sidecar.heartbeats()), 1)  # a heartbeat rides on each flush
            bridge.shutdown(0.5)


if __name__ == "__main__":
    unittest.main()
