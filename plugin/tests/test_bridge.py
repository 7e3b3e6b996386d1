"""bridge.py: one bridge's sender, its start and stop, the finalize wait and fork renewal."""

import os
import time
import unittest

from plugin.tests import support
from plugin.tests.support import BlackHole, RecordingSidecar, sender_threads


class BridgeLifecycleTest(unittest.TestCase):
    def test_start_twice_runs_one_thread_and_a_stopped_bridge_does_not_restart(self):
        bridge = support.bridge_module.Bridge(
            support.fast_config(support.unused_port_url()[1]))
        self.assertTrue(bridge.start())
        thread = bridge._sender._thread
        self.assertFalse(bridge.start())
        self.assertIs(bridge._sender._thread, thread)
        self.assertEqual(sum(1 for t in sender_threads() if t is thread), 1)
        bridge.shutdown(0.2)
        self.assertFalse(bridge.start())
        thread.join(1.0)
        self.assertFalse(thread.is_alive())
        self.assertNotIn(thread, sender_threads())

    def test_finalize_waits_briefly_for_a_hung_sidecar_and_not_at_all_for_a_dead_one(self):
        hole = BlackHole()
        self.addCleanup(hole.close)
        bridge = support.bridge_module.Bridge(support.fast_config(hole.url, timeout=2.0))
        self.addCleanup(bridge.shutdown, 0.1)
        finalize = bridge.finalize_callback("on_session_finalize")
        bridge.start()
        started = time.monotonic()
        finalize(session_id="s", platform="cli")
        waited = time.monotonic() - started
        self.assertGreaterEqual(waited, 0.2)
        self.assertLess(waited, 0.6)  # FINALIZE_WAIT_MAX (0.25 s), never the 2 s HTTP timeout

        dead = support.bridge_module.Bridge(support.fast_config(
            support.unused_port_url()[1], backoff_initial=5.0, backoff_max=5.0))
        self.addCleanup(dead.shutdown, 0.1)
        dead.hook_callback("on_session_start")(session_id="s")
        dead.start()
        support.wait_until(lambda: dead.stats()["retries"] >= 1)
        finalize = dead.finalize_callback("on_session_finalize")
        started = time.monotonic()
        finalize(session_id="s", platform="cli")
        self.assertLess(time.monotonic() - started, 0.05)  # back-off: no wait at all


class ForkWakeTest(unittest.TestCase):
    def test_in_a_forked_child_a_full_batch_still_wakes_the_new_sender(self):
        with RecordingSidecar() as sidecar:
            bridge = support.bridge_module.Bridge(support.fast_config(
                sidecar.url, batch_size=2, flush_interval=30.0))
            support.hermes_prometheus_bridge.start(bridge)
            self.addCleanup(bridge.shutdown, 0.2)
            callback = bridge.hook_callback("pre_llm_call")
            pid = os.fork()
            if pid == 0:  # child: two events make a batch; no flush, no timer (30 s)
                code = 1
                try:
                    callback(turn_id="child-1")
                    callback(turn_id="child-2")
                    deadline = time.monotonic() + 3.0
                    while time.monotonic() < deadline:
                        if bridge.stats()["events_delivered"] == 2:
                            code = 0
                            break
                        time.sleep(0.01)
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            self.assertEqual(os.waitstatus_to_exitcode(status), 0)
            self.assertEqual([e["data"]["turn_id"] for e in sidecar.events()],
                             ["child-1", "child-2"])


if __name__ == "__main__":
    unittest.main()
