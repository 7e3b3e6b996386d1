#!/usr/bin/env python3
"""Host CPU of the bridge plugin against exporting in process with ``prometheus_client``.

    /usr/bin/python3 bench/plugin_host_cpu.py [--rounds 3] [--events 6000] [--rate 2000] [--quick]

One *logical event* is one ``post_api_request`` plus one ``post_tool_call`` callback call with
realistic Hermes keyword arguments. Every phase calls the same two callbacks, at the same pacing
(``--rate`` logical events per second, in bursts every ``--tick-ms``), in this one Python process:

* ``plugin, sidecar up``   - the real plugin (``register(ctx)`` path, default settings) sending
                              to the real sidecar binary (``node dist/main.js``, started here);
                              CPU counted until the sidecar acknowledged every event;
* ``plugin, sidecar down`` - the same with nothing listening (buffered, retried, never sent);
* ``prometheus_client``    - the same metric updates done in process (Counter/Histogram);
* ``control``              - empty callbacks: the pacing loop and timers alone.

Measured per phase: whole-process CPU (``time.process_time``: agent thread + sender thread + the
loop), and agent-thread CPU per logical event (``time.thread_time`` around the two calls;
median). "net" figures subtract the control phase of the same round (pacing loop, timer calls,
keyword-argument unpacking), which is Hermes' cost either way. Phases alternate within a round
(the order rotates each round); medians over rounds are reported with the load average at the
start and the end.

Equal work is checked, or the run fails: the in-process registry must hold exactly N requests,
N tool calls and N x the token counts; the sidecar must have acknowledged 2N events and its
``/metrics`` must show N more API requests and N more tool calls after each "up" phase.

Prints a markdown report, then one ``HOSTCPU_RESULT <json>`` line for bench/sections/hostcpu.ts.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "plugin"))

import hermes_prometheus_bridge  # noqa: E402
from hermes_prometheus_bridge.bridge import Bridge  # noqa: E402
from hermes_prometheus_bridge.config import DEFAULTS  # noqa: E402

from plugin_callback import (  # noqa: E402  (same payloads and same in-process updates)
    import_prometheus_client, post_api_request_kwargs, post_tool_call_kwargs,
    prometheus_callbacks,
)

HOOKS = ("post_api_request", "post_tool_call")
TARGET_RATIO = 0.7
TARGET_AGENT_US = 2.0
RESULT_PREFIX = "HOSTCPU_RESULT "


class RecordingContext(object):
    """A Hermes-like ``ctx``: keeps the callbacks ``register``/``attach`` hands it."""

    def __init__(self):
        self.callbacks = {}

    def register_hook(self, hook, callback):
        self.callbacks[hook] = callback


# ------------------------------------------------------------------------------- the sidecar

class Sidecar(object):
    """``node dist/main.js`` on free loopback ports; ``ingest``/``web`` are base URLs."""

    def __init__(self):
        main = os.path.join(ROOT, "dist", "main.js")
        if not os.path.exists(main):
            raise SystemExit("dist/main.js is missing: run `npm run build` first")
        self.process = subprocess.Popen(
            ["node", main, "--web.listen-address=127.0.0.1:0",
             "--ingest.listen-address=127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            record = json.loads(line)
            if record.get("msg") == "listening":
                self.ingest = "http://%s" % record["ingest"]
                self.web = "http://%s" % record["web"]
                return
        self.close()
        raise SystemExit("the sidecar did not start")

    def metric_sum(self, name):
        with urllib.request.urlopen(self.web + "/metrics", timeout=10) as response:
            text = response.read().decode("utf-8")
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name + "{") or line.startswith(name + " "):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def close(self):
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()


def unused_port_url():
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return "http://127.0.0.1:%d/v1/events" % port


# ------------------------------------------------------------------------------- the phases

TICK_SECONDS = [0.01]


def call_ids(events):
    """Per logical event, its (turn id, API request id, tool call id), as Hermes makes them: a
    turn of four API calls, each call and tool call its own id; the session stays the same."""
    return [("t_%08x" % (index // 4), "t_%08x:api:%d" % (index // 4, index % 4),
             "toolu_%010x" % index) for index in range(events)]


def drive(callbacks, events, rate):
    """Call both callbacks ``events`` times, paced (a burst every tick, then sleep, as an agent
    thread alternates hooks with I/O waits); returns per-event agent-thread ns."""
    api, tool = callbacks
    api_kwargs, tool_kwargs = post_api_request_kwargs(), post_tool_call_kwargs()
    calls = call_ids(events)
    thread_ns = time.thread_time_ns
    samples = [0] * events
    burst = max(1, int(rate * TICK_SECONDS[0]))
    tick = burst / rate
    next_tick = time.perf_counter()
    index = 0
    while index < events:
        for _ in range(min(burst, events - index)):
            turn, request, call = calls[index]
            api_kwargs["turn_id"] = tool_kwargs["turn_id"] = turn
            api_kwargs["api_request_id"] = tool_kwargs["api_request_id"] = request
            tool_kwargs["tool_call_id"] = call
            before = thread_ns()
            api(**api_kwargs)
            tool(**tool_kwargs)
            samples[index] = thread_ns() - before
            index += 1
        next_tick += tick
        delay = next_tick - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
    return samples


def settle(done, seconds):
    """Idle until ``done()`` (at least ``seconds``, at most 10 s) so every phase gets the same
    quiet tail in which the sender thread may work."""
    started = time.monotonic()
    while time.monotonic() - started < 10:
        if time.monotonic() - started >= seconds and done():
            return True
        time.sleep(0.002)
    return done()


def plugin_phase(url, events, rate, tail, sidecar=None):
    bridge = Bridge(DEFAULTS._replace(url=url))
    context = RecordingContext()
    hermes_prometheus_bridge.attach(context, bridge)
    bridge.start()
    callbacks = (context.callbacks["post_api_request"], context.callbacks["post_tool_call"])
    before_metrics = None
    if sidecar is not None:
        before_metrics = (sidecar.metric_sum("hermes_api_requests_total"),
                          sidecar.metric_sum("hermes_tool_calls_total"))
    time.sleep(0.05)
    sender_clock = time.pthread_getcpuclockid(bridge._sender._thread.ident)
    sender_before = time.clock_gettime_ns(sender_clock)
    main_before = time.thread_time_ns()
    cpu_before = time.process_time_ns()
    samples = drive(callbacks, events, rate)
    if sidecar is not None:
        delivered = settle(lambda: bridge.stats()["events_delivered"] >= 2 * events, tail)
    else:
        delivered = settle(lambda: True, tail)
    cpu = time.process_time_ns() - cpu_before
    SPLIT[0] = ((time.thread_time_ns() - main_before) / 1000.0 / events,
                (time.clock_gettime_ns(sender_clock) - sender_before) / 1000.0 / events)
    stats = bridge.stats()
    bridge.shutdown(0.2)
    dropped = sum(sum(reasons.values()) for reasons in stats["dropped"].values())
    if sidecar is not None:
        if not delivered or stats["events_delivered"] != 2 * events:
            raise SystemExit("equal work check failed: delivered %d of %d events"
                             % (stats["events_delivered"], 2 * events))
        # The sidecar's accepted count includes the heartbeat lines that rode along.
        accepted = stats["sidecar_accepted"] - stats["heartbeats_sent"]
        if accepted != 2 * events or dropped:
            raise SystemExit("equal work check failed: sidecar accepted %d events of %d, %d "
                             "dropped" % (accepted, 2 * events, dropped))
        after = (sidecar.metric_sum("hermes_api_requests_total"),
                 sidecar.metric_sum("hermes_tool_calls_total"))
        if (after[0] - before_metrics[0], after[1] - before_metrics[1]) != (events, events):
            raise SystemExit("equal work check failed: /metrics moved by %s, wanted %d each"
                             % ((after[0] - before_metrics[0], after[1] - before_metrics[1]),
                                events))
    else:
        # After shutdown every event is either delivered or counted as dropped (send_failed
        # while the buffer overflowed, shutdown for what it still held).
        final = bridge.stats()
        lost = sum(sum(reasons.values()) for reasons in final["dropped"].values())
        if final["events_delivered"] + lost != 2 * events:
            raise SystemExit("equal work check failed (sidecar down): %d delivered + %d dropped"
                             " != %d" % (final["events_delivered"], lost, 2 * events))
    return cpu, samples, stats


def prometheus_phase(module, events, rate, tail):
    callbacks = prometheus_callbacks(module)
    registry = LAST_REGISTRY[0]  # the registry prometheus_callbacks just built
    pair = (callbacks["post_api_request"], callbacks["post_tool_call"])
    time.sleep(0.05)
    cpu_before = time.process_time_ns()
    samples = drive(pair, events, rate)
    settle(lambda: True, tail)
    cpu = time.process_time_ns() - cpu_before
    check_prometheus_counts(registry, events)
    return cpu, samples


def check_prometheus_counts(registry, events):
    """Exactly N requests, N tool calls, N x tokens in the phase's registry (or fail)."""
    values = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name.endswith("_total") or sample.name.endswith("_count"):
                values[sample.name] = values.get(sample.name, 0) + sample.value
    usage = post_api_request_kwargs()["usage"]
    tokens = sum(usage[key] for key in ("input_tokens", "cache_read_tokens",
                                        "cache_write_tokens", "output_tokens"))
    wanted = {
        "hermes_api_requests_total": events,
        "hermes_api_request_duration_seconds_count": events,
        "hermes_api_finish_reasons_total": events,
        "hermes_tokens_total": events * tokens,
        "hermes_tool_calls_total": events,
        "hermes_tool_call_duration_seconds_count": events,
    }
    for name, value in wanted.items():
        if values.get(name) != value:
            raise SystemExit("equal work check failed: in-process %s = %s, wanted %s"
                             % (name, values.get(name), value))


