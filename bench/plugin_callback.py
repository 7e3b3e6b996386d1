#!/usr/bin/env python3
"""Cost of the bridge plugin's hook callbacks on the calling (agent) thread.

    python3 bench/plugin_callback.py [--calls N] [--quick] [--scenarios up,down,blackhole]

Each row times N individual calls ``callback(**kwargs)`` with realistic Hermes payloads
(the canonical sample ``post_api_request`` of plugin/tests/fixtures/appendix_a_payloads.json with a non-serializable ``assistant_message``, and its
``post_tool_call``), as fast as possible, with the plugin's sender thread running and default
settings (queue 10000, batch 2000, flush 0.2 s, HTTP timeout 2 s):

* ``up``        - the sidecar is a stub in another process answering 202;
* ``down``      - nothing listens on the port (connection refused, retries back off);
* ``blackhole`` - a socket that accepts connections and never answers (each POST times out).

The bridge rows are paced (``--rate``, default 10,000 calls/s, about a hundred times a
busy agent) so that every call takes the enqueue path; one extra row calls back to back with the
sidecar up, which outruns the sender and mostly measures the ``queue_full`` drop path.

For comparison it times the same metric updates done in-process with ``prometheus_client``
(Counter/Histogram with labels, the alternative to a sidecar) when that package is importable;
if the running interpreter cannot see it, Debian's /usr/lib/python3/dist-packages copy (pure
Python) is tried. Two reference rows put the numbers in context: an empty ``**kwargs``
function (call + timer overhead) and Hermes' own dispatch of one timeout-bounded hook through
the test harness (a worker thread per call, as ``invoke_hook`` does).

Only the standard library is required. Prints a markdown table.
"""

import argparse
import gc
import json
import os
import platform
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "plugin"))
sys.path.insert(0, os.path.join(ROOT, "plugin", "tests"))

from hermes_prometheus_bridge.bridge import Bridge, encode_event  # noqa: E402
from hermes_prometheus_bridge.config import DEFAULTS  # noqa: E402
from hermes_prometheus_bridge.contract import HOOK_SPECS  # noqa: E402
from hermes_prometheus_bridge.encoding import encode_data_texts  # noqa: E402
from hermes_prometheus_bridge.fields import (  # noqa: E402
    HOOK_FIELDS, MISSING, compiled_grammars, compiled_transforms, event_data)

API_SECONDS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96,
               81.92, 163.84, 327.68)
TOOL_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

STUB_SERVER = r"""
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        answer = b'{"accepted":%d,"rejected":0,"errors":[]}' % body.count(b"\n")
        self.send_response(202)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(answer)
    def log_message(self, *a):
        pass
HTTPServer.request_queue_size = 128
server = HTTPServer(("127.0.0.1", 0), H)  # one request at a time, as the plugin sends
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class NormalizedMessage(object):
    """Hermes' provider message object: not JSON-serializable."""

    def __init__(self, content):
        self.content = content


def post_api_request_kwargs():
    usage = {"input_tokens": 1204, "output_tokens": 412, "cache_read_tokens": 18030,
             "cache_write_tokens": 952, "reasoning_tokens": 0, "request_count": 1,
             "prompt_tokens": 20186, "total_tokens": 20598}
    return {
        "task_id": "20260920_141203_9f3c2a", "turn_id": "t_7c1e5b20",
        "api_request_id": "t_7c1e5b20:api:2", "session_id": "20260920_141203_9f3c2a",
        "platform": "cli", "model": "anthropic/claude-sonnet-4.6", "provider": "openrouter",
        "base_url": "https://openrouter.ai/api/v1", "api_mode": "chat_completions",
        "api_call_count": 2, "api_duration": 6.842, "started_at": 1789862412.481,
        "ended_at": 1789862419.323, "first_chunk_at": 1789862413.902,
        "finish_reason": "tool_calls", "message_count": 6,
        "response_model": "anthropic/claude-4.6-sonnet-20260514", "usage": usage,
        "response": {"model": "anthropic/claude-4.6-sonnet-20260514", "finish_reason": "tool_calls",
                     "assistant_message": {"role": "assistant", "content": "Running the tests.",
                                           "tool_calls": [{"id": "toolu_01HkQ9"}]},
                     "usage": dict(usage)},
        "assistant_message": NormalizedMessage("Running the tests."),
        "assistant_content_chars": 29, "assistant_tool_call_count": 1, "moa_references": None,
        "telemetry_schema_version": "hermes.observer.v1",
    }


