"""The boundary grammar: arbitrary strings in every string field of every hook never leave the
plugin unless they match their field's grammar, each refusal is counted by field, and Hermes'
turn_exit_reason crosses as its leading identifier only.

A seeded generator (standard library only) draws paths, sentences, 10 KB values, control
characters, non-BMP text, quotes and near-misses of the grammars, next to valid ids and
identifiers so the test is not vacuous: valid values must arrive unchanged.
"""

import random
import re
import os
import unittest

from plugin.tests import support
from plugin.tests.hermes_dispatch import ObserverHook
from plugin.tests.support import RecordingSidecar

contract = __import__("hermes_prometheus_bridge.contract", fromlist=["CONTRACT"])
fields = support.fields_module

SEED = 20260914
ROUNDS = 40

VALID = {
    "id": ["20260920_141203_9f3c2a", "t_7c1e5b20:api:2", "toolu_01HkQ9", "agent:main:telegram:dm:42",
           "call_abc|fc_1", "x" * 128],
    "identifier": ["openrouter", "cli", "tool_calls", "rate_limit", "custom:my-endpoint", "a" * 64],
    "name": ["anthropic/claude-sonnet-4.6", "mcp__github__create_issue", "qwen3:14b", "m" * 128],
}

HOSTILE = [
    "/home/alice/secret/notes.txt", "C:\\Users\\alice\\notes.txt", "please read my diary",
    "FileNotFoundError: /home/alice/notes.txt", "rm -rf /", "a b", " leading", "trailing ",
    "tab\there", "line\nbreak", "nul\x00byte", "bell\x07", "del\x7f", "\u00e9t\u00e9", "\U0001F600",
    "\ud800lone", "quote\"d", "it's", "back`tick", "<script>", "x" * 129, "y" * 10240,
    "key=" + "z" * 200, "\u200bzero-width", "https://user:pw@example.invalid/v1",
]


def random_string(rng):
    """A string drawn from everything a careless Hermes could pass."""
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice(HOSTILE)
    if kind == 1:  # printable ASCII with spaces and punctuation
        return "".join(rng.choice(" !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~abcXYZ019")
                       for _ in range(rng.randrange(1, 300)))
    if kind == 2:  # any code point, control and non-BMP ones included
        return "".join(chr(rng.choice((rng.randrange(0, 0x20), rng.randrange(0x20, 0xD800),
                                       rng.randrange(0xE000, 0x110000))))
                       for _ in range(rng.randrange(1, 40)))
    if kind == 3:  # a valid value with one bad character spliced in
        base = rng.choice(rng.choice(list(VALID.values())))[:100]
        at = rng.randrange(len(base) + 1)
        return base[:at] + rng.choice(" /\n\x00\u00e9\U0001F600\"'") + base[at:]
    if kind == 4:  # a long run
        return rng.choice("ab/ ") * rng.randrange(100, 12000)
    return rng.choice(rng.choice(list(VALID.values())))


def string_fields(spec_table):
    """``[(hook, source kwarg, wire name, grammar or transform), ...]`` for every string field."""
    rows = []
    for hook, entry in spec_table.items():
        for wire, field in entry["fields"].items():
            if field["type"] == "string":
                rows.append((hook, field.get("from", wire), wire,
                             field.get("grammar") or field.get("transform")))
    return rows


def allowed(kind, value):
    """Whether ``value`` may cross as the value of a field checked by ``kind``."""
    if kind in contract.GRAMMARS:
        return type(value) is str and len(value) <= 128 and contract.GRAMMARS[kind].fullmatch(value)
    if kind == "exit_reason":
        return type(value) is str and re.fullmatch(r"[a-z][a-z0-9_]{0,63}", value)
    return type(value) is str and contract.PATTERNS[kind].fullmatch(value)