# The registry prometheus_callbacks creates (CollectorRegistry is wrapped in main()).
LAST_REGISTRY = [None]
# (main thread µs, sender thread µs) per logical event of the last plugin phase.
SPLIT = [(0.0, 0.0)]


def control_phase(events, rate, tail):
    def noop(**_kwargs):
        return None

    time.sleep(0.05)
    cpu_before = time.process_time_ns()
    samples = drive((noop, noop), events, rate)
    settle(lambda: True, tail)
    return time.process_time_ns() - cpu_before, samples


# ------------------------------------------------------------------------------- reporting

def median(values):
    return statistics.median(values) if values else float("nan")


def fmt(value, digits=2):
    return ("%." + str(digits) + "f") % value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=6000, help="logical events per phase")
    parser.add_argument("--rate", type=float, default=2000.0,
                        help="logical events per second (two hook calls each)")
    parser.add_argument("--tail", type=float, default=0.5,
                        help="seconds of idle tail after the last call, in every phase")
    parser.add_argument("--tick-ms", type=float, default=10.0,
                        help="pacing: one burst of calls every this many milliseconds")
    parser.add_argument("--quick", action="store_true", help="smoke: 2 rounds of 300 events")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.events = 2, 300
    TICK_SECONDS[0] = args.tick_ms / 1000.0
    module, version, origin = import_prometheus_client()
    if module is None:
        raise SystemExit("prometheus_client is not importable by %s (Debian: apt-get install "
                         "python3-prometheus-client, then run /usr/bin/python3)" % sys.executable)
    original = module.CollectorRegistry

    class RememberingRegistry(original):
        def __init__(self, *a, **k):
            original.__init__(self, *a, **k)
            LAST_REGISTRY[0] = self

    module.CollectorRegistry = RememberingRegistry
    load_start = os.getloadavg()
    sidecar = Sidecar()
    down_url = unused_port_url()
    phases = ("up", "down", "prometheus_client", "control")
    cpu = {phase: [] for phase in phases}
    agent = {phase: [] for phase in phases}
    posts = []
    split = {"up": [], "down": []}
    try:
        # Warm-up (imports, first connections, JIT-free but cache-warm), not reported.
        plugin_phase(sidecar.ingest + "/v1/events", min(500, args.events), args.rate, 0.3, sidecar)
        prometheus_phase(module, min(500, args.events), args.rate, 0.0)
        for round_index in range(args.rounds):
            order = phases[round_index % 4:] + phases[:round_index % 4]
            for phase in order:
                if phase == "up":
                    used, samples, stats = plugin_phase(
                        sidecar.ingest + "/v1/events", args.events, args.rate, args.tail, sidecar)
                    posts.append(stats["posts"])
                    split["up"].append(SPLIT[0])
                elif phase == "down":
                    used, samples, _stats = plugin_phase(down_url, args.events, args.rate,
                                                         args.tail)
                    split["down"].append(SPLIT[0])
                elif phase == "prometheus_client":
                    used, samples = prometheus_phase(module, args.events, args.rate, args.tail)
                else:
                    used, samples = control_phase(args.events, args.rate, args.tail)
                cpu[phase].append(used / 1000.0 / args.events)
                agent[phase].append(median(samples) / 1000.0)
    finally:
        sidecar.close()
    load_end = os.getloadavg()

    def net(phase, table):
        return [value - control for value, control in zip(table[phase], table["control"])]

    per_round_ratio = {
        phase: [p / q for p, q in zip(net(phase, cpu), net("prometheus_client", cpu))]
        for phase in ("up", "down")
    }
    result = {
        "python": sys.executable, "python_version": sys.version.split()[0],
        "prometheus_client": "%s (%s)" % (version, origin),
        "rounds": args.rounds, "events": args.events, "rate": args.rate,
        "tick_ms": args.tick_ms,
        "load_start": load_start, "load_end": load_end,
        "cpu_us": {phase: median(cpu[phase]) for phase in phases},
        "cpu_net_us": {phase: median(net(phase, cpu)) for phase in phases if phase != "control"},
        "agent_us": {phase: median(agent[phase]) for phase in phases},
        "agent_net_us": {phase: median(net(phase, agent)) for phase in phases
                         if phase != "control"},
        "ratio": {phase: median(per_round_ratio[phase]) for phase in ("up", "down")},
        "posts_per_phase": median(posts),
        "main_thread_us": {phase: median([m for m, _ in split[phase]]) for phase in split},
        "sender_thread_us": {phase: median([t for _, t in split[phase]]) for phase in split},
    }
    result["met"] = {
        "ratio_up": result["ratio"]["up"] <= TARGET_RATIO,
        "ratio_down": result["ratio"]["down"] <= TARGET_RATIO,
        "agent": max(result["agent_net_us"]["up"], result["agent_net_us"]["down"])
        <= TARGET_AGENT_US,
    }
    print(report(result, cpu, agent))
    print(RESULT_PREFIX + json.dumps(result))