def post_tool_call_kwargs():
    return {
        "tool_name": "terminal", "args": {"command": "pytest -x", "timeout": 300},
        "result": json.dumps({"output": "42 passed in 3.10s" * 20, "exit_code": 0}),
        "task_id": "20260920_141203_9f3c2a", "session_id": "20260920_141203_9f3c2a",
        "tool_call_id": "toolu_01HkQ9", "turn_id": "t_7c1e5b20",
        "api_request_id": "t_7c1e5b20:api:2", "duration_ms": 3412, "status": "ok",
        "error_type": None, "error_message": None, "middleware_trace": [],
        "telemetry_schema_version": "hermes.observer.v1",
    }


PAYLOADS = {"post_api_request": post_api_request_kwargs, "post_tool_call": post_tool_call_kwargs}


def time_calls(callback, kwargs, calls, rate=0.0):
    """Per-call nanoseconds of ``callback(**kwargs)``; returns (sorted samples, seconds).

    With ``rate`` (calls per second) the calls come in 1 ms bursts followed by a sleep, the way
    agent threads alternate short bursts of hooks with I/O waits; the sleep is also when the
    sender thread gets the GIL. Without it, calls are back to back.
    """
    clock = time.perf_counter_ns
    samples = [0] * calls
    burst = max(1, int(rate / 1000.0)) if rate > 0 else calls
    tick = burst / rate if rate > 0 else 0.0
    started = time.perf_counter()
    next_tick = started
    index = 0
    while index < calls:
        for _ in range(min(burst, calls - index)):
            before = clock()
            callback(**kwargs)
            samples[index] = clock() - before
            index += 1
        if tick:
            next_tick += tick
            delay = next_tick - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
    elapsed = time.perf_counter() - started
    samples.sort()
    return samples, elapsed


def summarize(label, hook, samples, elapsed, extra=""):
    count = len(samples)

    def pct(q):
        return samples[min(count - 1, int(count * q))] / 1000.0

    return {"scenario": label, "hook": hook, "calls": count, "median": pct(0.5),
            "p90": pct(0.9), "p99": pct(0.99), "p999": pct(0.999), "max": samples[-1] / 1000.0,
            "rate": count / elapsed if elapsed > 0 else 0.0, "extra": extra}


# ------------------------------------------------------------------------------ sidecars

class StubSidecar(object):
    """A 202-answering sidecar in a separate process (so it takes no GIL from the bench)."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, "-c", STUB_SERVER],
                                        stdout=subprocess.PIPE, text=True)
        port = int(self.process.stdout.readline())
        self.url = "http://127.0.0.1:%d/v1/events" % port

    def close(self):
        self.process.terminate()
        self.process.wait(5)


class DownSidecar(object):
    def __init__(self):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d/v1/events" % probe.getsockname()[1]
        probe.close()

    def close(self):
        pass


class BlackHoleSidecar(object):
    """The kernel completes the handshake into the listen backlog; nobody ever reads."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4096)
        self.url = "http://127.0.0.1:%d/v1/events" % self.sock.getsockname()[1]

    def close(self):
        self.sock.close()


SIDECARS = {"up": StubSidecar, "down": DownSidecar, "blackhole": BlackHoleSidecar}
SCENARIO_LABELS = {"up": "bridge, sidecar up (202)", "down": "bridge, sidecar down (refused)",
                   "blackhole": "bridge, sidecar black-holed (no answer)"}


def bench_bridge(scenario, calls, rate, label_suffix=""):
    sidecar = SIDECARS[scenario]()
    rows = []
    try:
        for hook, make_kwargs in PAYLOADS.items():
            bridge = Bridge(DEFAULTS._replace(url=sidecar.url))
            bridge.start()
            callback = bridge.hook_callback(hook, HOOK_FIELDS[hook])
            kwargs = make_kwargs()
            warm_up = min(calls, 2000)
            time_calls(callback, kwargs, warm_up, rate)
            samples, elapsed = time_calls(callback, kwargs, calls, rate)
            dropped = sum(reasons.get("queue_full", 0) for reasons in bridge.dropped().values())
            bridge.shutdown(1.0)
            stats = bridge.stats()
            extra = "queue_full drops: %d of %d" % (dropped, calls + warm_up)
            if scenario == "up":
                extra += "; delivered: %d; failed POSTs: %d" % (
                    stats["events_delivered"], stats["retries"])
            paced = ", %s calls/s" % "{:,.0f}".format(rate) if rate else ", back to back"
            rows.append(summarize(SCENARIO_LABELS[scenario] + paced + label_suffix, hook,
                                  samples, elapsed, extra))
    finally:
        sidecar.close()
    return rows


# ------------------------------------------------------------------------------ alternatives

def import_prometheus_client():
    """``(module, version, origin)``; the module is ``None`` when it cannot be imported."""
    try:
        import prometheus_client  # noqa: F401
        return prometheus_client, module_version(), "importable"
    except ImportError:
        pass
    debian = "/usr/lib/python3/dist-packages"
    if os.path.isdir(os.path.join(debian, "prometheus_client")):
        sys.path.append(debian)
        try:
            import prometheus_client  # noqa: F401
            return prometheus_client, module_version(), "from " + debian
        except ImportError:
            pass
        finally:
            sys.path.remove(debian)
    return None, "", "not importable"


