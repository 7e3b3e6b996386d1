"""Rows: the generated builders keep exactly what ``event_data`` keeps and refuse exactly what it
refuses, for every field of every contract hook and envelope event, whatever the value."""

import itertools
import math
import unittest

from plugin.tests import support
from plugin.tests.support import NotSerializable

from hermes_prometheus_bridge import encoding, rows  # noqa: E402  (support puts plugin/ on the path)
from hermes_prometheus_bridge.contract import HOOK_SPECS, USAGE_KEYS  # noqa: E402

fields = support.fields_module
MISSING = fields.MISSING

Color = support.Color
Level = support.Level


class Counting(object):
    def __init__(self):
        self.counts = {}

    def __call__(self, field):
        self.counts[field] = self.counts.get(field, 0) + 1


# Every kind of value a Hermes keyword argument can be, valid or not for some field.
ODD_VALUES = (
    MISSING, None, "", "cli", "anthropic/claude-sonnet-4.6", "t_7c1e5b20:api:2", "RateLimitError",
    "max_iterations_reached(90/90)", "hello world", "../etc/passwd", "line\nbreak", "x" * 129,
    "a" * 64, "a" * 65, "é", Color.RED, True, False, 0, 7, -3, 2 ** 63, 2 ** 63 + 1, Level.HIGH,
    1.5, -0.0, math.nan, math.inf, -math.inf, b"bytes", ["list"], {"type": "TimeoutError"},
    {"type": "not an identifier"}, NotSerializable("secret"), object(),
    {"input_tokens": 5, "output_tokens": 7, "cache_read_tokens": 0, "cache_write_tokens": 0,
     "reasoning_tokens": 0, "prompt_tokens": 5},
    {"input_tokens": 5.5, "completion_tokens": 3, "output_tokens": math.inf, "bogus": 1},
    {"input_tokens": 5, "output_tokens": 7, "cache_read_tokens": 0, "cache_write_tokens": 0,
     "reasoning_tokens": 0, "prompt_tokens": 5,
     "reported_usage_fields": {"input_tokens": True, "output_tokens": False, "prompt_tokens": 1}},
)


def expected(spec, values, usage):
    """``event_data``'s rule, then the row's for numbers in seconds: the nearest integer
    microsecond, and a magnitude of 1e15 seconds or more refused."""
    refused = Counting()
    data = fields.event_data(spec.plain, fields.compiled_transforms(spec), values, usage,
                             fields.compiled_grammars(spec), refused)
    for name in rows.MICROS_NAMES[rows.CODES[id(spec)]] & data.keys():
        seconds = data[name]
        if type(seconds) not in (int, float):
            continue
        if abs(seconds) < 1e15:
            data[name] = (seconds * 1000000 if type(seconds) is int else round(seconds * 1e6)) / 1e6
        else:
            del data[name]
            refused(name)
    return data, refused.counts


BUILDERS = {id(spec): rows.row_builder(spec) for spec in rows.ROW_SPECS}


def columns_built(spec, values):
    """A row of one event through the column builder, or the per-event builder when a column
    needs the per-event rule (a refused value), as the sender does."""
    refused = Counting()
    built_rows = rows.ColumnBuilder(spec).build([1789862412.25], [values], [MISSING], rows.Admitted())
    row = built_rows[0] if built_rows is not None else BUILDERS[id(spec)](
        values, MISSING, 1789862412.25, refused, rows.Admitted())
    return row, rows.row_data(row), refused.counts


def built(spec, values, usage, admitted):
    refused = Counting()
    row = BUILDERS[id(spec)](values, usage, 1789862412.25, refused, admitted)
    return row, rows.row_data(row), refused.counts


