"""fields.py: each cleaner alone, and event_data, the sender thread's gate for every field.

A value outside its type or grammar costs only its field; a refused string is counted under its
wire name; content is never read (an error's text becomes a flag, an exit reason keeps only its
leading identifier).
"""

import unittest

from plugin.tests import support

fields = support.fields_module
MISSING = fields.MISSING

Color = support.Color
Level = support.Level


class Tokens(int):
    def __int__(self):
        raise AssertionError("an override must not run")


class CleanersTest(unittest.TestCase):
    def test_clean_scalar_table(self):
        missing = fields.MISSING
        table = [
            ("abc", "abc"), ("", ""), (None, None), (True, True), (0, 0), (-5, -5),
            (1.5, 1.5), (float("nan"), missing), (float("inf"), missing), (b"x", missing),
            (bytearray(b"x"), missing), ({"a": 1}, missing), ([1], missing), ((1,), missing),
            (object(), missing), (2 ** 63, 2 ** 63), (2 ** 63 + 1, missing),
            (Color.RED, "red"), (Level.HIGH, 3),
        ]
        for value, expected in table:
            with self.subTest(value=repr(value)[:40]):
                self.assertIs(type(fields.clean_scalar(value)), type(expected))
                if expected is not missing:
                    self.assertEqual(fields.clean_scalar(value), expected)

    def test_clean_scalar_cuts_long_strings(self):
        self.assertEqual(fields.clean_scalar("x" * 300), "x" * fields.MAX_STRING_CHARS)

    def test_clean_number_keeps_finite_numbers_only(self):
        self.assertEqual(fields.clean_number(7), 7)
        self.assertEqual(fields.clean_number(0.5), 0.5)
        self.assertEqual(fields.clean_number(Level.HIGH), 3)
        self.assertIs(type(fields.clean_number(Level.HIGH)), int)
        for value in (True, False, "7", None, float("nan"), [1]):
            with self.subTest(value=value):
                self.assertIs(fields.clean_number(value), MISSING)

    def test_error_flag_never_reads_the_text(self):
        for value, expected in ((None, False), (False, False), ("", False), ({}, False), ([], False),
                                ("boom", True), ({"type": "X"}, True), (True, True), (0, True)):
            with self.subTest(value=value):
                self.assertIs(fields.error_flag(value), expected)

    def test_error_class_takes_only_a_code_identifier(self):
        self.assertEqual(fields.error_class({"type": "RateLimitError", "message": "secret"}), "RateLimitError")
        self.assertEqual(fields.error_class("openai.APIError"), "openai.APIError")
        for value in ({"message": "secret"}, "not a class name", {"type": 3}, 3, "1Error"):
            with self.subTest(value=value):
                self.assertIs(fields.error_class(value), MISSING)

    def test_short_identifier(self):
        self.assertEqual(fields.short_identifier("user_exit"), "user_exit")
        for value in ("User_exit", "a" * 33, "with space", 5, "a" * 200):
            with self.subTest(value=value):
                self.assertIs(fields.short_identifier(value), MISSING)

    def test_exit_reason_keeps_the_leading_identifier_only(self):
        self.assertEqual(fields.exit_reason("max_iterations_reached(90/90)"), "max_iterations_reached")
        self.assertEqual(fields.exit_reason("local_processing_error(/home/user/secret.txt)"), "local_processing_error")
        self.assertEqual(fields.exit_reason("text_response"), "text_response")
        for value in ("Text", "(x)", "", "text response", None, 3):
            with self.subTest(value=value):
                self.assertIs(fields.exit_reason(value), MISSING)


