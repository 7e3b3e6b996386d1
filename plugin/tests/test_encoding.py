"""Encoding: the compact body's frame and schema, and the JSON line a buffered row stands for."""

import json
import unittest

from plugin.tests import support

from hermes_prometheus_bridge import encoding, rows  # noqa: E402  (support sets the path)
from hermes_prometheus_bridge.contract import HOOK_SPECS, USAGE_KEYS  # noqa: E402

INSTANCE = "0123456789abcdef0123456789abcdef"


def tool_row(tool_call_id, observed_at=1789862412.5):
    spec = HOOK_SPECS["post_tool_call"]
    values = (tool_call_id, "terminal", "t_1", "ok", None, 3412)
    return rows.row_builder(spec)(values, support.fields_module.MISSING, observed_at,
                                  lambda _field: None, rows.Admitted())


class CompactBodyTest(unittest.TestCase):
    def test_a_body_names_its_instance_first_seq_schema_heartbeat_and_rows(self):
        prefix = encoding.compact_prefix(INSTANCE, encoding.compact_schema_text())
        heartbeat = encoding.encode_json({"event": "plugin_heartbeat", "instance": INSTANCE,
                                          "data": {"acked_seq": 0}})
        body = encoding.compact_body(prefix, 41, [tool_row("toolu_1"), tool_row("toolu_2")],
                                     heartbeat)
        frame = json.loads(body.decode("ascii"))
        self.assertEqual((frame["v"], frame["instance"], frame["seq"]), (1, INSTANCE, 41))
        self.assertEqual(frame["heartbeat"], json.loads(heartbeat))
        code = rows.CODES[id(HOOK_SPECS["post_tool_call"])]
        self.assertEqual(frame["events"], [
            [code, 1789862412500000, "toolu_1", "terminal", "t_1", "ok", None, 3412],
            [code, 1789862412500000, "toolu_2", "terminal", "t_1", "ok", None, 3412]])
        schema = frame["schema"]
        self.assertEqual(schema["events"][code], ["post_tool_call", "tool_call_id", "tool_name",
                                                  "turn_id", "status", "error_type",
                                                  "duration_ms"])
        self.assertEqual(len(schema["events"]), len(rows.ROW_SPECS))
        api = rows.CODES[id(HOOK_SPECS["post_api_request"])]
        self.assertEqual(schema["events"][api][-3:], ["usage", "cost_usd", "cost_status"])
        self.assertEqual(schema["usage"], list(USAGE_KEYS))

    def test_without_a_heartbeat_the_member_is_left_out(self):
        prefix = encoding.compact_prefix(INSTANCE, encoding.compact_schema_text())
        frame = json.loads(encoding.compact_body(prefix, 1, [tool_row("toolu_1")]))
        self.assertNotIn("heartbeat", frame)

    def test_an_instance_that_is_no_identifier_is_refused(self):
        with self.assertRaises(ValueError):
            encoding.compact_prefix('x","v":2', "{}")


class RowLineTest(unittest.TestCase):
    def test_a_row_as_a_json_line_carries_its_data_with_absent_fields_left_out(self):
        template = encoding.line_template("post_tool_call", INSTANCE)
        line = template % (1789862412.5, 9, encoding.row_data_text(tool_row("toolu_1")))
        self.assertEqual(json.loads(line), {
            "event": "post_tool_call", "observed_at": 1789862412.5, "instance": INSTANCE,
            "seq": 9, "data": {"tool_call_id": "toolu_1", "tool_name": "terminal",
                               "turn_id": "t_1", "status": "ok", "duration_ms": 3412}})


if __name__ == "__main__":
    unittest.main()
