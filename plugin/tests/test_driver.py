"""The conversation driver script: what it says it emitted is exactly what the sidecar got."""

import json
import os
import subprocess
import sys
import unittest

from plugin.tests import support
from plugin.tests.support import RecordingSidecar

DRIVER = os.path.join(support.TESTS_DIR, "drive_conversation.py")


def run_driver(*args, stdin_text=None, timeout=60):
    completed = subprocess.run(
        [sys.executable, DRIVER] + list(args), input=stdin_text, capture_output=True,
        text=True, timeout=timeout, env=dict(os.environ, HERMES_SIDECAR_FLUSH_INTERVAL="0.02"))
    lines = [json.loads(line) for line in completed.stdout.splitlines() if line.strip()]
    return completed.returncode, lines


def count_by_event(events):
    counts = {}
    for event in events:
        counts[event["event"]] = counts.get(event["event"], 0) + 1
    return counts


class DriverTest(unittest.TestCase):
    def check_delivery(self, sidecar, summary):
        events = sidecar.events()
        self.assertEqual(count_by_event(events), summary["emitted"])
        self.assertEqual([e["seq"] for e in events], list(range(1, len(events) + 1)))
        self.assertEqual({e["instance"] for e in events}, {summary["instance"]})
        self.assertEqual(summary["events_delivered"], summary["emitted_total"])
        self.assertEqual(summary["dropped"], {})
        self.assertEqual(summary["hook_failures"], [])
        self.assertNotIn(summary["sentinel"].encode(), sidecar.raw_bytes())
        self.assertEqual(sidecar.heartbeats()[-1]["data"]["dropped"], {})

    def test_conversation_scenario(self):
        with RecordingSidecar() as sidecar:
            code, lines = run_driver("--url", sidecar.url, "--scenario", "conversation")
            self.assertEqual(code, 0)
            summary = lines[-1]
            self.assertEqual(summary["type"], "summary")
            self.check_delivery(sidecar, summary)
        self.assertEqual(summary["emitted"], {
            "api_request_error": 1, "on_session_end": 3, "on_session_finalize": 2,
            "on_session_reset": 1, "on_session_start": 2, "post_api_request": 7,
            "post_approval_response": 3, "post_auxiliary_call": 1,
            "post_tool_call": 6, "pre_api_request": 8, "pre_approval_request": 3,
            "pre_auxiliary_call": 1, "pre_llm_call": 3, "pre_tool_call": 6,
            "subagent_start": 1, "subagent_stop": 1})
        expected = summary["expected"]
        self.assertEqual(expected["tool_calls"], {
            "delegate_task": {"ok": 1}, "read_file": {"error": 1},
            "terminal": {"blocked": 1, "ok": 2, "timeout": 1}})
        self.assertEqual(expected["approval_decisions"], {
            "cli": {"rm_rf": {"deny": 1}}, "gateway": {"sudo": {"once": 1}},
            "smart": {"sudo": {"smart_approve": 1}}})
        self.assertEqual(expected["api_errors"], {"main": {"rate_limit": {"429": {"true": 1}}}})
        self.assertEqual(expected["tokens"]["main"], {
            "input": 5454, "cache_read": 80530, "cache_write": 2752, "output": 1492,
            "reasoning": 64})
        self.assertEqual(expected["tokens"]["auxiliary"], {
            "input": 310, "cache_read": 0, "cache_write": 0, "output": 9, "reasoning": 0})

    def test_envelope_scenario(self):
        with RecordingSidecar() as sidecar:
            code, lines = run_driver("--url", sidecar.url, "--scenario", "envelope")
            self.assertEqual(code, 0)
            summary = lines[-1]
            self.check_delivery(sidecar, summary)
            # Envelope tool calls carry the error flag; api_request_error only its class (the
            # sidecar reads no flag there: the event itself is the failure).
            errors = [(e["event"], e["data"].get("error"), e["data"].get("error_type")) for e in sidecar.events()
                      if e["event"] in ("post_tool_call", "api_request_error")]
        self.assertEqual(errors, [("api_request_error", None, "RateLimitError"),
                                  ("post_tool_call", False, None), ("post_tool_call", True, None)])
        self.assertEqual(summary["expected"]["memory_writes"], {"builtin": {"add": 1}})

    def test_load_mode_emits_exactly_n_events(self):
        with RecordingSidecar() as sidecar:
            code, lines = run_driver("--url", sidecar.url, "--events", "200", "--rate", "2000",
                                     "--hook-timeout", "0")
            self.assertEqual(code, 0)
            summary = lines[-1]
            self.assertEqual(summary["emitted_total"], 200)
            self.check_delivery(sidecar, summary)
        self.assertEqual(summary["emitted"]["on_session_start"], 1)
        self.assertEqual(summary["emitted"]["on_session_finalize"], 1)
        self.assertGreaterEqual(summary["emit_seconds"], 0.09)  # paced at 2000/s

    def test_hold_mode_answers_commands_until_stdin_closes(self):
        with RecordingSidecar() as sidecar:
            code, lines = run_driver("--url", sidecar.url, "--hold", "--hook-timeout", "0",
                                     stdin_text="turn 2\nevents 5\nflush\nstats\nnope\n")
            self.assertEqual(code, 0)
            self.assertEqual([line["type"] for line in lines],
                             ["ready", "ack", "ack", "stats", "stats", "error", "summary"])
            self.assertEqual(lines[1]["emitted"], 16)  # 8 per turn (no post_llm_call)
            self.assertEqual(lines[2]["emitted"], 5)
            self.assertEqual(lines[3]["stats"]["events_delivered"], 21)
            self.check_delivery(sidecar, lines[-1])


if __name__ == "__main__":
    unittest.main()
