"""sender.py, through a real bridge and a real HTTP sidecar stub: numbering, batching, ordering,
retries and back-off, refusals, drop accounting, heartbeats, flush and the bounded exit."""

import json
import os
import threading
import time
import unittest

from plugin.tests import support
from plugin.tests.support import BlackHole, RecordingSidecar, scripted

Bridge = support.bridge_module.Bridge
HOOK_FIELDS = support.fields_module.HOOK_FIELDS


def callbacks(bridge, *hooks):
    return [bridge.hook_callback(hook, HOOK_FIELDS[hook]) for hook in hooks]


def seqs(events):
    return [event["seq"] for event in events]


class DeliveryTestCase(unittest.TestCase):
    def sidecar(self, respond=None, sock=None):
        sidecar = RecordingSidecar(respond, sock=sock)
        self.addCleanup(sidecar.close)
        return sidecar

    def bridge(self, url, start=True, **overrides):
        bridge = Bridge(support.fast_config(url, **overrides))
        self.addCleanup(bridge.shutdown, 0.2)
        if start:
            bridge.start()
        return bridge


class BatchingAndOrderTest(DeliveryTestCase):
    def test_events_are_numbered_from_one_and_split_into_batches_in_order(self):
        sidecar = self.sidecar()
        bridge = self.bridge(sidecar.url, start=False, batch_size=2)
        pre, post = callbacks(bridge, "pre_tool_call", "post_tool_call")
        for index in range(5):
            (pre if index % 2 == 0 else post)(tool_call_id="call_%d" % index)
        bridge.start()
        self.assertTrue(bridge.flush(2.0))
        requests = sidecar.snapshot()
        self.assertEqual([len(r.events()) for r in requests if r.events()], [2, 2, 1])
        events = sidecar.events()
        self.assertEqual(seqs(events), [1, 2, 3, 4, 5])
        self.assertEqual([e["data"]["tool_call_id"] for e in events],
                         ["call_%d" % i for i in range(5)])
        self.assertEqual({e["instance"] for e in events}, {bridge.instance})
        self.assertEqual(requests[0].headers["Content-Type"], "application/x-ndjson")
        self.assertNotIn("Authorization", requests[0].headers)
        self.assertTrue(requests[0].body.endswith(b"\n"))
        self.assertEqual(bridge.stats()["events_delivered"], 5)

    def test_concurrent_agent_threads_still_produce_strictly_increasing_seqs(self):
        sidecar = self.sidecar()
        bridge = self.bridge(sidecar.url, batch_size=50)
        (callback,) = callbacks(bridge, "post_api_request")
        per_thread = 400

        def emit(thread_index):
            for call in range(per_thread):
                callback(api_request_id="thread-%d" % thread_index, api_duration=call)

        threads = [threading.Thread(target=emit, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertTrue(bridge.flush(5.0))
        events = sidecar.events()
        self.assertEqual(seqs(events), list(range(1, 4 * per_thread + 1)))
        for thread_index in range(4):
            mine = [e["data"]["api_duration"] for e in events
                    if e["data"]["api_request_id"] == "thread-%d" % thread_index]
            self.assertEqual(mine, list(range(per_thread)))
        self.assertEqual(bridge.dropped(), {})

    def test_a_full_batch_is_sent_without_waiting_for_the_flush_interval(self):
        sidecar = self.sidecar()
        bridge = self.bridge(sidecar.url, batch_size=3, flush_interval=30.0)
        (callback,) = callbacks(bridge, "pre_tool_call")
        for _ in range(3):
            callback(tool_name="terminal")
        sidecar.wait_for(lambda requests: len(requests) == 1, timeout=2.0)
        self.assertEqual(seqs(sidecar.events()), [1, 2, 3])

    def test_bearer_token_from_a_token_file(self):
        sidecar = self.sidecar()
        path = os.path.join(self.temp_dir(), "token")
        with open(path, "w") as handle:
            handle.write("s3cr3t-token\n")
        config = support.config_module.config_from_env({
            "HERMES_SIDECAR_URL": sidecar.url, "HERMES_SIDECAR_TOKEN_FILE": path,
            "HERMES_SIDECAR_FLUSH_INTERVAL": "0.01"})
        bridge = Bridge(config)
        self.addCleanup(bridge.shutdown, 0.2)
        bridge.start()
        callbacks(bridge, "pre_llm_call")[0](turn_id="t1")
        self.assertTrue(bridge.flush(2.0))
        self.assertEqual(sidecar.snapshot()[0].headers["Authorization"], "Bearer s3cr3t-token")

    def temp_dir(self):
        import tempfile
        directory = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(directory, ignore_errors=True))
        return directory


class DropAccountingTest(DeliveryTestCase):
    def test_queue_full_is_counted_by_hook_and_consumes_no_seq(self):
        sidecar = self.sidecar()
        bridge = self.bridge(sidecar.url, start=False, queue_size=3)
        pre, post = callbacks(bridge, "pre_tool_call", "post_tool_call")
        for callback in (pre, post, pre, post, pre, post):
            self.assertIsNone(callback(tool_name="terminal"))
        self.assertEqual(bridge.dropped(), {"post_tool_call": {"queue_full": 2},
                                            "pre_tool_call": {"queue_full": 1}})
        bridge.start()
        self.assertTrue(bridge.flush(2.0))
        events = sidecar.events()
        self.assertEqual([(e["event"], e["seq"]) for e in events],
                         [("pre_tool_call", 1), ("post_tool_call", 2), ("pre_tool_call", 3)])
        (heartbeat,) = sidecar.heartbeats()
        self.assertEqual(heartbeat["data"]["dropped"], {
            "post_tool_call": {"queue_full": 2}, "pre_tool_call": {"queue_full": 1}})
        self.assertEqual(heartbeat["data"]["queue_capacity"], 3)

    def test_a_serialization_failure_costs_only_that_event_and_no_seq(self):
        def encode(hook, observed_at, instance, seq, data):
            if data.get("tool_name") == "explode":
                raise ValueError("cannot encode")
            return support.bridge_module.encode_event(hook, observed_at, instance, seq, data)

        sidecar = self.sidecar()
        bridge = Bridge(support.fast_config(sidecar.url), encode=encode)
        self.addCleanup(bridge.shutdown, 0.2)
        post, pre = callbacks(bridge, "post_tool_call", "pre_tool_call")
        post(tool_name="terminal")
        post(tool_name="explode")
        pre(tool_name="explode")
        pre(tool_name="read_file")
        bridge.start()
        self.assertTrue(bridge.flush(2.0))
        events = sidecar.events()
        self.assertEqual([(e["seq"], e["data"]["tool_name"]) for e in events],
                         [(1, "terminal"), (2, "read_file")])
        self.assertEqual(len(sidecar.snapshot()), 1)  # the rest of the batch went together
        self.assertEqual(bridge.dropped(), {"post_tool_call": {"serialize_error": 1},
                                            "pre_tool_call": {"serialize_error": 1}})

    def test_a_callback_that_fails_counts_callback_error_and_returns_none(self):
        class BrokenMapping(dict):
            def get(self, *_args):
                raise RuntimeError("broken")

        class Hook(object):
            payload = {"event": "post_tool_call", "data": BrokenMapping(tool_name="x")}

        bridge = self.bridge(support.unused_port_url()[1], start=False)
        callback = bridge.observer_callback(
            "post_tool_call", support.fields_module.OBSERVER_FIELDS["post_tool_call"])
        self.assertIsNone(callback(Hook()))
        self.assertEqual(bridge.dropped(), {"post_tool_call": {"callback_error": 1}})
        self.assertEqual(len(bridge.queue), 0)

    def test_refusals_are_never_retried_and_count_send_failed_by_hook(self):
        for status in (400, 401, 403, 413, 415):
            with self.subTest(status=status):
                sidecar = self.sidecar(lambda request, index, s=status: (s, {}, b"{}"))
                bridge = self.bridge(sidecar.url, start=False)
                post, pre = callbacks(bridge, "post_api_request", "pre_api_request")
                pre(api_call_count=1)
                post(api_call_count=1)
                post(api_call_count=2)
                bridge.start()
                self.assertTrue(bridge.flush(2.0))
                self.assertTrue(bridge.flush(2.0))  # a later attempt carries a heartbeat only
                requests = sidecar.snapshot()
                self.assertEqual([seqs(r.events()) for r in requests], [[1, 2, 3], []])
                self.assertEqual(bridge.dropped(), {"post_api_request": {"send_failed": 2},
                                                    "pre_api_request": {"send_failed": 1}})
                self.assertEqual(bridge.stats()["retries"], 0)
                self.assertEqual(bridge.stats()["buffer_depth"], 0)

    def test_full_retry_buffer_drops_the_oldest_events(self):
        sidecar_up = threading.Event()

        def respond(request, index):
            if sidecar_up.is_set():
                return support.accept_all(request, index)
            return 503, {"Retry-After": "0.05"}, b"{}"

        sidecar = self.sidecar(respond)
        bridge = self.bridge(sidecar.url, start=False, buffer_size=5)
        llm, api, tool = callbacks(bridge, "pre_llm_call", "pre_api_request", "post_tool_call")
        for callback in (llm, api, api, tool, tool, tool, tool, tool):
            callback(session_id="s")
        bridge.start()
        support.wait_until(lambda: bridge.stats()["retries"] >= 1)
        self.assertEqual(bridge.stats()["buffer_depth"], 5)
        self.assertEqual(bridge.dropped(), {"pre_llm_call": {"send_failed": 1},
                                            "pre_api_request": {"send_failed": 2}})
        sidecar_up.set()
        support.wait_until(lambda: bridge.stats()["events_delivered"] == 5)
        self.assertEqual(seqs(sidecar.events(accepted_only=True)), [4, 5, 6, 7, 8])


class RetryTest(DeliveryTestCase):
    def test_503_with_retry_after_then_success_delivers_everything_once_in_order(self):
        sidecar = self.sidecar(scripted([503, 503], {"Retry-After": "0.2"}))
        bridge = self.bridge(sidecar.url, start=False, batch_size=2)
        hooks = ["pre_api_request", "api_request_error", "pre_api_request", "post_api_request",
                 "post_tool_call"]
        for index, callback in enumerate(callbacks(bridge, *hooks)):
            callback(api_call_count=index)
        bridge.start()
        support.wait_until(lambda: bridge.stats()["events_delivered"] == 5, timeout=5.0)
        requests = sidecar.snapshot()
        self.assertEqual([(r.status, seqs(r.events())) for r in requests],
                         [(503, [1, 2]), (503, [1, 2]), (202, [1, 2]), (202, [3, 4]),
                          (202, [5])])
        accepted = sidecar.events(accepted_only=True)
        self.assertEqual([(e["seq"], e["event"]) for e in accepted],
                         list(zip([1, 2, 3, 4, 5], hooks)))
        for earlier, later in zip(requests, requests[1:3]):
            self.assertGreaterEqual(later.received_at - earlier.received_at, 0.19)
        self.assertEqual(bridge.stats()["retries"], 2)
        self.assertEqual(bridge.dropped(), {})

    def test_after_a_failed_attempt_the_next_post_leads_with_a_heartbeat_carrying_acked_seq(self):
        # A sidecar that restarted meets the instance anew: the heartbeat first tells it which
        # sequence numbers were acknowledged already, so it counts what the buffer lost since.
        sidecar = self.sidecar(scripted([202, 503], {"Retry-After": "0.05"}))
        bridge = self.bridge(sidecar.url, start=False, batch_size=2, heartbeat_interval=60)
        for callback in callbacks(bridge, "post_tool_call", "post_tool_call"):
            callback(tool_name="terminal")
        bridge.start()
        support.wait_until(lambda: bridge.stats()["events_delivered"] == 2)
        for callback in callbacks(bridge, "post_tool_call", "post_tool_call"):
            callback(tool_name="terminal")
        support.wait_until(lambda: bridge.stats()["events_delivered"] == 4)
        requests = sidecar.snapshot()
        self.assertEqual([r.status for r in requests], [202, 503, 202])
        retried = requests[2].lines()
        self.assertEqual(retried[0]["event"], "plugin_heartbeat")
        self.assertEqual(retried[0]["data"]["acked_seq"], 2)
        self.assertEqual([line["seq"] for line in retried[1:]], [3, 4])

    def test_429_and_gateway_errors_are_retried_with_backoff(self):
        sidecar = self.sidecar(scripted([429, 502, 504]))
        bridge = self.bridge(sidecar.url, start=False)
        callbacks(bridge, "post_tool_call")[0](tool_name="terminal")
        bridge.start()
        support.wait_until(lambda: bridge.stats()["events_delivered"] == 1)
        requests = sidecar.snapshot()
        self.assertEqual([r.status for r in requests], [429, 502, 504, 202])
        self.assertEqual([seqs(r.events()) for r in requests], [[1]] * 4)
        # Jittered exponential back-off: at least half of 0.02, 0.04, 0.08 s.
        gaps = [b.received_at - a.received_at for a, b in zip(requests, requests[1:])]
        for gap, floor in zip(gaps, (0.01, 0.02, 0.04)):
            self.assertGreaterEqual(gap, floor)
        self.assertEqual(bridge.dropped(), {})

    def test_sidecar_down_then_up_delivers_the_buffered_events(self):
        held, _port, url = support.closed_port()
        bridge = self.bridge(url, start=False)
        for callback in callbacks(bridge, "on_session_start", "pre_llm_call", "on_session_reset"):
            callback(session_id="s")
        bridge.start()
        support.wait_until(lambda: bridge.stats()["retries"] >= 2)
        self.assertEqual(bridge.stats()["buffer_depth"], 3)
        sidecar = self.sidecar(sock=held)
        support.wait_until(lambda: bridge.stats()["events_delivered"] == 3, timeout=5.0)
        self.assertEqual(seqs(sidecar.events()), [1, 2, 3])
        self.assertEqual(bridge.dropped(), {})

    def test_flush_gives_up_after_one_failed_attempt_instead_of_waiting_out_the_backoff(self):
        bridge = self.bridge(support.unused_port_url()[1], backoff_initial=60.0, backoff_max=60.0)
        callback = callbacks(bridge, "pre_llm_call")[0]
        callback(session_id="s")
        support.wait_until(lambda: bridge.stats()["retries"] >= 1)
        callback(session_id="s")
        started = time.monotonic()
        # Waiting out the back-off (30 s at least) would use all of the 10 s flush budget; one
        # refused attempt takes milliseconds, so the wide margin holds on a loaded machine.
        self.assertTrue(bridge.flush(10.0))
        self.assertLess(time.monotonic() - started, 5.0)
        self.assertEqual(bridge.stats()["buffer_depth"], 2)


class HeartbeatTest(DeliveryTestCase):
    def test_heartbeats_carry_cumulative_drop_counters_and_no_seq(self):
        sidecar = self.sidecar()
        bridge = self.bridge(sidecar.url, start=False, queue_size=1, heartbeat_interval=0.05)
        callback = callbacks(bridge, "post_tool_call")[0]
        callback(tool_name="a")
        callback(tool_name="b")  # queue_full
        bridge.start()
        sidecar.wait_for(lambda requests: sum(len(r.heartbeats()) for r in requests) >= 3)
        heartbeats = sidecar.heartbeats()
        acked = [heartbeat["data"].pop("acked_seq") for heartbeat in heartbeats[:3]]
        # Built before or after event 1 was acknowledged; never going back.
        self.assertIn(acked[0], (0, 1))
        self.assertEqual(acked[1:], [1, 1])
        # One built before the acknowledgement rode with event 1, which the buffer still held.
        depths = [heartbeat["data"].pop("buffer_depth") for heartbeat in heartbeats[:3]]
        self.assertEqual(depths, [1 - seq for seq in acked])
        # One numbering, one boot: a random token the sidecar tells a new numbering by.
        boots = {heartbeat["data"].pop("boot") for heartbeat in heartbeats[:3]}
        self.assertEqual(len(boots), 1)
        self.assertRegex(boots.pop(), r"^[0-9a-f]{32}$")
        for heartbeat in heartbeats[:3]:
            self.assertEqual(sorted(heartbeat), ["data", "event", "instance", "observed_at"])
            self.assertEqual(heartbeat["event"], "plugin_heartbeat")
            self.assertEqual(heartbeat["instance"], bridge.instance)
            self.assertIsInstance(heartbeat["observed_at"], float)
            self.assertEqual(heartbeat["data"], {
                "interval_seconds": 0.05,
                "dropped": {"post_tool_call": {"queue_full": 1}},
                "queue_depth": 0,
                "queue_capacity": 1,
                "buffer_capacity": 10000,
                "plugin_version": "0.1.0",
            })
        observed = [h["observed_at"] for h in heartbeats]
        self.assertEqual(observed, sorted(observed))

    def test_lines_the_sidecar_accepted_include_heartbeats_sent_alone(self):
        sidecar = self.sidecar()
        bridge = self.bridge(sidecar.url, heartbeat_interval=0.05)
        callback = callbacks(bridge, "post_tool_call")[0]
        callback(tool_name="a")
        sidecar.wait_for(lambda requests: sum(len(r.heartbeats()) for r in requests) >= 3)
        bridge.shutdown(1.0)
        stats = bridge.stats()
        sent = sidecar.heartbeats()
        self.assertGreaterEqual(len(sent), 4)  # three or more, then the final one at exit
        self.assertEqual(stats["heartbeats_sent"], len(sent))
        self.assertEqual(stats["events_delivered"], 1)
        self.assertEqual(stats["sidecar_accepted"], 1 + len(sent))

    def test_whole_second_intervals_are_sent_as_integers(self):
        bridge = Bridge(support.fast_config("http://127.0.0.1:9/v1/events",
                                            heartbeat_interval=5.0))
        line = json.loads(bridge.heartbeat_line())
        self.assertEqual(line["data"]["interval_seconds"], 5)
        self.assertIs(type(line["data"]["interval_seconds"]), int)
        self.assertNotIn("seq", line)


class ShutdownTest(DeliveryTestCase):
    def test_unsent_events_are_counted_shutdown_and_reported_in_a_final_heartbeat(self):
        def respond(request, index):
            if request.events():
                return 503, {"Retry-After": "10"}, b"{}"
            return support.accept_all(request, index)

        sidecar = self.sidecar(respond)
        bridge = self.bridge(sidecar.url, start=False)
        tool, api = callbacks(bridge, "post_tool_call", "post_api_request")
        tool(tool_name="a")
        tool(tool_name="b")
        api(model="m")
        bridge.start()
        support.wait_until(lambda: bridge.stats()["retries"] == 1)
        api(model="m")  # still on the agent-side queue at exit
        started = time.monotonic()
        bridge.shutdown(0.5)
        self.assertLess(time.monotonic() - started, 0.6)
        expected = {"post_tool_call": {"shutdown": 2}, "post_api_request": {"shutdown": 2}}
        self.assertEqual(bridge.dropped(), expected)
        final = sidecar.heartbeats()[-1]
        self.assertEqual(final["data"]["dropped"], expected)
        self.assertEqual(final["data"]["buffer_depth"], 0)
        # Exit tried the buffer once more (503 again), then sent the heartbeat alone.
        self.assertEqual([r.status for r in sidecar.snapshot()], [503, 503, 202])

    def test_exit_against_a_sidecar_that_never_answers_is_bounded(self):
        hole = BlackHole()
        self.addCleanup(hole.close)
        bridge = self.bridge(hole.url, start=False, timeout=2.0)
        callback = callbacks(bridge, "pre_tool_call")[0]
        for _ in range(3):
            callback(tool_name="t")
        bridge.start()
        support.wait_until(lambda: len(hole.accepted) >= 1)
        started = time.monotonic()
        bridge.shutdown(1.0)
        self.assertLess(time.monotonic() - started, 1.15)
        self.assertEqual(bridge.dropped(), {"pre_tool_call": {"shutdown": 3}})
        bridge.shutdown(1.0)  # idempotent: counted once
        self.assertEqual(bridge.dropped(), {"pre_tool_call": {"shutdown": 3}})

    def test_exit_delivers_what_is_queued(self):
        sidecar = self.sidecar()
        bridge = self.bridge(sidecar.url, flush_interval=30.0)
        callback = callbacks(bridge, "on_session_end")[0]
        callback(turn_id="t1")
        callback(turn_id="t2")
        bridge.shutdown(1.0)
        self.assertEqual(seqs(sidecar.events()), [1, 2])
        self.assertEqual(bridge.dropped(), {})
        self.assertEqual(sidecar.heartbeats()[-1]["data"]["dropped"], {})


@unittest.skipUnless(hasattr(os, "fork"), "needs os.fork")
class ForkTest(DeliveryTestCase):
    def test_a_forked_child_gets_its_own_instance_and_numbering(self):
        sidecar = self.sidecar()
        bridge = Bridge(support.fast_config(sidecar.url))
        support.hermes_prometheus_bridge.start(bridge)
        self.addCleanup(bridge.shutdown, 0.2)
        callback = callbacks(bridge, "pre_llm_call")[0]
        callback(turn_id="parent")
        self.assertTrue(bridge.flush(2.0))
        pid = os.fork()
        if pid == 0:  # child: emit one event, flush, leave without running the test runner
            try:
                callback(turn_id="child")
                bridge.flush(2.0)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        events = sidecar.wait_for(lambda requests: len(
            [e for r in requests for e in r.events()]) == 2)
        parent, child = [e for r in events for e in r.events()]
        self.assertEqual((parent["data"]["turn_id"], parent["seq"]), ("parent", 1))
        self.assertEqual((child["data"]["turn_id"], child["seq"]), ("child", 1))
        self.assertNotEqual(parent["instance"], child["instance"])
        # The child's numbering starts again at 1: its heartbeats carry a boot of their own.
        boots = {(h["instance"], h["data"]["boot"]) for r in sidecar.requests for h in r.heartbeats()}
        self.assertEqual({instance for instance, _ in boots}, {parent["instance"], child["instance"]})
        self.assertEqual(len({boot for _, boot in boots}), 2)


if __name__ == "__main__":
    unittest.main()


COMPACT = "application/x-hermes-events-compact+json"


class CompactNegotiationTest(DeliveryTestCase):
    """Compact bodies once the sidecar advertises them; NDJSON again after a 415."""

    def respond(self, older_from):
        """A sidecar that reads compact bodies, replaced from request ``older_from`` on by one
        that does not (415, no Accept-Post)."""
        def answer(request, index):
            older = index >= older_from
            if request.headers.get("Content-Type") == COMPACT and older:
                return 415, {"Content-Type": "application/json"}, b'{"error":"x"}'
            count = (len(json.loads(request.body)["events"])
                     if request.headers.get("Content-Type") == COMPACT
                     else len(request.events()))
            headers = {} if older else {"Accept-Post": "application/x-ndjson, " + COMPACT}
            return 202, headers, b'{"accepted":%d,"rejected":0,"errors":[]}' % count
        return answer

    def send_three(self, bridge):
        (post,) = callbacks(bridge, "post_tool_call")
        for index in range(3):
            post(tool_name="terminal", tool_call_id="toolu_%d" % index, turn_id="t_1")
        self.assertTrue(bridge.flush(2.0))

    def test_advertised_compact_is_used_and_a_415_resends_the_same_batch_as_ndjson(self):
        sidecar = self.sidecar(self.respond(older_from=2))
        bridge = self.bridge(sidecar.url)
        self.send_three(bridge)  # request 0: NDJSON, answered with Accept-Post
        self.send_three(bridge)  # request 1: compact
        self.send_three(bridge)  # request 2: compact, refused; request 3: the same as NDJSON
        self.send_three(bridge)  # request 4: NDJSON (the 415 is remembered)
        requests = sidecar.snapshot()
        self.assertEqual([request.headers.get("Content-Type") for request in requests],
                         ["application/x-ndjson", COMPACT, COMPACT, "application/x-ndjson",
                          "application/x-ndjson"])
        compact = json.loads(requests[1].body)
        self.assertEqual((compact["seq"], len(compact["events"])), (4, 3))
        self.assertEqual(seqs(requests[3].events()), [7, 8, 9])
        self.assertEqual([event["data"]["tool_call_id"] for event in requests[3].events()],
                         ["toolu_0", "toolu_1", "toolu_2"])
        stats = bridge.stats()
        self.assertEqual((stats["events_delivered"], stats["dropped"]), (12, {}))
        self.assertEqual(stats["errors"].get("compact_refused"), 1)
        self.assertEqual(stats["body_format"], "ndjson")

    def test_without_an_advertisement_or_with_compact_off_every_body_is_ndjson(self):
        for advertise, compact in ((False, True), (True, False)):
            with self.subTest(advertise=advertise, compact=compact):
                sidecar = self.sidecar(self.respond(older_from=99) if advertise else None)
                bridge = self.bridge(sidecar.url, compact=compact)
                self.send_three(bridge)
                self.send_three(bridge)
                types = {request.headers.get("Content-Type") for request in sidecar.snapshot()}
                self.assertEqual(types, {"application/x-ndjson"})
                self.assertEqual(bridge.stats()["events_delivered"], 6)