class BoundaryGrammarTest(unittest.TestCase):
    def send_all(self, table, calls):
        """Run ``calls`` (hook, kwargs) through one real bridge; return events and heartbeat."""
        with RecordingSidecar() as sidecar:
            bridge = support.bridge_module.Bridge(support.fast_config(sidecar.url))
            callbacks = {}
            for hook in table:
                if table is contract.CONTRACT["hooks"]:
                    callbacks[hook] = bridge.hook_callback(hook)
                else:
                    body = bridge.observer_callback(hook)
                    callbacks[hook] = (lambda body, hook: lambda **kwargs: body(
                        ObserverHook(hook, kwargs)))(body, hook)
            bridge.start()
            for hook, kwargs in calls:
                self.assertIsNone(callbacks[hook](**kwargs))
            self.assertTrue(bridge.flush(5.0))
            bridge.shutdown(1.0)
            return sidecar.events(), sidecar.heartbeats()[-1]["data"], sidecar.raw_bytes()

    def check_table(self, table):
        rng = random.Random(SEED)
        rows = string_fields(table)
        calls, planted = [], []
        for _ in range(ROUNDS):
            for hook, source, wire, kind in rows:
                value = random_string(rng)
                calls.append((hook, {source: value}))
                planted.append((wire, kind, value))
        events, heartbeat, raw = self.send_all(table, calls)
        self.assertEqual(len(events), len(calls))
        refused, crossed = {}, 0
        for event, (wire, kind, value) in zip(events, planted):
            data = event["data"]
            for name, sent in data.items():
                # Nothing outside its grammar ever crosses, in any field.
                self.assertTrue(allowed(kind, sent), (event["event"], name, sent[:60]))
            if wire in data:
                crossed += 1
                if kind in contract.GRAMMARS:
                    self.assertEqual(data[wire], value)  # a valid value crosses unchanged
            elif value:
                refused[wire] = refused.get(wire, 0) + 1
        # Not vacuous: valid values crossed, hostile ones were refused, and each refusal counted.
        self.assertGreater(crossed, len(rows))
        self.assertGreater(sum(refused.values()), len(rows))
        self.assertEqual(heartbeat.get("refused_fields", {}), refused)
        for hostile in (b"/home/alice", b"please read", b"FileNotFoundError"):
            self.assertNotIn(hostile, raw)
        # Every grammar is ASCII: no escaped non-ASCII character (control, accent, emoji) crossed.
        self.assertNotIn(b"\\u", raw)

    def test_arbitrary_strings_in_every_flat_hook_field_never_cross_outside_their_grammar(self):
        self.check_table(contract.CONTRACT["hooks"])

    def test_arbitrary_strings_in_every_envelope_field_never_cross_outside_their_grammar(self):
        self.check_table(contract.CONTRACT["observer"])

    def test_a_string_in_a_field_of_another_type_is_refused(self):
        events, heartbeat, _raw = self.send_all(contract.CONTRACT["hooks"], [
            ("post_tool_call", {"duration_ms": "3412 ms /home/alice", "tool_name": "terminal"}),
            ("on_session_end", {"completed": "yes, see /home/alice", "turn_id": "t_1"}),
        ])
        self.assertEqual([event["data"] for event in events],
                         [{"tool_name": "terminal"}, {"turn_id": "t_1"}])
        self.assertEqual(heartbeat["refused_fields"], {"duration_ms": 1, "completed": 1})

    def test_turn_exit_reason_crosses_as_its_leading_identifier_only(self):
        table = [
            ("text_response(finish_reason=stop)", "text_response"),
            ("max_iterations_reached(90/90)", "max_iterations_reached"),
            ("local_processing_error(FileNotFoundError: /home/alice/notes.txt)",
             "local_processing_error"),
            ("pending_tool_result", "pending_tool_result"),
            ("session_persistence_failed", "session_persistence_failed"),
            ("The file /home/alice/notes.txt was not found", fields.MISSING),
            ("Local_processing_error(x)", fields.MISSING),
            ("local processing error", fields.MISSING),
            ("x" * 65 + "(y)", fields.MISSING),
            ("", fields.MISSING),
            (None, fields.MISSING),
        ]
        for value, expected in table:
            with self.subTest(value=value):
                self.assertEqual(fields.exit_reason(value), expected)
        events, heartbeat, raw = self.send_all(contract.CONTRACT["hooks"], [
            ("on_session_end", {"turn_exit_reason": table[2][0], "failed": True}),
            ("on_session_end", {"turn_exit_reason": table[5][0]}),
        ])
        self.assertEqual([event["data"] for event in events], [
            {"failed": True, "turn_exit_reason": "local_processing_error"}, {}])
        self.assertEqual(heartbeat["refused_fields"], {"turn_exit_reason": 1})
        self.assertNotIn(b"/home/alice", raw)
        self.assertNotIn(b"FileNotFoundError", raw)