def prometheus_callbacks(prometheus_client, registry=None):
    """The in-process alternative: the same metric updates the sidecar does per event, in
    ``registry`` (a new one when not given)."""
    if registry is None:
        registry = prometheus_client.CollectorRegistry()
    Counter, Histogram = prometheus_client.Counter, prometheus_client.Histogram
    api_labels = ("kind", "provider", "model", "outcome")
    requests = Counter("hermes_api_requests", "attempts", api_labels, registry=registry)
    duration = Histogram("hermes_api_request_duration_seconds", "latency", api_labels,
                         buckets=API_SECONDS, registry=registry)
    tokens = Counter("hermes_tokens", "tokens", ("kind", "provider", "model", "type"),
                     registry=registry)
    finish = Counter("hermes_api_finish_reasons", "finish", ("kind", "provider", "model",
                                                             "finish_reason"), registry=registry)
    tool_calls = Counter("hermes_tool_calls", "tools", ("tool", "status"), registry=registry)
    tool_duration = Histogram("hermes_tool_call_duration_seconds", "tool latency",
                              ("tool", "status"), buckets=TOOL_SECONDS, registry=registry)
    tool_errors = Counter("hermes_tool_errors", "tool errors", ("tool", "error_type"),
                          registry=registry)
    token_keys = (("input_tokens", "input"), ("cache_read_tokens", "cache_read"),
                  ("cache_write_tokens", "cache_write"), ("output_tokens", "output"),
                  ("reasoning_tokens", "reasoning"))

    def on_post_api_request(**kwargs):
        try:
            provider, model = kwargs.get("provider") or "unknown", kwargs.get("model") or "unknown"
            requests.labels("main", provider, model, "success").inc()
            seconds = kwargs.get("api_duration")
            if isinstance(seconds, (int, float)):
                duration.labels("main", provider, model, "success").observe(seconds)
            finish.labels("main", provider, model, kwargs.get("finish_reason") or "unknown").inc()
            usage = kwargs.get("usage") or {}
            for key, kind in token_keys:
                value = usage.get(key)
                if isinstance(value, int) and value > 0:
                    tokens.labels("main", provider, model, kind).inc(value)
        except Exception:
            pass

    def on_post_tool_call(**kwargs):
        try:
            tool, status = kwargs.get("tool_name") or "unknown", kwargs.get("status") or "unknown"
            tool_calls.labels(tool, status).inc()
            millis = kwargs.get("duration_ms")
            if isinstance(millis, (int, float)):
                tool_duration.labels(tool, status).observe(millis / 1000.0)
            if status != "ok":
                tool_errors.labels(tool, kwargs.get("error_type") or "unknown").inc()
        except Exception:
            pass

    return {"post_api_request": on_post_api_request, "post_tool_call": on_post_tool_call}


def bench_prometheus_client(calls):
    module, version, origin = import_prometheus_client()
    if module is None:
        return [], "prometheus_client not importable (try /usr/bin/python3)"
    rows = []
    callbacks = prometheus_callbacks(module)
    for hook, make_kwargs in PAYLOADS.items():
        kwargs = make_kwargs()
        time_calls(callbacks[hook], kwargs, min(calls, 2000))
        samples, elapsed = time_calls(callbacks[hook], kwargs, calls)
        rows.append(summarize("in-process prometheus_client %s" % version, hook,
                              samples, elapsed, origin))
    return rows, None


def module_version():
    try:
        from importlib.metadata import version
        return version("prometheus_client")
    except Exception:
        return ""


