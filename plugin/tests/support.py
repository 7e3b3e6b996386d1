"""Shared test helpers: import path, a recording sidecar stub, a black hole, payload fixtures.

Everything here is standard library. Servers bind 127.0.0.1 on an ephemeral port.
"""

import contextlib
import enum
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
PLUGIN_ROOT = os.path.dirname(TESTS_DIR)
PLUGIN_DIR = os.path.join(PLUGIN_ROOT, "hermes_prometheus_bridge")
FIXTURES_DIR = os.path.join(TESTS_DIR, "fixtures")

# Importable both as ``plugin.tests.support`` (unittest discover from the repo root) and as a
# plain module (the driver script): put ``plugin/`` and ``plugin/tests/`` on the path.
for _path in (PLUGIN_ROOT, TESTS_DIR):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import hermes_prometheus_bridge  # noqa: E402  (needs the path above)
from hermes_prometheus_bridge import bridge as bridge_module  # noqa: E402
from hermes_prometheus_bridge import config as config_module  # noqa: E402
from hermes_prometheus_bridge import fields as fields_module  # noqa: E402


def load_fixture(name):
    with open(os.path.join(FIXTURES_DIR, name), "r", encoding="utf-8") as handle:
        return json.load(handle)


def appendix_a():
    """``{key: (hook, payload)}`` from the canonical sample payloads (fixtures/appendix_a_payloads.json)."""
    payloads = load_fixture("appendix_a_payloads.json")["payloads"]
    return {key: (entry["hook"], entry["payload"]) for key, entry in payloads.items()}


def observer_payloads():
    """``{key: (event, data)}`` for the envelope variant (seed 004 field lists)."""
    payloads = load_fixture("observer_envelope_payloads.json")["payloads"]
    return {key: (entry["event"], entry["data"]) for key, entry in payloads.items()}


class Color(str, enum.Enum):
    """A str subclass Hermes code could pass: cleaned as its plain value."""
    RED = "red"


class Level(enum.IntEnum):
    """An int subclass: cleaned as its plain value."""
    HIGH = 3


class NotSerializable(object):
    """Stands in for Hermes' normalized provider message object (not JSON-serializable)."""

    def __init__(self, secret=""):
        self.content = "assistant text " + secret

    def __repr__(self):
        return "<NotSerializable %s>" % self.content


class Request(object):
    def __init__(self, path, headers, body):
        self.received_at = time.monotonic()
        self.status = None
        self.path = path
        self.headers = headers
        self.body = body

    def lines(self):
        return [json.loads(line) for line in self.body.decode("utf-8").splitlines() if line]

    def events(self):
        return [line for line in self.lines() if line.get("event") != "plugin_heartbeat"]

    def heartbeats(self):
        return [line for line in self.lines() if line.get("event") == "plugin_heartbeat"]


class RecordingSidecar(object):
    """A sidecar stub: records every POST and answers what ``respond(request, index)`` says
    (``(status, headers_dict, body_bytes)``); by default 202 with an accepted count."""

    def __init__(self, respond=None, sock=None):
        self.requests = []
        self.answered = 0
        self.condition = threading.Condition()
        self.respond = respond or accept_all
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                request = Request(self.path, dict(self.headers.items()), body)
                with owner.condition:
                    index = owner.answered
                    owner.answered += 1
                status, headers, answer = owner.respond(request, index)
                request.status = status
                with owner.condition:
                    owner.requests.append(request)
                    owner.condition.notify_all()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(answer)
                self.close_connection = True

            def log_message(self, *_args):
                pass

        if sock is None:
            self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        else:
            # Listen on a port this process already holds (closed_port): never a released one.
            self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
            self.server.socket.close()
            self.server.socket = sock
            self.server.server_address = sock.getsockname()
            self.server.server_activate()
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d/v1/events" % self.port
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        self.close()

    # -- what arrived ---------------------------------------------------------------------

    def snapshot(self):
        with self.condition:
            return list(self.requests)

    def events(self, accepted_only=False):
        """Event lines (no heartbeats) in arrival order; optionally only from 2xx answers."""
        found = []
        for request in self.snapshot():
            if accepted_only and not 200 <= request.status < 300:
                continue
            found.extend(request.events())
        return found

    def heartbeats(self):
        found = []
        for request in self.snapshot():
            found.extend(request.heartbeats())
        return found

    def raw_bytes(self):
        return b"".join(
            json.dumps(sorted(r.headers.items())).encode() + r.body for r in self.snapshot())

    def wait_for(self, predicate, timeout=5.0):
        """Wait until ``predicate(requests)`` is true; returns the requests (or raises)."""
        deadline = time.monotonic() + timeout
        with self.condition:
            while not predicate(list(self.requests)):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError("sidecar stub: condition not met in %.1fs (%d requests)"
                                         % (timeout, len(self.requests)))
                self.condition.wait(remaining)
            return list(self.requests)


