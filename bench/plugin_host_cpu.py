#!/usr/bin/env python3
"""Host CPU of the bridge plugin against exporting in process with ``prometheus_client``.

    /usr/bin/python3 bench/plugin_host_cpu.py [--rounds 3] [--events 6000] [--slice 400]
                                              [--rate 2000] [--quick]

One *logical event* is one ``post_api_request`` plus one ``post_tool_call`` callback call with
realistic Hermes keyword arguments. Four variants handle the same calls, at the same pacing
(each ``--rate`` logical events per second on average, in bursts every ``--tick-ms``), in this
one Python process:

* ``plugin, sidecar up``   - the real plugin (``attach(ctx, bridge)``, default settings) sending
                              to the real sidecar binary (``node dist/main.js``, started here);
* ``plugin, sidecar down`` - the same with nothing listening (buffered, retried, evicted);
* ``prometheus_client``    - the same metric updates done in process (Counter/Histogram);
* ``control``              - empty callbacks: the pacing loop and the call itself.

The variants live for the whole run and take turns every ``--slice`` logical events, the order
rotating every cycle: this machine's speed changes within seconds (a phase-by-phase design read
the control's CPU 2x apart between rounds), and turns of ~50 ms let every change reach all four
alike. A variant's slices run at four times ``--rate`` so that its average rate, and the size of
the plugin's batches, are what they would be if it ran alone.

A variant's CPU is what the thread clocks attribute to it: the main thread's CPU in its own
slices (``time.thread_time``) plus, for a plugin, all of its sender thread's CPU in the round
(``pthread_getcpuclockid``), wherever the sender ran; a round ends once the sidecar acknowledged
everything the "up" plugin took, so its last send is inside the round. Whole-process CPU is read
too and what no thread clock holds is printed. "net" figures subtract the control (pacing loop,
timer calls, keyword-argument unpacking: Hermes' cost either way); the target is the median of
the rounds' net ratios. Agent-thread CPU per logical event is ``time.thread_time``
around the two calls, median per round.

Equal work is checked, or the run fails: after every round the sidecar must have acknowledged 2N
events of the "up" plugin and its ``/metrics`` must show N API requests and N tool calls more
than at the start; at the end the in-process registry must hold exactly N requests, N tool calls
and N x the token counts, and the "down" plugin's delivered plus counted drops must be 2N.

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


# ------------------------------------------------------------------------------- the variants

TICK_SECONDS = [0.01]


class Variant(object):
    """One way of handling the calls: its two callbacks, the threads it adds to the process
    (``sender``: a CPU clock id, or ``None``), and what one round measured."""

    def __init__(self, name, callbacks, sender=None):
        self.name = name
        self.callbacks = callbacks
        self.sender = sender
        self.calls = 0
        self.begin_round()

    def begin_round(self):
        self.main_ns = 0
        self.samples = []
        self.sender_before = (time.clock_gettime_ns(self.sender)
                              if self.sender is not None else 0)

    def round_cpu_ns(self):
        """Main-thread CPU in this variant's slices plus every nanosecond its sender thread
        used during the round, wherever that fell."""
        sender = (time.clock_gettime_ns(self.sender) - self.sender_before
                  if self.sender is not None else 0)
        return self.main_ns, sender


def call_ids(first, count):
    """Per logical event, its (turn id, API request id, tool call id), as Hermes makes them: a
    turn of four API calls, each call and tool call its own id; the session stays the same.
    Numbered from ``first`` so that no id repeats over the run."""
    return [("t_%08x" % (index // 4), "t_%08x:api:%d" % (index // 4, index % 4),
             "toolu_%010x" % index) for index in range(first, first + count)]


def drive_slice(variant, count, burst, tick, next_tick):
    """``count`` logical events through ``variant``, a burst per tick (sleeping between
    bursts, as an agent thread alternates hooks with I/O waits); returns the next tick."""
    api, tool = variant.callbacks
    api_kwargs, tool_kwargs = post_api_request_kwargs(), post_tool_call_kwargs()
    calls = call_ids(variant.calls, count)
    variant.calls += count
    thread_ns = time.thread_time_ns
    samples = variant.samples
    slice_start = thread_ns()
    index = 0
    while index < count:
        for _ in range(min(burst, count - index)):
            turn, request, call = calls[index]
            api_kwargs["turn_id"] = tool_kwargs["turn_id"] = turn
            api_kwargs["api_request_id"] = tool_kwargs["api_request_id"] = request
            tool_kwargs["tool_call_id"] = call
            before = thread_ns()
            api(**api_kwargs)
            tool(**tool_kwargs)
            samples.append(thread_ns() - before)
            index += 1
        next_tick += tick
        delay = next_tick - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
    variant.main_ns += thread_ns() - slice_start
    return next_tick


def run_round(variants, events, rate, slice_events, rotation):
    """Every variant gets ``events`` logical events in slices of ``slice_events``, the
    variants taking turns slice by slice (the order rotating every cycle), so that a change in
    the machine's speed during the round reaches all of them alike."""
    # Each variant runs a quarter of the time: its slices go four times faster, so that on
    # average each sees ``rate`` (the sender's batches are as large as if it ran alone).
    slice_rate = rate * len(variants)
    burst = max(1, int(slice_rate * TICK_SECONDS[0]))
    tick = burst / slice_rate
    for variant in variants:
        variant.begin_round()
    next_tick = time.perf_counter()
    done = 0
    cycle = rotation
    while done < events:
        count = min(slice_events, events - done)
        shift = cycle % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            next_tick = drive_slice(variant, count, burst, tick, next_tick)
        done += count
        cycle += 1