def bench_sender_encoding(calls):
    """What each event later costs the sender thread (same process, same GIL): clean + JSON."""
    rows = []
    for hook, make_kwargs in PAYLOADS.items():
        allowed = frozenset(HOOK_FIELDS[hook])
        data = {key: value for key, value in make_kwargs().items() if key in allowed}
        data["usage"] = dict(data["usage"]) if "usage" in data else None

        def encode_one(**_unused):
            encode_event(hook, 1789862419.5, "0" * 32, 123456, data)

        samples, elapsed = time_calls(encode_one, {}, max(1000, calls // 4))
        rows.append(summarize("sender thread: encode one event (clean + JSON)", hook, samples,
                              elapsed, "off the agent thread, but shares the GIL"))
    rows.extend(bench_batch_path(calls))
    return rows


def bench_batch_path(calls):
    """What a JSON line of an event costs on the sender thread (event_data over the values the
    callback copied, then the JSON text: the NDJSON form, which a sender uses until the sidecar
    advertises compact bodies), without and with the boundary grammar check (every forwarded
    string matched whole against its field's precompiled pattern). The compact path (rows
    cleaned by column, encoded when sent) is measured in the whole process by
    bench/plugin_host_cpu.py."""
    rows = []
    refused = {}

    def refuse(field):
        refused[field] = refused.get(field, 0) + 1

    count = max(1000, calls // 4)
    for hook, make_kwargs in PAYLOADS.items():
        spec = HOOK_SPECS[hook]
        # Every call its own request, tool call and turn ids, as Hermes sends them.
        per_call = []
        for index in range(count + 1):
            kwargs = make_kwargs()
            for name, value in (("turn_id", "t_%08x" % (index // 4)),
                                ("api_request_id", "t_%08x:api:%d" % (index // 4, index % 4)),
                                ("tool_call_id", "toolu_%010x" % index)):
                if name in kwargs:
                    kwargs[name] = value
            per_call.append(tuple(kwargs.get(name, MISSING) for name in spec.sources))
        values = per_call[0]
        usage = values[spec.usage_at] if spec.usage_at >= 0 else MISSING
        usage = dict(usage) if type(usage) is dict else usage
        transforms = compiled_transforms(spec)
        for label, grammars in (("without the grammar check", None),
                                ("with the grammar check", compiled_grammars(spec))):
            next_values = iter(per_call).__next__

            def clean_and_encode(**_unused):
                encode_data_texts([event_data(spec.plain, transforms, next_values(), usage,
                                              grammars, refuse)])

            samples, elapsed = time_calls(clean_and_encode, {}, count)
            rows.append(summarize("sender thread: batch path, %s" % label, hook, samples,
                                  elapsed, "refused: %d" % sum(refused.values())))
    return rows


def bench_reference(calls):
    def noop(**_kwargs):
        return None

    kwargs = post_api_request_kwargs()
    samples, elapsed = time_calls(noop, kwargs, calls)
    rows = [summarize("reference: empty **kwargs function", "post_api_request", samples,
                      elapsed, "call + timer overhead")]
    from hermes_dispatch import PluginManager
    manager = PluginManager()
    manager.add_hook("post_api_request", noop)
    dispatches = max(200, min(calls // 100, 2000))
    samples, elapsed = time_calls(lambda **kw: manager.invoke_hook("post_api_request", **kw),
                                  kwargs, dispatches)
    rows.append(summarize("reference: Hermes invoke_hook, bounded hook, no-op callback",
                          "post_api_request", samples, elapsed,
                          "harness; one worker thread per call, as Hermes"))
    return rows


# ------------------------------------------------------------------------------ output

def table(rows):
    lines = ["| scenario | hook | calls | median µs | p90 µs | p99 µs | p99.9 µs | max µs | calls/s | notes |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for row in rows:
        lines.append("| %s | %s | %d | %.2f | %.2f | %.2f | %.1f | %.0f | %s | %s |" % (
            row["scenario"], row["hook"], row["calls"], row["median"], row["p90"], row["p99"],
            row["p999"], row["max"], "{:,.0f}".format(row["rate"]), row["extra"]))
    return "\n".join(lines)


def environment():
    return "Python %s (%s) on %s, %d CPUs; gc %s" % (
        platform.python_version(), sys.executable, platform.platform(), os.cpu_count() or 0,
        "enabled" if gc.isenabled() else "disabled")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200000, help="timed calls per row")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2000 calls per row")
    parser.add_argument("--scenarios", default="up,down,blackhole")
    parser.add_argument("--rate", type=float, default=10000.0,
                        help="paced calls per second with the sidecar up or down")
    parser.add_argument("--blackhole-rate", type=float, default=2000.0,
                        help="paced rate when black-holed: the queue (10000) must absorb each "
                             "POST's 2 s timeout plus the drain after it, so well below 5000/s")
    parser.add_argument("--blackhole-calls", type=int, default=30000)
    args = parser.parse_args()
    calls = 2000 if args.quick else args.calls
    scenarios = [name for name in args.scenarios.split(",") if name]
    for name in scenarios:
        if name not in SIDECARS:
            parser.error("unknown scenario %r" % name)

    rows = bench_reference(calls)
    for name in scenarios:
        if name == "blackhole":
            rows.extend(bench_bridge(name, min(calls, args.blackhole_calls), args.blackhole_rate))
        else:
            rows.extend(bench_bridge(name, calls, args.rate))
    if "up" in scenarios:  # overload: back-to-back calls outrun the sender; most hit queue_full
        rows.extend(bench_bridge("up", calls, 0.0, " (saturated)"))
    rows.extend(bench_sender_encoding(calls))
    prometheus_rows, note = bench_prometheus_client(calls)
    rows.extend(prometheus_rows)
    print(environment())
    print()
    print(table(rows))
    if note:
        print()
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
