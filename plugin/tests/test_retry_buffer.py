"""retry_buffer.py: oldest first, bounded (evictions counted as send_failed), settled only from
the front, and abandoned exactly once (what is left, and anything added later, is shutdown)."""

import importlib
import json
import unittest

from plugin.tests import support

retry_buffer = importlib.import_module(support.bridge_module.__package__ + ".retry_buffer")


class Counters(object):
    """Records ``drop_each`` as ``(hook, reason)`` pairs."""

    def __init__(self):
        self.dropped = []

    def drop_each(self, hooks, reason):
        self.dropped.extend((hook, reason) for hook in hooks)


def events(first, count, hook="post_tool_call"):
    return [(seq, hook, '{"at":%s,"seq":%d,"data":%s}', 1.5, '{"n":%d}' % seq)
            for seq in range(first, first + count)]


class RetryBufferTest(unittest.TestCase):
    def setUp(self):
        self.counters = Counters()
        self.buffer = retry_buffer.RetryBuffer(4, self.counters)

    def test_keeps_events_oldest_first_and_settles_from_the_front(self):
        self.assertEqual(self.buffer.add(events(1, 3)), 0)
        self.assertEqual([event[retry_buffer.SEQ] for event in self.buffer.head(2)], [1, 2])
        self.assertEqual(len(self.buffer), 3)  # head leaves them in place
        self.assertTrue(self.buffer.settle(2))
        self.assertEqual([event[retry_buffer.SEQ] for event in self.buffer.head(10)], [3])
        self.assertEqual(self.counters.dropped, [])

    def test_past_its_capacity_evicts_the_oldest_and_counts_them_send_failed(self):
        self.buffer.add(events(1, 3, hook="pre_tool_call"))
        self.assertEqual(self.buffer.add(events(4, 3)), 2)
        self.assertEqual([event[retry_buffer.SEQ] for event in self.buffer.head(10)], [3, 4, 5, 6])
        self.assertEqual(self.counters.dropped, [("pre_tool_call", "send_failed")] * 2)

    def test_abandon_returns_what_is_left_exactly_once_and_counts_later_adds_as_shutdown(self):
        self.buffer.add(events(1, 2, hook="pre_llm_call"))
        self.assertEqual(self.buffer.abandon(), ["pre_llm_call", "pre_llm_call"])
        self.assertIsNone(self.buffer.abandon())
        self.assertTrue(self.buffer.abandoned)
        self.assertEqual(len(self.buffer), 0)
        self.assertFalse(self.buffer.settle(1))
        self.assertEqual(self.buffer.add(events(3, 1)), 0)
        self.assertEqual(len(self.buffer), 0)
        self.assertEqual(self.counters.dropped, [("post_tool_call", "shutdown")])

    def test_reset_after_fork_starts_empty_and_accepting(self):
        self.buffer.add(events(1, 2))
        self.buffer.abandon()
        self.buffer.reset_after_fork()
        self.assertFalse(self.buffer.abandoned)
        self.buffer.add(events(9, 1))
        self.assertEqual([event[retry_buffer.SEQ] for event in self.buffer.head(10)], [9])

    def test_line_of_puts_the_line_together_when_sent(self):
        [event] = events(7, 1)
        self.assertEqual(retry_buffer.line_of(event), '{"at":1.5,"seq":7,"data":{"n":7}}')
        whole = (8, "post_tool_call", retry_buffer.WHOLE_LINE, 2.0, '{"whole":true}')
        self.assertEqual(retry_buffer.line_of(whole), '{"whole":true}')

    def test_lines_of_rows_and_whole_lines_are_each_line_of_them(self):
        from hermes_prometheus_bridge import encoding, rows
        spec = rows.ROW_SPECS[rows.CODES[id(support.bridge_module.HOOK_SPECS["post_tool_call"])]]
        template = encoding.line_template(spec.hook, "abc")
        build = rows.row_builder(spec)
        mixed = [(seq, spec.hook, template, 1.5 + seq,
                  build(("toolu_%d" % seq, "terminal", "t_1", "ok", None, seq),
                        support.fields_module.MISSING, 1.5, lambda _field: None,
                        rows.Admitted()))
                 for seq in range(1, 4)]
        mixed.insert(1, (9, "post_tool_call", retry_buffer.WHOLE_LINE, 2.0, '{"whole":true}'))
        lines = retry_buffer.lines_of(mixed)
        self.assertEqual(lines, [retry_buffer.line_of(event) for event in mixed])
        self.assertEqual(json.loads(lines[2])["data"], {
            "tool_call_id": "toolu_2", "tool_name": "terminal", "turn_id": "t_1", "status": "ok",
            "duration_ms": 2})


if __name__ == "__main__":
    unittest.main()