def wait_until(done, seconds=10.0):
    """Poll ``done()`` for at most ``seconds``; its last answer."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.002)
    return done()


def sender_clock(bridge):
    return time.pthread_getcpuclockid(bridge._sender._thread.ident)


def start_bridge(url):
    bridge = Bridge(DEFAULTS._replace(url=url))
    context = RecordingContext()
    hermes_prometheus_bridge.attach(context, bridge)
    bridge.start()
    callbacks = (context.callbacks["post_api_request"], context.callbacks["post_tool_call"])
    return bridge, callbacks


def dropped_events(stats):
    return sum(sum(reasons.values()) for reasons in stats["dropped"].values())


def check_up(bridge, sidecar, events, metrics_before):
    """Everything the "up" bridge took was acknowledged and counted once by the sidecar."""
    def accepted_events(stats):
        # The sidecar's accepted count includes the heartbeat lines; a heartbeat that rode with
        # a batch is counted as sent a moment before the batch's answer is counted.
        return stats["sidecar_accepted"] - stats["heartbeats_sent"]

    if not wait_until(lambda: bridge.stats()["events_delivered"] >= 2 * events
                      and accepted_events(bridge.stats()) >= 2 * events):
        raise SystemExit("equal work check failed: delivered %d of %d events, the sidecar "
                         "accepted %d" % (bridge.stats()["events_delivered"], 2 * events,
                                          accepted_events(bridge.stats())))
    stats = bridge.stats()
    accepted = accepted_events(stats)
    if stats["events_delivered"] != 2 * events or accepted != 2 * events or dropped_events(stats):
        raise SystemExit("equal work check failed: sidecar accepted %d events of %d, %d "
                         "dropped" % (accepted, 2 * events, dropped_events(stats)))
    moved = (sidecar.metric_sum("hermes_api_requests_total") - metrics_before[0],
             sidecar.metric_sum("hermes_tool_calls_total") - metrics_before[1])
    if moved != (events, events):
        raise SystemExit("equal work check failed: /metrics moved by %s, wanted %d each"
                         % (moved, events))
    return stats


def check_down(bridge, events):
    """After shutdown every event the "down" bridge took is delivered or counted as dropped
    (send_failed while its buffer overflowed, shutdown for what it still held)."""
    bridge.shutdown(0.2)
    final = bridge.stats()
    lost = dropped_events(final)
    if final["events_delivered"] + lost != 2 * events:
        raise SystemExit("equal work check failed (sidecar down): %d delivered + %d dropped"
                         " != %d" % (final["events_delivered"], lost, 2 * events))
    return final


def check_prometheus_counts(registry, events):
    """Exactly N requests, N tool calls, N x tokens in the registry (or fail)."""
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


def noop(**_kwargs):
    return None


# ------------------------------------------------------------------------------- reporting

def median(values):
    return statistics.median(values) if values else float("nan")


def fmt(value, digits=2):
    return ("%." + str(digits) + "f") % value


def prometheus_variant(module):
    """The in-process alternative's callbacks and the registry they write."""
    registry = module.CollectorRegistry()
    callbacks = prometheus_callbacks(module, registry)
    return registry, (callbacks["post_api_request"], callbacks["post_tool_call"])


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=6000,
                        help="logical events per variant per round")
    parser.add_argument("--slice", type=int, default=400,
                        help="logical events a variant runs before the next one takes its turn")
    parser.add_argument("--rate", type=float, default=2000.0,
                        help="logical events per second per variant, on average (two hook "
                        "calls each)")
    parser.add_argument("--tick-ms", type=float, default=10.0,
                        help="pacing: one burst of calls every this many milliseconds")
    parser.add_argument("--quick", action="store_true", help="smoke: 2 rounds of 300 events")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.events = 2, 300
    TICK_SECONDS[0] = args.tick_ms / 1000.0
    return args