class UsageTest(unittest.TestCase):
    CANONICAL = {"input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 2,
                 "cache_write_tokens": 1, "reasoning_tokens": 0, "prompt_tokens": 13}

    def test_canonical_usage_passes_whole(self):
        self.assertEqual(fields.clean_usage(dict(self.CANONICAL, model="m")), self.CANONICAL)

    def test_key_by_key_keeps_finite_numeric_token_keys(self):
        usage = {"input_tokens": 10, "output_tokens": float("inf"), "completion_tokens": 4,
                 "reasoning_tokens": "5", "prompt_tokens": 2 ** 64, "cache_read_tokens": Tokens(3),
                 "note": 1}
        self.assertEqual(fields.clean_usage(usage), {"input_tokens": 10, "completion_tokens": 4, "cache_read_tokens": 3})

    def test_reported_flags_keep_booleans_of_known_keys(self):
        usage = dict(self.CANONICAL, reported_usage_fields={
            "input_tokens": True, "output_tokens": False, "reasoning_tokens": 1, "unknown": False})
        self.assertEqual(fields.clean_usage(usage)["reported_usage_fields"],
                         {"input_tokens": True, "output_tokens": False})
        no_flags = dict(self.CANONICAL, reported_usage_fields={"reasoning_tokens": "yes"})
        self.assertNotIn("reported_usage_fields", fields.clean_usage(no_flags))

    def test_none_stays_none_and_a_non_mapping_is_dropped(self):
        self.assertIsNone(fields.clean_usage(None))
        self.assertIs(fields.clean_usage([1, 2]), MISSING)


class EventDataTest(unittest.TestCase):
    def setUp(self):
        self.refused = []

    def gated(self, hook, **kwargs):
        spec = fields.HOOK_SPECS[hook]
        values = tuple(kwargs.get(name, MISSING) for name in spec.sources)
        return fields.event_data(spec.plain, fields.compiled_transforms(spec), values,
                                 grammars=fields.compiled_grammars(spec), refused=self.refused.append)

    def test_strings_cross_only_within_their_grammar(self):
        data = self.gated("post_tool_call", tool_call_id="call_1", tool_name="mcp/server:tool",
                          turn_id="bad id with spaces", status="ok", error_type="x" * 65, duration_ms=12.5)
        self.assertEqual(data, {"tool_call_id": "call_1", "tool_name": "mcp/server:tool", "status": "ok",
                                "duration_ms": 12.5})
        self.assertEqual(self.refused, ["turn_id", "error_type"])

    def test_empty_strings_and_none_are_absent_not_refused(self):
        data = self.gated("post_tool_call", tool_call_id="", tool_name=None, status="ok")
        self.assertEqual(data, {"status": "ok"})
        self.assertEqual(self.refused, [])

    def test_a_string_where_a_number_belongs_is_refused(self):
        self.assertEqual(self.gated("post_tool_call", duration_ms="12"), {})
        self.assertEqual(self.refused, ["duration_ms"])

    def test_out_of_range_numbers_and_odd_objects_are_dropped_silently(self):
        data = self.gated("post_tool_call", duration_ms=float("nan"), tool_name=Color.RED,
                          tool_call_id=object())
        self.assertEqual(data, {"tool_name": "red"})
        self.assertEqual(self.refused, [])

    def test_a_refused_transform_is_counted_under_its_wire_name(self):
        spec = fields.HOOK_SPECS["on_session_end"]
        wire = dict(zip(spec.sources, spec.wire))
        self.assertIn("turn_exit_reason", wire)
        data = self.gated("on_session_end", turn_exit_reason="Free text, no identifier")
        self.assertNotIn("turn_exit_reason", data)
        self.assertEqual(self.refused, [wire["turn_exit_reason"]])
        self.refused.clear()
        data = self.gated("on_session_end", turn_exit_reason="interrupted(by user)")
        self.assertEqual(data["turn_exit_reason"], "interrupted")
        self.assertEqual(self.refused, [])

    def test_clean_data_cuts_strings_without_grammars(self):
        self.assertEqual(fields.clean_data({"a": "x" * 300, "b": None, "c": float("inf"), "d": 1}),
                         {"a": "x" * fields.MAX_STRING_CHARS, "d": 1})


if __name__ == "__main__":
    unittest.main()