class RowBuilderTest(unittest.TestCase):
    def test_every_field_of_every_spec_keeps_and_refuses_what_event_data_does(self):
        for spec in rows.ROW_SPECS:
            # A fresh cache and a warm one (every string seen once before) must agree.
            for warm in (False, True):
                admitted = rows.Admitted()
                for position, value in itertools.product(range(len(spec.sources)), ODD_VALUES):
                    values = [MISSING] * len(spec.sources)
                    values[position] = value
                    values = tuple(values)
                    usage = value if position == spec.usage_at else MISSING
                    if warm:
                        built(spec, values, usage, admitted)
                    with self.subTest(hook=spec.hook, field=spec.sources[position], value=value,
                                      warm=warm):
                        row, data, refused = built(spec, values, usage, admitted)
                        want_data, want_refused = expected(spec, values, usage)
                        self.assertEqual(data, want_data)
                        self.assertEqual(refused, want_refused)
                        self.assertEqual(row[0], rows.CODES[id(spec)])
                        self.assertEqual(row[1], 1789862412250000)

    def test_numbers_in_seconds_travel_as_the_nearest_integer_microsecond(self):
        spec = HOOK_SPECS["post_api_request"]
        at = {name: spec.sources.index(name) for name in ("api_duration", "started_at", "first_chunk_at")}
        values = [MISSING] * len(spec.sources)
        values[at["api_duration"]] = 6.842123985290527
        values[at["started_at"]] = 1789862412.4813428
        values[at["first_chunk_at"]] = 1e15
        for build in (lambda: built(spec, tuple(values), MISSING, rows.Admitted()),
                      lambda: columns_built(spec, tuple(values))):
            row, data, refused = build()
            self.assertEqual([row[2 + at[name]] for name in at], [6842124, 1789862412481343, None])
            self.assertEqual((data["api_duration"], data["started_at"]), (6.842124, 1789862412.481343))
            self.assertEqual(refused, {"first_chunk_at": 1})
        values[at["first_chunk_at"]] = 1789862413
        self.assertIsNotNone(rows.ColumnBuilder(spec).build([0.0], [tuple(values)], [MISSING], rows.Admitted()))
        for row, data, _refused in (built(spec, tuple(values), MISSING, rows.Admitted()),
                                    columns_built(spec, tuple(values))):
            self.assertEqual([row[2 + at[name]] for name in at], [6842124, 1789862412481343, 1789862413000000])
            self.assertEqual(data["first_chunk_at"], 1789862413.0)
        self.assertIn('"micros":["api_duration","first_chunk_at","started_at"]', encoding.compact_schema_text())

    def test_a_string_is_remembered_only_after_its_grammar_matched_it_in_its_own_grammar(self):
        admitted = rows.Admitted()
        build = rows.row_builder(HOOK_SPECS["post_tool_call"])
        values = ("toolu_1", "hello world", "t_1", "ok", None, 5)
        row, _data, _refused = built(HOOK_SPECS["post_tool_call"], values, MISSING, admitted)
        self.assertEqual(row[2:], ("toolu_1", None, "t_1", "ok", None, 5))
        self.assertEqual(admitted.sets["id"], {"toolu_1", "t_1"})
        self.assertEqual(admitted.sets["name"], set())
        self.assertEqual(admitted.sets["identifier"], {"ok"})
        # "toolu_1" matched as an id; as a tool name it is checked against the name grammar.
        refused = Counting()
        row = build(("x", "toolu_1", "t_1", "ok", None, 5), MISSING, 0.0, refused, admitted)
        self.assertEqual(row[3], "toolu_1")
        self.assertEqual(admitted.sets["name"], {"toolu_1"})

    def test_the_cache_is_bounded_and_counts_each_time_it_starts_over(self):
        admitted = rows.Admitted(limit=3)
        build = rows.row_builder(HOOK_SPECS["on_session_start"])
        for index in range(10):
            row = build(("s_%d" % index, "cli"), MISSING, 0.0, Counting(), admitted)
            self.assertEqual(row[2], "s_%d" % index)
            self.assertLessEqual(len(admitted.sets["id"]), 3)
        self.assertEqual(admitted.resets, 3)

    def test_a_column_of_new_strings_is_remembered_within_the_bound(self):
        admitted = rows.Admitted(limit=3)
        spec = HOOK_SPECS["on_session_start"]
        builder = rows.ColumnBuilder(spec)
        sessions = [("s_%d" % index, "cli") for index in range(2)]
        builder.build([0.0] * 2, sessions, [MISSING] * 2, admitted)
        self.assertEqual(admitted.sets["id"], {"s_0", "s_1"})
        # Two more new ids would make four: the set starts over with them.
        builder.build([0.0] * 2, [("s_2", "cli"), ("s_3", "cli")], [MISSING] * 2, admitted)
        self.assertEqual((admitted.sets["id"], admitted.resets), ({"s_2", "s_3"}, 1))
        # More new ids than the set holds (unique call ids): none is kept.
        many = [("s_%d" % index, "cli") for index in range(10, 15)]
        self.assertEqual(builder.build([0.0] * 5, many, [MISSING] * 5, admitted)[4][2], "s_14")
        self.assertEqual((admitted.sets["id"], admitted.resets), (set(), 2))


