"""contract.py: the field table read from contract.json, the plugin's allow-lists and its manifest."""

import json
import os
import unittest

from plugin.tests import support

contract_module = __import__("hermes_prometheus_bridge.contract", fromlist=["CONTRACT"])


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
        from plugin.tests.test_init import manifest_hooks
        self.assertEqual(manifest_hooks(), list(contract_module.CONTRACT["hooks"]))


if __name__ == "__main__":
    unittest.main()
