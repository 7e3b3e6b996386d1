"""One odd value never costs the event: only that field is dropped (or reduced)."""

import enum
import json
import math
import threading
import unittest

from plugin.tests import support
from plugin.tests.support import NotSerializable, RecordingSidecar

fields = support.fields_module


class Color(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class OddValuesTest(unittest.TestCase):
    def send(self, hook, **kwargs):
        """Deliver one event through a real bridge and sidecar; return its ``data``."""
        with RecordingSidecar() as sidecar:
            bridge = support.bridge_module.Bridge(support.fast_config(sidecar.url))
            bridge.start()
            callback = bridge.hook_callback(hook, fields.HOOK_FIELDS[hook])
            self.assertIsNone(callback(**kwargs))
            self.assertTrue(bridge.flush(2.0))
            bridge.shutdown(0.5)
            events = sidecar.events()
        self.assertEqual(len(events), 1)
        self.assertEqual(bridge.dropped(), {})
        return events[0]["data"]

    def test_unserializable_message_none_usage_and_bad_scalars_keep_the_event(self):
        data = self.send(
            "post_api_request",
            assistant_message=NotSerializable(),   # never read
            response={"assistant_message": NotSerializable()},
            usage=None,                            # null: not sent (the sidecar reads it as absent)
            model=b"anthropic/claude",             # bytes: dropped
            provider={"name": "openrouter"},       # nested object: dropped
            turn_id=["t_1"],                       # list: dropped
            api_duration=float("nan"),             # NaN: dropped
            started_at=float("inf"),               # inf: dropped
            api_request_id="m" * 10000,            # longer than any id: refused whole
            finish_reason=Color.RED,               # str enum: its value
            first_chunk_at=None,                   # null: not sent
        )
        self.assertEqual(data, {"finish_reason": "red"})
        data = self.send(
            "post_tool_call",
            duration_ms=10 ** 30,                  # meaningless int: dropped
            error_type=-math.inf,                  # -inf: dropped
            tool_name=Color.RED,                   # str enum: its value
            turn_id=Level.HIGH,                    # int enum: its value
            tool_call_id="\ud800lone-surrogate",   # outside the id grammar: refused
        )
        self.assertEqual(data, {"tool_name": "red", "turn_id": 3})

    def test_usage_keeps_only_finite_numeric_token_keys(self):
        data = self.send("post_api_request", usage={
            "input_tokens": 10, "output_tokens": 2.5, "cache_read_tokens": float("nan"),
            "cache_write_tokens": "12", "reasoning_tokens": True, "prompt_tokens": None,
            "total_tokens": 10 ** 40, "request_count": 1, "completion_tokens": 7,
            "cost_usd": 0.01, "details": {"cached_tokens": 3},
        })
        # request_count and total_tokens are not forwarded: the sidecar never reads them.
        self.assertEqual(data, {"usage": {"input_tokens": 10, "output_tokens": 2.5,
                                          "completion_tokens": 7}})

    def test_usage_that_is_not_a_mapping_is_dropped(self):
        self.assertEqual(self.send("post_api_request", usage="1204 tokens", model="m"),
                         {"model": "m"})

    def test_usage_is_snapshotted_when_the_callback_runs(self):
        with RecordingSidecar() as sidecar:
            bridge = support.bridge_module.Bridge(support.fast_config(sidecar.url))
            callback = bridge.hook_callback("post_api_request",
                                            fields.HOOK_FIELDS["post_api_request"])
            usage = {"input_tokens": 1}
            callback(usage=usage)
            usage["input_tokens"] = 999  # Hermes mutating its dict later changes nothing
            bridge.start()
            self.assertTrue(bridge.flush(2.0))
            bridge.shutdown(0.5)
            self.assertEqual(sidecar.events()[0]["data"], {"usage": {"input_tokens": 1}})

    def test_error_text_becomes_a_flag(self):
        self.assertEqual(self.send("post_auxiliary_call", error="boom: provider said X"),
                         {"error": True})
        self.assertEqual(self.send("post_auxiliary_call", error=None), {"error": False})
        self.assertEqual(self.send("post_auxiliary_call", error=""), {"error": False})
        self.assertEqual(self.send("post_auxiliary_call", error={"message": "x"}),
                         {"error": True})

    def test_a_call_site_that_leaves_names_out_queues_the_same_values_as_a_lookup_by_name(self):
        """The remembered shape of absent names gives exactly the per-name values, also when the
        next call passes a name that was absent, or leaves out one that was present."""
        enqueuer = support.bridge_module.Enqueuer(100, 100, support.bridge_module.drops.Counters(),
                                                  threading.Event())
        spec = support.bridge_module.HOOK_SPECS["post_api_request"]
        callback = enqueuer.hook_callback(spec)
        full = {name: "v_" + name for name in spec.sources}
        calls = [
            {k: v for k, v in full.items() if k != "context_length"},
            {k: v for k, v in full.items() if k != "context_length"},  # the remembered shape
            full,                                                       # context_length now passed
            {k: v for k, v in full.items() if k not in ("context_length", "model")},
            {k: v for k, v in full.items() if k not in ("context_length", "model")},
            {k: v for k, v in full.items() if k != "model"},
            {"provider": "p", "model": "m"},
            {"provider": "p"},
            {},
        ]
        for kwargs in calls:
            callback(**kwargs)
        queued = [values for _spec, _at, values, _usage in enqueuer.take(100)]
        expected = [tuple(kwargs.get(name, fields.MISSING) for name in spec.sources) for kwargs in calls]
        self.assertEqual(queued, expected)

    def test_encoded_line_is_strict_json(self):
        line = support.bridge_module.encode_event(
            "post_tool_call", 1789862412.5, "abc", 7,
            {"duration_ms": float("nan"), "tool_name": "terminal"})
        self.assertEqual(json.loads(line), {
            "event": "post_tool_call", "observed_at": 1789862412.5, "instance": "abc", "seq": 7,
            "data": {"tool_name": "terminal"}})


if __name__ == "__main__":
    unittest.main()