def report(result, cpu, agent):
    lines = [
        "Python %s (`%s`), prometheus_client %s; %d rounds x %d logical events per phase at "
        "%s logical events/s (a burst every %s ms); load average (1/5/15 min) at start %s, at end %s."
        % (result["python_version"], result["python"], result["prometheus_client"],
           result["rounds"], result["events"], "{:,.0f}".format(result["rate"]),
           fmt(result["tick_ms"], 0),
           " / ".join(fmt(v) for v in result["load_start"]),
           " / ".join(fmt(v) for v in result["load_end"])),
        "",
        "| phase | process CPU µs / logical event (median) | net of control | agent thread µs "
        "(median per event) | net of control | per-round process CPU |",
        "|---|---:|---:|---:|---:|---|",
    ]
    labels = {"up": "plugin, sidecar up", "down": "plugin, sidecar down",
              "prometheus_client": "in-process prometheus_client", "control": "control (no-op)"}
    for phase in ("up", "down", "prometheus_client", "control"):
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            labels[phase], fmt(result["cpu_us"][phase]),
            fmt(result["cpu_net_us"][phase]) if phase != "control" else "-",
            fmt(result["agent_us"][phase]),
            fmt(result["agent_net_us"][phase]) if phase != "control" else "-",
            ", ".join(fmt(v, 1) for v in cpu[phase])))
    lines += [
        "",
        "| target | wanted | measured | verdict |",
        "|---|---|---|---|",
        "| whole-process CPU, plugin (sidecar up) / prometheus_client, net | <= %.1fx | %sx | %s |"
        % (TARGET_RATIO, fmt(result["ratio"]["up"]), "met" if result["met"]["ratio_up"]
           else "**missed**"),
        "| whole-process CPU, plugin (sidecar down) / prometheus_client, net | <= %.1fx | %sx | "
        "%s |" % (TARGET_RATIO, fmt(result["ratio"]["down"]),
                  "met" if result["met"]["ratio_down"] else "**missed**"),
        "| agent-thread median per logical event, net (worse of up/down) | <= %.1f µs | %s µs | "
        "%s |" % (TARGET_AGENT_US, fmt(max(result["agent_net_us"]["up"],
                                           result["agent_net_us"]["down"])),
                  "met" if result["met"]["agent"] else "**missed**"),
        "",
        "Equal work verified in every phase (in-process counts, sidecar acknowledgements and "
        "/metrics deltas). POSTs per 'up' phase (median): %s." % fmt(result["posts_per_phase"], 0),
        "",
        "Where the plugin's CPU goes (per logical event, medians; the main thread also runs the "
        "pacing loop that the control phase measures): main thread %s µs (up) / %s µs (down), "
        "sender thread %s µs (up) / %s µs (down); control phase whole process %s µs."
        % (fmt(result["main_thread_us"]["up"]), fmt(result["main_thread_us"]["down"]),
           fmt(result["sender_thread_us"]["up"]), fmt(result["sender_thread_us"]["down"]),
           fmt(result["cpu_us"]["control"])),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
