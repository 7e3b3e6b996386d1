"""enqueuer.py: the hot path on Hermes' threads: copy the allow-listed values, queue one tuple,
wake the sender at a full batch, count a drop instead of blocking or raising."""

import threading
import types
import unittest

from plugin.tests import support
from hermes_prometheus_bridge.enqueuer import Enqueuer, absent_names

MISSING = support.fields_module.MISSING


class Drops(object):
    def __init__(self):
        self.counted = []

    def drop(self, hook, reason):
        self.counted.append((hook, reason))


def spec(hook="post_tool_call", sources=("tool_name", "status", "usage"), usage_at=2):
    return types.SimpleNamespace(hook=hook, sources=sources, usage_at=usage_at)


def enqueuer(capacity=10, batch_size=3):
    drops, wake = Drops(), threading.Event()
    return Enqueuer(capacity, batch_size, drops, wake), drops, wake


class AbsentNamesTest(unittest.TestCase):
    def test_names_the_names_a_call_left_out_in_order_or_none(self):
        self.assertEqual(absent_names(("a", "b", "c"), {"a": 1, "c": 3}), ("b",))
        self.assertEqual(absent_names(("a", "b", "c"), {"a": 1}), ("b", "c"))
        self.assertIsNone(absent_names(("a", "b"), {"a": 1, "b": 2}))


class CallbackTest(unittest.TestCase):
    def test_queues_the_values_in_source_order_and_a_copy_of_usage(self):
        queue, drops, _wake = enqueuer()
        usage = {"input_tokens": 5}
        callback = queue.hook_callback(spec())
        self.assertIsNone(callback(status="ok", tool_name="terminal", usage=usage, args="never copied"))
        usage["input_tokens"] = 99  # Hermes reusing its dict changes nothing queued
        [(queued_spec, observed_at, values, queued_usage)] = queue.take(10)
        self.assertEqual(queued_spec.hook, "post_tool_call")
        self.assertIsInstance(observed_at, float)
        self.assertEqual(values[:2], ("terminal", "ok"))
        self.assertEqual(queued_usage, {"input_tokens": 5})
        self.assertEqual(drops.counted, [])

    def test_a_call_that_leaves_names_out_gets_missing_for_them_each_time(self):
        queue, _drops, _wake = enqueuer()
        callback = queue.hook_callback(spec())
        callback(tool_name="terminal", usage=None)
        callback(tool_name="browser", usage=None)
        callback(tool_name="web", status="error", usage=None)
        self.assertEqual([event[2][:2] for event in queue.take(10)],
                         [("terminal", MISSING), ("browser", MISSING), ("web", "error")])

    def test_names_left_out_are_filled_in_the_calls_own_keywords_never_the_callers(self):
        queue, _drops, _wake = enqueuer()
        callback = queue.hook_callback(spec())
        keywords = {"tool_name": "terminal", "usage": None}
        callback(**keywords)
        callback(**keywords)
        self.assertEqual(keywords, {"tool_name": "terminal", "usage": None})
        self.assertEqual([event[2][:2] for event in queue.take(10)],
                         [("terminal", MISSING), ("terminal", MISSING)])

    def test_a_full_queue_counts_a_drop_and_a_full_batch_wakes_the_sender(self):
        queue, drops, wake = enqueuer(capacity=3, batch_size=2)
        callback = queue.hook_callback(spec())
        callback(tool_name="a", status="ok", usage=None)
        self.assertFalse(wake.is_set())
        callback(tool_name="b", status="ok", usage=None)
        self.assertTrue(wake.is_set())
        callback(tool_name="c", status="ok", usage=None)
        callback(tool_name="d", status="ok", usage=None)
        self.assertEqual(len(queue), 3)
        self.assertEqual(drops.counted, [("post_tool_call", "queue_full")])

    def test_a_failure_inside_the_callback_is_a_counted_drop_never_an_exception(self):
        queue, drops, _wake = enqueuer()
        # A spec whose usage position is past its values: reading it fails inside the callback.
        broken = queue.hook_callback(spec(sources=("a", "b"), usage_at=5))
        self.assertIsNone(broken(a=1, b=2))
        self.assertEqual(drops.counted, [("post_tool_call", "callback_error")])
        self.assertEqual(len(queue), 0)

    def test_the_envelope_callback_reads_the_payload_data(self):
        queue, drops, _wake = enqueuer()
        callback = queue.observer_callback(spec(hook="post_tool_call"))
        callback(types.SimpleNamespace(payload={"data": {"tool_name": "terminal", "status": "ok", "args": "x"}}))
        callback(types.SimpleNamespace(payload={"data": None}))
        callback(types.SimpleNamespace(payload=None))
        self.assertEqual([event[2][:2] for event in queue.take(10)], [("terminal", "ok"), (MISSING, MISSING)])
        self.assertEqual(drops.counted, [("post_tool_call", "callback_error")])


class QueueTest(unittest.TestCase):
    def test_take_is_oldest_first_and_clear_returns_the_hooks_it_held(self):
        queue, _drops, _wake = enqueuer()
        for hook in ("pre_tool_call", "post_tool_call", "pre_llm_call"):
            queue.hook_callback(spec(hook=hook, sources=("a", "b"), usage_at=-1))(a=1, b=2)
        self.assertEqual([event[0].hook for event in queue.take(2)], ["pre_tool_call", "post_tool_call"])
        self.assertEqual(queue.clear(), ["pre_llm_call"])
        self.assertEqual((len(queue), queue.take(5)), (0, []))


if __name__ == "__main__":
    unittest.main()