def accept_all(request, _index):
    count = len(request.lines())
    return 202, {"Content-Type": "application/json"}, json.dumps(
        {"accepted": count, "rejected": 0, "errors": []}).encode()


def scripted(statuses, headers=None):
    """Answer ``statuses[i]`` to the i-th request, then 202 for every later one."""

    def respond(request, index):
        if index < len(statuses):
            return statuses[index], dict(headers or {}), b"{}"
        return accept_all(request, index)

    return respond


class BlackHole(object):
    """Accepts TCP connections and never answers (a hung sidecar)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d/v1/events" % self.port
        self.accepted = []
        self._stop = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        self.sock.settimeout(0.1)
        while not self._stop:
            try:
                connection, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.accepted.append(connection)  # held open, never read or answered

    def close(self):
        self._stop = True
        self.thread.join(1)
        for connection in self.accepted:
            connection.close()
        self.sock.close()


def closed_port():
    """A loopback port held bound but not listening: a connection is refused, as where no
    sidecar runs, and no other process can take the port meanwhile. ``(socket, port, url)``;
    hand the socket to ``RecordingSidecar(sock=...)`` to start listening there."""
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.bind(("127.0.0.1", 0))
    port = held.getsockname()[1]
    return held, port, "http://127.0.0.1:%d/v1/events" % port


_HELD = []


def unused_port_url():
    """A loopback URL where nothing listens (``closed_port``, held until the process exits)."""
    held, port, url = closed_port()
    _HELD.append(held)
    return port, url


def fast_config(url, **overrides):
    """A config with test-friendly timings (tens of milliseconds)."""
    values = dict(
        url=url,
        flush_interval=0.01,
        timeout=1.0,
        heartbeat_interval=60.0,
        backoff_initial=0.02,
        backoff_max=0.1,
        shutdown_timeout=1.0,
        flush_timeout=1.0,
    )
    values.update(overrides)
    return config_module.DEFAULTS._replace(**values)


def fast_env(url, **extra):
    """Environment for ``register(ctx)`` with test-friendly timings."""
    env = {
        "HERMES_SIDECAR_URL": url,
        "HERMES_SIDECAR_FLUSH_INTERVAL": "0.01",
        "HERMES_SIDECAR_TIMEOUT": "1",
        "HERMES_SIDECAR_HEARTBEAT_INTERVAL": "60",
    }
    env.update(extra)
    return env


@contextlib.contextmanager
def patched_environ(values, remove=()):
    """Set ``values`` (and unset ``remove`` plus every other HERMES_SIDECAR_* variable)."""
    saved = dict(os.environ)
    try:
        for key in list(os.environ):
            if key.startswith("HERMES_SIDECAR_") or key in remove:
                del os.environ[key]
        os.environ.update(values)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def sender_threads():
    """The bridge sender threads alive in this process."""
    return [t for t in threading.enumerate() if t.name == "hermes-prometheus-bridge"]


def wait_until(predicate, timeout=5.0, interval=0.005):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in %.1fs" % timeout)
        time.sleep(interval)


__all__ = [
    "hermes_prometheus_bridge", "bridge_module", "config_module", "fields_module",
]
