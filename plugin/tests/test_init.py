"""The package (__init__.py): register(ctx), what is registered, the manifest, the disable switch (the settings it
reads: test_config.py), unload and reload, several profiles in one process, renewal after fork."""

import inspect
import json
import os
import time
import unittest

from plugin.tests import support
from plugin.tests.hermes_dispatch import PluginContext, PluginManager, load_directory_plugin
from plugin.tests.support import RecordingSidecar, sender_threads

FLAT_HOOKS = [
    "on_session_start", "on_session_end", "on_session_finalize", "on_session_reset",
    "pre_llm_call", "pre_api_request", "post_api_request", "api_request_error",
    "pre_auxiliary_call", "post_auxiliary_call", "pre_tool_call", "post_tool_call",
    "pre_approval_request", "post_approval_response", "agent_loop_stopped", "subagent_start",
    "subagent_stop",
]
ENVELOPE_EVENTS = [
    "agent_end", "pre_api_request", "post_api_request", "api_request_error",
    "pre_tool_call", "post_tool_call", "memory_write", "turn_end", "session_event",
]


def manifest_hooks(key="provides_hooks"):
    """A top-level list of plugin.yaml (flat, read without a YAML library); Hermes reads the
    hooks a plugin provides from ``provides_hooks`` (hermes_cli/plugins_manifest.py)."""
    hooks, inside = [], False
    with open(os.path.join(support.PLUGIN_DIR, "plugin.yaml"), encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                inside = True
            elif inside and line.startswith("  - "):
                hooks.append(line[4:].strip())
            elif inside and line.strip() and not line.startswith(" "):
                inside = False
    return hooks


def contract_versions():
    """The Hermes releases contract.json says the plugin was checked against."""
    contract = __import__("hermes_prometheus_bridge.contract", fromlist=["CONTRACT"]).CONTRACT
    return list(contract["hermes_versions"])


def manifest_scalar(name):
    with open(os.path.join(support.PLUGIN_DIR, "plugin.yaml"), encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(name + ":"):
                return line.split(":", 1)[1].strip()
    return None


class RegisterTest(unittest.TestCase):
    def load(self, env, observer_hooks=False):
        manager = PluginManager()
        with support.patched_environ(env):
            module = load_directory_plugin(support.PLUGIN_DIR, manager, observer_hooks)
        for bridge in list(module._LIVE_BRIDGES):
            self.addCleanup(bridge.shutdown, 0.2)
        return manager, module

    def test_registers_every_flat_hook_with_a_kwargs_callback(self):
        manager, _module = self.load(support.fast_env(support.unused_port_url()[1]))
        self.assertEqual(manager.hook_names(), sorted(FLAT_HOOKS))
        self.assertEqual(manager.observer_event_names(), [])
        for hook in FLAT_HOOKS:
            (callback,) = manager._hooks[hook]
            kinds = [p.kind for p in inspect.signature(callback).parameters.values()]
            self.assertEqual(kinds, [inspect.Parameter.VAR_KEYWORD], hook)

    def test_registers_envelope_events_when_the_host_offers_observer_hooks(self):
        manager, _module = self.load(support.fast_env(support.unused_port_url()[1]),
                                     observer_hooks=True)
        self.assertEqual(manager.hook_names(), sorted(FLAT_HOOKS))
        self.assertEqual(manager.observer_event_names(), sorted(ENVELOPE_EVENTS))

    def test_manifest_matches_the_registered_hooks(self):
        self.assertEqual(manifest_hooks(), FLAT_HOOKS)
        self.assertEqual(manifest_hooks("hooks"), [])  # not a key Hermes reads
        self.assertEqual(manifest_scalar("name"), "hermes_prometheus_bridge")
        self.assertEqual(manifest_scalar("version"), support.bridge_module.PLUGIN_VERSION)
        self.assertEqual(support.bridge_module.PLUGIN_VERSION, "0.1.0")

    def test_manifest_is_version_2_with_the_oldest_hermes_checked(self):
        # hermes_cli/plugins_manifest.py (00067189): SUPPORTED_MANIFEST_VERSION = 2; an absent
        # manifest_version is read as 1; requires_hermes gates the load on the running version.
        self.assertEqual(manifest_scalar("manifest_version"), "2")
        self.assertEqual(manifest_scalar("requires_hermes"), '">=0.19"')
        self.assertEqual(manifest_scalar("python_dependencies"), "[]")
        self.assertEqual(manifest_scalar("capabilities"), "[]")
        tags = manifest_scalar("tags")
        checked = contract_versions()
        self.assertEqual([tag for tag in tags.strip("[]").split(", ") if tag.startswith("tested-hermes-")],
                         ["tested-hermes-" + version for version in checked])
        # api_version absent: the current plugin API generation (parse_manifest_file reads None).
        self.assertIsNone(manifest_scalar("api_version"))

    def test_disabled_registers_nothing_and_starts_no_thread(self):
        before = len(sender_threads())
        for value in ("1", "true", "YES"):
            manager, module = self.load({"HERMES_SIDECAR_DISABLED": value})
            self.assertEqual(manager.hook_names(), [])
            self.assertEqual(list(module._LIVE_BRIDGES), [])
        self.assertEqual(len(sender_threads()), before)

    def test_an_unusable_url_disables_the_plugin_without_raising(self):
        manager, module = self.load({"HERMES_SIDECAR_URL": "ftp://127.0.0.1/v1/events"})
        self.assertEqual(manager.hook_names(), [])
        self.assertEqual(list(module._LIVE_BRIDGES), [])

    def test_one_rejected_hook_name_does_not_cost_the_others(self):
        manager = PluginManager()

        class PickyContext(PluginContext):
            def register_hook(self, hook_name, callback):
                if hook_name == "pre_auxiliary_call":
                    raise ValueError("unknown hook")
                super().register_hook(hook_name, callback)

        bridge = support.bridge_module.Bridge(
            support.fast_config(support.unused_port_url()[1]))
        registered = support.hermes_prometheus_bridge.attach(
            PickyContext(manager, "hermes_prometheus_bridge"), bridge)
        self.assertEqual(sorted(registered), sorted(set(FLAT_HOOKS) - {"pre_auxiliary_call"}))


class ReloadTest(unittest.TestCase):
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


if __name__ == "__main__":
    unittest.main()
