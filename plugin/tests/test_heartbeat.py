"""heartbeat.py: the plugin_heartbeat line (cumulative counters, depths, acked_seq, boot, host,
errors and refusals only when there are any, no seq) and when the next one is due, on an
injected clock."""

import importlib
import json
import types
import unittest

from plugin.tests import support

heartbeat = importlib.import_module(support.bridge_module.__package__ + ".heartbeat")


class Counters(object):
    def __init__(self, dropped=None, errors=None, refused=None):
        self._dropped, self._errors, self._refused = dropped or {}, errors or {}, refused or {}

    def dropped(self):
        return self._dropped

    def errors(self):
        return self._errors

    def refused(self):
        return self._refused


class Clock(object):
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


CONFIG = types.SimpleNamespace(heartbeat_interval=30.0, queue_size=1000, buffer_size=5000)


class HeartbeatTest(unittest.TestCase):
    def test_the_line_carries_the_delivery_report_and_no_seq(self):
        counters = Counters(dropped={"post_tool_call": {"queue_full": 2}}, errors={"sender_error": 1},
                            refused={"model": 3})
        beat = heartbeat.Heartbeat(CONFIG, "1.2.3", counters, clock=Clock(),
                                   host={"hermes_version": "0.21.3", "profile": "work"})
        line = json.loads(beat.line("inst", 4, 7, 41, boot="b00t"))
        self.assertEqual(sorted(line), ["data", "event", "instance", "observed_at"])
        self.assertEqual((line["event"], line["instance"]), ("plugin_heartbeat", "inst"))
        self.assertEqual(line["data"], {
            "interval_seconds": 30, "dropped": {"post_tool_call": {"queue_full": 2}},
            "queue_depth": 4, "queue_capacity": 1000, "buffer_depth": 7, "buffer_capacity": 5000,
            "acked_seq": 41, "plugin_version": "1.2.3", "boot": "b00t",
            "hermes_version": "0.21.3", "profile": "work",
            "plugin_errors": {"sender_error": 1}, "refused_fields": {"model": 3},
        })
        self.assertIs(type(line["data"]["interval_seconds"]), int)

    def test_leaves_out_what_it_has_not_got(self):
        config = types.SimpleNamespace(heartbeat_interval=2.5, queue_size=1, buffer_size=1)
        beat = heartbeat.Heartbeat(config, "1.2.3", Counters(), clock=Clock())
        data = json.loads(beat.line("inst", 0, 0, 0))["data"]
        self.assertEqual(data["interval_seconds"], 2.5)
        for absent in ("boot", "plugin_errors", "refused_fields", "hermes_version", "profile"):
            self.assertNotIn(absent, data)

    def test_is_due_an_interval_after_start_and_after_each_send(self):
        clock = Clock()
        beat = heartbeat.Heartbeat(CONFIG, "1", Counters(), clock=clock)
        clock.now = 129.9
        self.assertFalse(beat.due())
        clock.now = 130.0
        self.assertTrue(beat.due())
        beat.sent()
        self.assertFalse(beat.due())
        clock.now = 160.0
        self.assertTrue(beat.due())


if __name__ == "__main__":
    unittest.main()