def measure(args, module, sidecar):
    """Warm up, run the rounds, check equal work; per round and variant the CPU figures."""
    up_bridge, up_callbacks = start_bridge(sidecar.ingest + "/v1/events")
    down_bridge, down_callbacks = start_bridge(unused_port_url())
    registry, prometheus_pair = prometheus_variant(module)
    variants = [Variant("up", up_callbacks, sender_clock(up_bridge)),
                Variant("down", down_callbacks, sender_clock(down_bridge)),
                Variant("prometheus_client", prometheus_pair),
                Variant("control", (noop, noop))]
    metrics_before = (sidecar.metric_sum("hermes_api_requests_total"),
                      sidecar.metric_sum("hermes_tool_calls_total"))
    rows = []
    try:
        # Warm-up (imports, first connections, caches), not reported.
        run_round(variants, min(500, args.events), args.rate, args.slice, 0)
        check_up(up_bridge, sidecar, variants[0].calls, metrics_before)
        for round_index in range(args.rounds):
            posts_before = up_bridge.stats()["posts"]
            process_before = time.process_time_ns()
            run_round(variants, args.events, args.rate, args.slice, round_index)
            # The "up" sender's last batch belongs to the round: wait for its acknowledgement
            # before reading the clocks.
            wait_until(lambda: up_bridge.stats()["events_delivered"] >= 2 * variants[0].calls)
            row = {variant.name: variant.round_cpu_ns() for variant in variants}
            process = time.process_time_ns() - process_before
            agent = {variant.name: median(variant.samples) for variant in variants}
            stats = check_up(up_bridge, sidecar, variants[0].calls, metrics_before)
            rows.append({"cpu": row, "process": process, "agent": agent,
                         "posts": stats["posts"] - posts_before})
    finally:
        up_bridge.shutdown(0.2)
        check_down(down_bridge, variants[1].calls)
    check_prometheus_counts(registry, variants[2].calls)
    return rows


def summarize_rounds(rows, events):
    """Per-event figures (µs) per round, their medians and the per-round ratios."""
    def per_event(ns):
        return ns / 1000.0 / events

    names = ("up", "down", "prometheus_client", "control")
    cpu = {name: [per_event(sum(row["cpu"][name])) for row in rows] for name in names}
    agent = {name: [row["agent"][name] / 1000.0 for row in rows] for name in names}

    def net(table, name):
        return [value - control for value, control in zip(table[name], table["control"])]

    ratio = {name: [p / q for p, q in zip(net(cpu, name), net(cpu, "prometheus_client"))]
             for name in ("up", "down")}
    attributed = [sum(sum(pair) for pair in row["cpu"].values()) for row in rows]
    return {
        "cpu": cpu, "agent": agent, "ratios": ratio,
        "cpu_us": {name: median(cpu[name]) for name in names},
        "cpu_net_us": {name: median(net(cpu, name)) for name in names if name != "control"},
        "agent_us": {name: median(agent[name]) for name in names},
        "agent_net_us": {name: median(net(agent, name)) for name in names if name != "control"},
        "ratio": {name: median(ratio[name]) for name in ratio},
        "posts_per_phase": median([row["posts"] for row in rows]),
        "main_thread_us": {name: median([per_event(row["cpu"][name][0]) for row in rows])
                           for name in ("up", "down")},
        "sender_thread_us": {name: median([per_event(row["cpu"][name][1]) for row in rows])
                             for name in ("up", "down")},
        "unattributed_us": median([per_event(row["process"] - share)
                                   for row, share in zip(rows, attributed)]),
    }


