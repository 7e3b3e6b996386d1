"""A Hermes 0.21 gateway: ten worker threads and two profiles in one process drive the real
plugin (plugin/tests/gateway_sessions.py); every event leaves exactly once, in order per plugin
instance, each profile as its own instance, and no content crosses."""

import unittest

from plugin.tests import gateway_sessions
from plugin.tests.support import RecordingSidecar


class GatewayTest(unittest.TestCase):
    def test_ten_threads_and_two_profiles_deliver_every_event_once_without_content(self):
        with RecordingSidecar() as sidecar:
            result = gateway_sessions.run(sidecar.url)
            received = sidecar.raw_bytes()
            events = sidecar.events()
            heartbeats = sidecar.heartbeats()
        expected = result["expected"]
        self.assertEqual(result["failures"], [])
        self.assertEqual(result["flushed"], {"default": True, "work": True})
        # Only Hermes' dispatch gate may skip a call, and only one without a call identity.
        skipped = {profile: sum(hooks.values()) for profile, hooks in result["skipped"].items()}
        self.assertEqual({hook for hooks in result["skipped"].values() for hook in hooks} - {"on_session_start"}, set())
        self.assertEqual(len(events), expected["events"] - sum(skipped.values()))
        by_instance = {}
        for event in events:
            by_instance.setdefault(event["instance"], []).append(event["seq"])
        # Two instances, one per profile; each numbered its events 1..n, each arrived once.
        self.assertEqual(len(by_instance), 2)
        for seqs in by_instance.values():
            self.assertEqual(sorted(seqs), list(range(1, len(seqs) + 1)))
        per_instance = {stats["instance"]: expected["events"] // 2 - skipped.get(profile, 0)
                        for profile, stats in result["stats"].items()}
        self.assertEqual({instance: len(seqs) for instance, seqs in by_instance.items()}, per_instance)
        last = {}
        for heartbeat in heartbeats:
            last[heartbeat["instance"]] = heartbeat["data"]
        self.assertEqual(set(last), set(by_instance))
        self.assertEqual(sorted((data["profile"], data["hermes_version"]) for data in last.values()),
                         [("default", "0.21.3"), ("work", "0.21.3")])
        for data in last.values():
            self.assertEqual(data["dropped"], {})
            self.assertNotIn("refused_fields", data)
        for stats in result["stats"].values():
            self.assertEqual(stats["dropped"], {})
            self.assertEqual(stats["queue_depth"], 0)
        self.assertNotIn(gateway_sessions.SENTINEL.encode(), received)
        # The exit reasons crossed as their leading identifiers only.
        reasons = sorted({event["data"].get("turn_exit_reason") for event in events
                          if event["event"] == "on_session_end"})
        self.assertEqual(reasons, ["interrupted_during_api_call", "local_processing_error",
                                   "text_response"])


if __name__ == "__main__":
    unittest.main()
