#!/usr/bin/env python3
"""Freshness probe for bench/sections/freshness.ts: the bridge plugin, loaded as Hermes would.

    HERMES_SIDECAR_URL=http://127.0.0.1:PORT/v1/events /usr/bin/python3 bench/freshness.py

Loads ``plugin/hermes_prometheus_bridge`` with ``register(ctx)`` on a fake context whose
``register_hook(name, callback)`` stores the callbacks, with the default plugin settings (flush
interval 0.2 s, batch 500). Then, line by line on stdin:

    call <tool_name>   calls the ``post_tool_call`` callback once with that tool name and
                       prints ``{"tool": <name>, "t": <time.time() just before the call>}``
    quit               exits (the plugin's atexit hook flushes)

The TypeScript side polls ``/metrics`` until ``hermes_tool_calls_total{tool="<name>"}`` appears.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "plugin"))

import hermes_prometheus_bridge  # noqa: E402


class FakeContext:
    """The part of Hermes' plugin context the bridge uses."""

    def __init__(self):
        self.hooks = {}

    def register_hook(self, name, callback):
        self.hooks[name] = callback


def main():
    ctx = FakeContext()
    hermes_prometheus_bridge.register(ctx)
    post_tool_call = ctx.hooks["post_tool_call"]
    print(json.dumps({"ready": True, "hooks": len(ctx.hooks)}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        if words[0] == "call" and len(words) == 2:
            name = words[1]
            started = time.time()
            post_tool_call(tool_name=name, tool_call_id="fresh-" + name, session_id="freshness",
                           turn_id="freshness-turn", duration_ms=3, status="ok",
                           result="ignored by the plugin")
            print(json.dumps({"tool": name, "t": started}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