def main():
    args = parse_args()
    module, version, origin = import_prometheus_client()
    if module is None:
        raise SystemExit("prometheus_client is not importable by %s (Debian: apt-get install "
                         "python3-prometheus-client, then run /usr/bin/python3)" % sys.executable)
    load_start = os.getloadavg()
    sidecar = Sidecar()
    try:
        rows = measure(args, module, sidecar)
    finally:
        sidecar.close()
    load_end = os.getloadavg()
    summary = summarize_rounds(rows, args.events)
    result = {
        "python": sys.executable, "python_version": sys.version.split()[0],
        "prometheus_client": "%s (%s)" % (version, origin),
        "rounds": args.rounds, "events": args.events, "slice": args.slice, "rate": args.rate,
        "tick_ms": args.tick_ms, "load_start": load_start, "load_end": load_end,
    }
    result.update({key: value for key, value in summary.items()
                   if key not in ("cpu", "agent", "ratios")})
    result["met"] = {
        "ratio_up": result["ratio"]["up"] <= TARGET_RATIO,
        "ratio_down": result["ratio"]["down"] <= TARGET_RATIO,
        "agent": max(result["agent_net_us"]["up"], result["agent_net_us"]["down"])
        <= TARGET_AGENT_US,
    }
    print(report(result, summary))
    print(RESULT_PREFIX + json.dumps(result))


def report(result, summary):
    cpu, ratios = summary["cpu"], summary["ratios"]
    lines = [
        "Python %s (`%s`), prometheus_client %s; %d rounds x %d logical events per variant at "
        "%s logical events/s each on average (a burst every %s ms), the variants taking turns "
        "every %d logical events; load average (1/5/15 min) at start %s, at end %s."
        % (result["python_version"], result["python"], result["prometheus_client"],
           result["rounds"], result["events"], "{:,.0f}".format(result["rate"]),
           fmt(result["tick_ms"], 0), result["slice"],
           " / ".join(fmt(v) for v in result["load_start"]),
           " / ".join(fmt(v) for v in result["load_end"])),
        "",
        "| variant | CPU µs / logical event (median) | net of control | agent thread µs "
        "(median per event) | net of control | per-round CPU |",
        "|---|---:|---:|---:|---:|---|",
    ]
    labels = {"up": "plugin, sidecar up", "down": "plugin, sidecar down",
              "prometheus_client": "in-process prometheus_client", "control": "control (no-op)"}
    for name in ("up", "down", "prometheus_client", "control"):
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            labels[name], fmt(result["cpu_us"][name]),
            fmt(result["cpu_net_us"][name]) if name != "control" else "-",
            fmt(result["agent_us"][name]),
            fmt(result["agent_net_us"][name]) if name != "control" else "-",
            ", ".join(fmt(v, 1) for v in cpu[name])))
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
        "Per-round ratios, net (sidecar up): %s; (sidecar down): %s."
        % (", ".join(fmt(v) for v in ratios["up"]), ", ".join(fmt(v) for v in ratios["down"])),
        "",
        "Equal work verified (in-process counts, sidecar acknowledgements and /metrics deltas "
        "after every round, delivered + counted drops of the 'down' bridge after shutdown). "
        "POSTs per round, sidecar up (median): %s." % fmt(result["posts_per_phase"], 0),
        "",
        "Where the plugin's CPU goes (per logical event, medians): main thread in its slices %s "
        "µs (up) / %s µs (down), sender thread %s µs (up) / %s µs (down). Process CPU no "
        "variant's thread clock holds (the waits between rounds, the checks' HTTP requests, the "
        "interpreter's own threads): %s µs per logical event of one variant."
        % (fmt(result["main_thread_us"]["up"]), fmt(result["main_thread_us"]["down"]),
           fmt(result["sender_thread_us"]["up"]), fmt(result["sender_thread_us"]["down"]),
           fmt(result["unattributed_us"])),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
