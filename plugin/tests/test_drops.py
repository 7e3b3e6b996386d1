"""drops.py: cumulative drops by hook and reason, errors and refused fields, read as copies,
counted exactly under concurrent writers, and started afresh in a forked child."""

import importlib
import threading
import unittest

from plugin.tests import support

drops = importlib.import_module(support.bridge_module.__package__ + ".drops")


class CountersTest(unittest.TestCase):
    def test_counts_drops_by_hook_and_reason(self):
        counters = drops.Counters()
        counters.drop("post_tool_call", drops.QUEUE_FULL)
        counters.drop("post_tool_call", drops.QUEUE_FULL, 4)
        counters.drop_each(["pre_llm_call", "post_tool_call", "pre_llm_call"], drops.SHUTDOWN)
        counters.drop_each(iter(()), drops.SEND_FAILED)
        self.assertEqual(counters.dropped(), {
            "post_tool_call": {"queue_full": 5, "shutdown": 1},
            "pre_llm_call": {"shutdown": 2},
        })

    def test_counts_errors_and_refused_fields_apart(self):
        counters = drops.Counters()
        counters.error("sender_error")
        counters.error("cost_error", 2)
        counters.refuse("model")
        counters.refuse("model", 3)
        self.assertEqual(counters.errors(), {"sender_error": 1, "cost_error": 2})
        self.assertEqual(counters.refused(), {"model": 4})
        self.assertEqual(counters.dropped(), {})

    def test_reads_are_copies(self):
        counters = drops.Counters()
        counters.drop("h", drops.QUEUE_FULL)
        counters.refuse("f")
        counters.dropped()["h"]["queue_full"] = 99
        counters.refused()["f"] = 99
        self.assertEqual((counters.dropped(), counters.refused()), ({"h": {"queue_full": 1}}, {"f": 1}))

    def test_concurrent_writers_lose_no_count(self):
        counters = drops.Counters()

        def write():
            for _ in range(2000):
                counters.drop("h", drops.SERIALIZE_ERROR)
                counters.refuse("f")

        threads = [threading.Thread(target=write) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(counters.dropped(), {"h": {"serialize_error": 8000}})
        self.assertEqual(counters.refused(), {"f": 8000})

    def test_reset_after_fork_counts_afresh(self):
        counters = drops.Counters()
        counters.drop("h", drops.CALLBACK_ERROR)
        counters.error("e")
        counters.reset_after_fork()
        self.assertEqual((counters.dropped(), counters.errors(), counters.refused()), ({}, {}, {}))


if __name__ == "__main__":
    unittest.main()