class ColumnBuilderTest(unittest.TestCase):
    def batch(self, spec, generator, odd_share):
        """Events of ``spec``: realistic values, some replaced by odd ones."""
        realistic = {"id": "t_%d", "identifier": "ok_%d", "name": "anthropic/model-%d"}
        events = []
        for number in range(generator.randint(1, 6)):
            values = []
            for index, source in enumerate(spec.sources):
                if generator.random() < odd_share:
                    values.append(generator.choice(ODD_VALUES))
                elif index < len(spec.plain) and spec.grammars[index] is not None:
                    # Absent now and then among present strings (an ok tool call's error_type).
                    values.append(None if generator.random() < 0.1 else
                                  realistic[spec.grammars[index]] % generator.randint(0, 3))
                elif index == spec.usage_at:
                    values.append(ODD_VALUES[-3])
                else:
                    values.append(generator.choice((MISSING, None, 2.5, 7, 1789862412.4813428)))
            usage = values[spec.usage_at] if spec.usage_at >= 0 else MISSING
            events.append((1789862412.0 + number, tuple(values), usage))
        return events

    def test_rows_of_a_batch_are_the_per_event_rows_or_the_batch_takes_the_per_event_rule(self):
        import random
        generator = random.Random(32)
        taken_columns = 0
        for _ in range(300):
            for spec in rows.ROW_SPECS:
                events = self.batch(spec, generator, generator.choice((0.0, 0.05, 0.3)))
                stamps, values, usages = (list(column) for column in zip(*events))
                admitted = rows.Admitted()
                columns = rows.ColumnBuilder(spec).build(stamps, values, usages, admitted)
                refused = Counting()
                one_by_one = [BUILDERS[id(spec)](value, usage, stamp, refused, rows.Admitted())
                              for stamp, value, usage in events]
                if columns is None:
                    continue
                taken_columns += 1
                self.assertEqual(columns, one_by_one)
                self.assertEqual(refused.counts, {})  # nothing the per-event rule would refuse
                for grammar, admitted_set in admitted.sets.items():
                    match = fields.GRAMMARS[grammar].fullmatch
                    self.assertTrue(all(match(value) for value in admitted_set))
        self.assertGreater(taken_columns, 1000)

    def test_a_hook_with_other_transforms_always_takes_the_per_event_rule(self):
        spec = HOOK_SPECS["on_session_end"]
        self.assertIsNone(rows.ColumnBuilder(spec).build(
            [0.0], [("s_1",) + (MISSING,) * (len(spec.sources) - 1)], [MISSING], rows.Admitted()))


class CompactUsageTest(unittest.TestCase):
    def test_the_list_stands_for_exactly_the_cleaned_usage(self):
        for value in ODD_VALUES:
            with self.subTest(value=value):
                cleaned = fields.clean_usage(value) if value is not MISSING else MISSING
                counts = rows.compact_usage(value)
                if cleaned is MISSING or cleaned is None:
                    self.assertIsNone(counts)
                else:
                    self.assertEqual(rows.usage_mapping(counts), cleaned)
                    self.assertLessEqual(len(counts), len(USAGE_KEYS) + 1)

    def test_hermes_canonical_summary_takes_the_short_form(self):
        usage = {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 3,
                 "cache_write_tokens": 4, "reasoning_tokens": 5, "prompt_tokens": 8,
                 "total_tokens": 10, "request_count": 1}
        self.assertEqual(rows.compact_usage(usage), (1, 2, 3, 4, 5, 8))
        usage["reported_usage_fields"] = {"input_tokens": True, "cache_read_tokens": False}
        self.assertEqual(rows.compact_usage(usage),
                         (1, 2, 3, 4, 5, 8, None, (True, None, False, None, None, None)))


    def test_a_usage_column_is_each_usage_as_compact_usage_makes_it(self):
        import random
        generator = random.Random(7)
        canonical = {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 3,
                     "cache_write_tokens": 4, "reasoning_tokens": 5, "prompt_tokens": 8}
        odd_canonical = [dict(canonical, input_tokens=True), dict(canonical, output_tokens=2 ** 63),
                         dict(canonical, prompt_tokens=-2 ** 63), dict(canonical, prompt_tokens=1.0),
                         dict(canonical, completion_tokens=2), dict(canonical, reported_usage_fields={}),
                         dict(canonical, reported_usage_fields={"input_tokens": True}),
                         {key: value for key, value in canonical.items() if key != "input_tokens"}]
        choices = [canonical, dict(canonical, total_tokens=10)] + odd_canonical + list(ODD_VALUES)
        fast = 0
        for _ in range(2000):
            usages = [generator.choice(choices[:2] if generator.random() < 0.5 else choices)
                      for _ in range(generator.randint(1, 5))]
            column = rows.usage_column(usages)
            self.assertEqual(column, [rows.compact_usage(usage) for usage in usages])
            fast += all(usage in choices[:2] for usage in usages)
        self.assertGreater(fast, 300)  # batches of canonical summaries only were common

if __name__ == "__main__":
    unittest.main()
