"""The plugin's objects get what they need through their constructors: no object sets another's
private field, no constructor is re-run on a live object, and a forked child resets each part
through its own method while the registered callbacks keep working."""

import ast
import os
import unittest

from plugin.tests import support


def _sources():
    for name in sorted(os.listdir(support.PLUGIN_DIR)):
        if name.endswith(".py"):
            path = os.path.join(support.PLUGIN_DIR, name)
            with open(path) as handle:
                yield name, ast.parse(handle.read(), path)


class WiringTest(unittest.TestCase):
    def test_no_module_assigns_a_private_field_of_another_object(self):
        found = []
        for name, tree in _sources():
            for node in ast.walk(tree):
                targets = node.targets if isinstance(node, ast.Assign) else []
                for target in targets:
                    if (isinstance(target, ast.Attribute) and target.attr.startswith("_")
                            and not target.attr.startswith("__")
                            and not (isinstance(target.value, ast.Name) and target.value.id == "self")):
                        found.append("%s:%d %s" % (name, node.lineno, ast.unparse(target)))
        self.assertEqual(found, [])

    def test_no_module_re_runs_a_constructor(self):
        found = []
        for name, tree in _sources():
            for node in ast.walk(tree):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "__init__"
                        and not (isinstance(node.func.value, ast.Call)
                                 and getattr(node.func.value.func, "id", None) == "super")):
                    found.append("%s:%d %s" % (name, node.lineno, ast.unparse(node)))
        self.assertEqual(found, [])

    def test_a_fork_resets_the_parts_in_place_and_the_callbacks_keep_queueing(self):
        bridge = support.bridge_module.Bridge(support.fast_config(support.unused_port_url()[1]))
        callback = bridge.hook_callback("pre_tool_call")
        callback(tool_name="terminal", tool_call_id="c1")
        bridge.count_drop("pre_tool_call", "queue_full")
        counters, queue, instance = bridge.counters, bridge.queue, bridge.instance
        bridge.after_fork_in_child()
        self.assertIs(bridge.counters, counters)
        self.assertIs(bridge.queue, queue)
        self.assertNotEqual(bridge.instance, instance)
        self.assertEqual(bridge.dropped(), {})
        self.assertEqual(len(bridge.queue), 0)
        callback(tool_name="terminal", tool_call_id="c2")
        self.assertEqual(len(bridge.queue), 1)
        self.assertEqual(bridge.stats()["instance"], bridge.instance)


if __name__ == "__main__":
    unittest.main()