if __name__ == "__main__":
    unittest.main()


class HostFieldsTest(unittest.TestCase):
    """The heartbeat's host fields cross under the same rule as event fields."""

    def host(self, version, profile):
        counters = support.bridge_module.drops.Counters()
        ctx = type("Ctx", (), {})()
        if profile is not None:
            ctx.profile_name = profile
        fields_sent = __import__("hermes_prometheus_bridge.host", fromlist=["host_fields"]).host_fields(
            ctx, counters, version)
        return fields_sent, counters.refused()

    def test_a_version_and_a_profile_id_cross(self):
        self.assertEqual(self.host("0.21.3", "work"), ({"hermes_version": "0.21.3", "profile": "work"}, {}))
        self.assertEqual(self.host("0.21.5rc1+local", "default"),
                         ({"hermes_version": "0.21.5rc1+local", "profile": "default"}, {}))

    def test_anything_else_stays_inside_and_is_counted(self):
        self.assertEqual(self.host("/opt/hermes/VERSION", "my work profile"),
                         ({}, {"hermes_version": 1, "profile": 1}))
        self.assertEqual(self.host("0.21", "p" * 65), ({"hermes_version": "0.21"}, {"profile": 1}))

    def test_a_host_without_them_sends_neither_and_counts_nothing(self):
        self.assertEqual(self.host(None, None), ({}, {}))

    def test_the_version_is_read_as_hermes_reads_its_own(self):
        host = __import__("hermes_prometheus_bridge.host", fromlist=["hermes_version"])
        package = type("Module", (), {"__version__": "0.21.3"})
        self.assertEqual(host.hermes_version({"hermes_cli": package}, lambda name: None), "0.21.3")
        self.assertEqual(host.hermes_version({"hermes_cli": package}, lambda name: "0.21.5"), "0.21.5")
        self.assertIsNone(host.hermes_version({}, lambda name: None))

    def test_a_version_computed_at_import_from_an_install_stamp_is_read(self):
        # Newer Hermes source computes hermes_cli.__version__ when the package is imported (from its
        # install stamp) instead of writing a literal: the bridge reads the attribute of the loaded
        # module at register time, so the computed value is what it sends.
        import importlib.util
        import tempfile
        host = __import__("hermes_prometheus_bridge.host", fromlist=["hermes_version"])
        with tempfile.TemporaryDirectory() as root:
            package_dir = os.path.join(root, "hermes_cli_stamped")
            os.mkdir(package_dir)
            with open(os.path.join(package_dir, "install-stamp.json"), "w") as stamp:
                stamp.write('{"version": "0.22.1"}')
            with open(os.path.join(package_dir, "__init__.py"), "w") as init:
                init.write("import json, os\n"
                           "def _stamped():\n"
                           "    with open(os.path.join(os.path.dirname(__file__), 'install-stamp.json')) as f:\n"
                           "        return json.load(f)['version']\n"
                           "__version__ = _stamped()\n")
            spec = importlib.util.spec_from_file_location("hermes_cli_stamped", os.path.join(package_dir, "__init__.py"))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        self.assertEqual(host.hermes_version({"hermes_cli": module}, lambda name: None), "0.22.1")
