"""The bounded queue between Hermes' threads and the sidecar, and the thread that drains it.

Agent threads only run the callbacks built by :meth:`Bridge.hook_callback` /
:meth:`Bridge.observer_callback`: copy allow-listed references, stamp ``time.time()``, append to
a ``collections.deque`` (atomic under the GIL, no lock), return ``None``. Everything that costs
more (cleaning values, JSON, HTTP, retries, heartbeats) happens on one daemon sender thread.

Sequence numbers are assigned by the sender thread as it takes events off the queue, in queue
order. That is still "one number per event that entered the queue" (a ``queue_full`` drop never
gets one), but two agent threads racing between taking a number and appending can no longer put
the numbers out of order, and no lock is needed on the hot path. An event whose serialization
fails gets no number either: it never leaves the process, and it is already counted as
``serialize_error``, so a gap in the numbers means exactly "sent but never acknowledged".

Every event that is not delivered is counted once, under its hook, with one reason:
``queue_full`` (callback side), ``callback_error`` (callback side), ``serialize_error``,
``send_failed`` (refused by the sidecar, or evicted from the full retry buffer) and
``shutdown`` (still undelivered when the process exits). The counters travel in the
``plugin_heartbeat`` line.
"""

import collections
import json
import logging
import random
import threading
import time
import uuid

from . import fields
from .transport import DELIVERED, RETRY, parse_endpoint, post_ndjson

logger = logging.getLogger("hermes_prometheus_bridge")

PLUGIN_VERSION = "0.1.0"
HEARTBEAT_EVENT = "plugin_heartbeat"

QUEUE_FULL = "queue_full"
SERIALIZE_ERROR = "serialize_error"
CALLBACK_ERROR = "callback_error"
SEND_FAILED = "send_failed"
SHUTDOWN = "shutdown"
DROP_REASONS = (QUEUE_FULL, SERIALIZE_ERROR, CALLBACK_ERROR, SEND_FAILED, SHUTDOWN)

# Part of the exit budget kept for the final heartbeat, which carries the shutdown counts.
_HEARTBEAT_RESERVE_FRACTION = 0.25
# Events serialized between voluntary GIL releases (~1 ms of work) while draining a backlog;
# otherwise an agent thread could wait the full 5 ms switch interval for the GIL.
_YIELD_EVERY = 100
# A Retry-After of 0 must not turn into a busy loop.
_MIN_RETRY_DELAY = 0.05

# A buffered event is a plain tuple (creating a namedtuple costs a Python-level call per event).
SEQ, HOOK, LINE = 0, 1, 2


def encode_event(hook, observed_at, instance, seq, data):
    """One NDJSON line (bytes, no newline) for an event; raises when it cannot be encoded."""
    envelope = {
        "event": hook,
        "observed_at": observed_at,
        "instance": instance,
        "seq": seq,
        "data": fields.clean_data(data),
    }
    return json.dumps(envelope, allow_nan=False, separators=(",", ":")).encode("ascii")


def _count_by_hook(events):
    counts = {}
    for event in events:
        counts[event[HOOK]] = counts.get(event[HOOK], 0) + 1
    return counts


def _seconds_for_json(value):
    """``5`` rather than ``5.0`` when the interval is whole, as the wire examples show."""
    return int(value) if float(value).is_integer() else value


class Bridge:
    """Queue, drop counters and sender thread of one plugin instance (one per process)."""

    def __init__(self, config, encode=encode_event, post=post_ndjson, instance=None):
        self.config = config
        self.endpoint = parse_endpoint(config.url)
        self.instance = instance or uuid.uuid4().hex
        # Agent threads append (hook, observed_at, data); the sender thread pops from the left.
        self.queue = collections.deque()
        self._encode = encode
        self._post = post
        # (seq, hook, line) oldest first: the retry buffer.
        self._pending = collections.deque()
        self._pending_lock = threading.Lock()
        self._counter_lock = threading.Lock()
        self._dropped = {}
        self._delivery = collections.Counter()
        self._next_seq = 1
        self._wake = threading.Event()
        self._state = threading.Condition()
        self._flush_requested = 0
        self._flush_served = 0
        self._stopping = False
        self._abandoned = False
        self._shutdown_deadline = None
        self._thread = None
        self._consecutive_failures = 0
        self._retry_at = 0.0
        self._next_heartbeat = 0.0
        # Highest seq a sidecar acknowledged. Heartbeats carry it so a sidecar that restarted
        # (and so lost its sequence state) counts events dropped from the buffer meanwhile.
        self._acked_seq = 0
        self._resync = False
        self._reported = set()

    # ------------------------------------------------------------------ agent-thread side

    def hook_callback(self, hook, allowed, error_flag=False):
        """A ``**kwargs`` callback for a flat Hermes hook that copies only ``allowed`` fields."""
        return self._enqueuers(hook, allowed, error_flag)[1]

    def finalize_callback(self, hook, allowed):
        """Like :meth:`hook_callback`, then a bounded best-effort flush (last-chance delivery)."""
        enqueue = self._enqueuers(hook, allowed, False)[0]
        flush = self.flush
        flush_timeout = self.config.flush_timeout

        def callback(**kwargs):
            enqueue(kwargs)
            try:
                flush(flush_timeout)
            except Exception:
                pass  # a flush is a courtesy: the sender thread delivers anyway
            return None

        callback.__name__ = "bridge_" + hook
        return callback

    def observer_callback(self, event, allowed, error_flag=False):
        """A callback for the envelope variant: fields come from ``hook.payload["data"]``."""
        enqueue = self._enqueuers(event, allowed, error_flag)[0]
        empty = {}

        def callback(hook, *_args, **_kwargs):
            try:
                data = hook.payload.get("data")
            except Exception:
                data = None  # an odd envelope still counts as one event of this name
            enqueue(empty if data is None else data)
            return None

        callback.__name__ = "bridge_observer_" + event
        return callback

    def _enqueuers(self, hook, allowed, error_flag):
        """The hot path, specialised per hook, as ``(enqueue(mapping), callback(**kwargs))``.

        A queued event is ``(hook, observed_at, names, values)``: ``values`` is
        ``list(map(source.get, names, MISSINGS))``, the allow-listed values in allow-list order
        (``MISSING`` where absent), looked up in C without a Python-level loop, and small enough
        for Python's small-object allocator. The sender thread turns it into a dict.

        The two bodies are the same; the ``**kwargs`` one is written out rather than calling
        ``enqueue`` because a Python call is a measurable share of a ~2 us callback. Every name
        is a closure local.
        """
        queue = self.queue
        append = queue.append
        capacity = self.config.queue_size
        batch_trigger = self.config.batch_size
        clock = time.time
        count_drop = self.count_drop
        bridge = self
        names = tuple(allowed)
        missings = (fields.MISSING,) * len(names)
        usage_at = names.index("usage") if "usage" in names else -1
        error_at = names.index("error") if error_flag and "error" in names else -1
        snapshot_usage = fields.snapshot_usage
        to_flag = fields.error_flag

        def enqueue(source):
            try:
                depth = len(queue)
                if depth >= capacity:
                    count_drop(hook, QUEUE_FULL)
                    return
                values = list(map(source.get, names, missings))
                if usage_at >= 0:
                    values[usage_at] = snapshot_usage(values[usage_at])
                if error_at >= 0 and values[error_at] is not fields.MISSING:
                    values[error_at] = to_flag(values[error_at])
                append((hook, clock(), names, values))
                if depth + 1 == batch_trigger:
                    bridge._wake.set()  # a full batch is waiting: do not wait for the interval
            except Exception:
                # Never raise into Hermes. (KeyboardInterrupt is left alone on purpose.)
                count_drop(hook, CALLBACK_ERROR)

        def callback(**kwargs):
            try:
                depth = len(queue)
                if depth >= capacity:
                    count_drop(hook, QUEUE_FULL)
                    return None
                values = list(map(kwargs.get, names, missings))
                if usage_at >= 0:
                    values[usage_at] = snapshot_usage(values[usage_at])
                if error_at >= 0 and values[error_at] is not fields.MISSING:
                    values[error_at] = to_flag(values[error_at])
                append((hook, clock(), names, values))
                if depth + 1 == batch_trigger:
                    bridge._wake.set()
            except Exception:
                count_drop(hook, CALLBACK_ERROR)
            return None

        callback.__name__ = "bridge_" + hook
        return enqueue, callback

    def count_drop(self, hook, reason, count=1):
        """Add ``count`` lost events of ``hook`` under ``reason`` (cumulative per process)."""
        with self._counter_lock:
            per_hook = self._dropped.get(hook)
            if per_hook is None:
                per_hook = self._dropped[hook] = {}
            per_hook[reason] = per_hook.get(reason, 0) + count

    # ------------------------------------------------------------------ control

    def start(self):
        """Start the sender thread (idempotent)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._next_heartbeat = time.monotonic() + self.config.heartbeat_interval
        self._thread = threading.Thread(
            target=self._run, name="hermes-prometheus-bridge", daemon=True)
        self._thread.start()

    def flush(self, timeout=None):
        """Ask the sender to deliver everything queued now; wait at most ``timeout`` seconds.

        Returns ``True`` once the sender has made its attempt (delivered, refused, or one failed
        try while the sidecar is down), ``False`` on timeout or when the sender is not running.
        The wait never covers a retry back-off: one attempt, then the agent goes on.
        """
        if timeout is None:
            timeout = self.config.flush_timeout
        thread = self._thread
        if thread is None or not thread.is_alive():
            return False
        with self._state:
            if self._stopping:
                return False
            self._flush_requested += 1
            target = self._flush_requested
        self._wake.set()
        deadline = time.monotonic() + timeout
        with self._state:
            while self._flush_served < target:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not thread.is_alive():
                    return False
                self._state.wait(remaining)
        return True

    def shutdown(self, timeout=None):
        """Deliver what can be delivered within ``timeout`` (default 1 s), count the rest as
        ``shutdown`` and send a last heartbeat. Idempotent; safe to call from ``atexit``."""
        if timeout is None:
            timeout = self.config.shutdown_timeout
        thread = self._thread
        with self._state:
            if self._stopping:
                already = True
            else:
                already = False
                self._stopping = True
                self._shutdown_deadline = time.monotonic() + timeout
                self._state.notify_all()
        if already:
            if thread is not None:
                thread.join(max(0.0, timeout))
            return
        if thread is None or not thread.is_alive():
            self._abandon()  # never started (or died): nothing will send these
            return
        self._wake.set()
        thread.join(timeout)
        if thread.is_alive():
            # The sender is stuck in a request to a sidecar that does not answer; it is a daemon
            # thread and dies with the process. Count what it still held.
            self._abandon()

    def after_fork_in_child(self):
        """A forked child gets its own identity, empty queues and a fresh sender thread."""
        self.instance = uuid.uuid4().hex
        self.queue.clear()
        self._pending = collections.deque()
        self._pending_lock = threading.Lock()
        self._counter_lock = threading.Lock()
        self._dropped = {}
        self._delivery = collections.Counter()
        self._next_seq = 1
        self._acked_seq = 0
        self._resync = False
        self._wake = threading.Event()
        self._state = threading.Condition()
        self._flush_requested = self._flush_served = 0
        self._consecutive_failures = 0
        self._retry_at = 0.0
        was_running = self._thread is not None and not self._stopping
        self._thread = None
        if was_running:
            self.start()

    # ------------------------------------------------------------------ introspection

    def dropped(self):
        """A copy of the cumulative drop counters: ``{hook: {reason: count}}``."""
        with self._counter_lock:
            return {hook: dict(reasons) for hook, reasons in self._dropped.items()}

    def stats(self):
        """Delivery figures for tests, the driver and the benchmark (content-free)."""
        with self._pending_lock:
            buffered = len(self._pending)
        delivery = dict(self._delivery)
        return {
            "instance": self.instance,
            "events_numbered": self._next_seq - 1,
            "events_delivered": delivery.get("events_delivered", 0),
            "batches_delivered": delivery.get("batches_delivered", 0),
            "heartbeats_sent": delivery.get("heartbeats_sent", 0),
            "posts": delivery.get("posts", 0),
            "retries": delivery.get("retries", 0),
            "sidecar_accepted": delivery.get("sidecar_accepted", 0),
            "sidecar_rejected": delivery.get("sidecar_rejected", 0),
            "queue_depth": len(self.queue),
            "buffer_depth": buffered,
            "dropped": self.dropped(),
        }

    def heartbeat_line(self):
        """The ``plugin_heartbeat`` NDJSON line (no ``seq``: it is not a counted event)."""
        with self._pending_lock:
            buffered = len(self._pending)
        heartbeat = {
            "event": HEARTBEAT_EVENT,
            "observed_at": time.time(),
            "instance": self.instance,
            "data": {
                "interval_seconds": _seconds_for_json(self.config.heartbeat_interval),
                "dropped": self.dropped(),
                "queue_depth": len(self.queue),
                "queue_capacity": self.config.queue_size,
                "buffer_depth": buffered,
                "buffer_capacity": self.config.buffer_size,
                "acked_seq": self._acked_seq,
                "plugin_version": PLUGIN_VERSION,
            },
        }
        return json.dumps(heartbeat, allow_nan=False, separators=(",", ":")).encode("ascii")

    # ------------------------------------------------------------------ sender thread

    def _run(self):
        while True:
            try:
                if self._step():
                    return
            except Exception as exc:  # a bug here must not end delivery for the process
                self._report_once(("sender_error", type(exc).__name__),
                                  "hermes_prometheus_bridge: sender error %s", type(exc).__name__)
                time.sleep(self.config.flush_interval)

    def _step(self):
        """One wake-up of the sender; ``True`` when the thread should end."""
        self._wake.wait(self.config.flush_interval)
        self._wake.clear()
        with self._state:
            stopping = self._stopping
            flush_target = self._flush_requested
        self._take_from_queue()
        if stopping:
            self._finish()
            return True
        now = time.monotonic()
        forced = flush_target > self._flush_served
        heartbeat_due = forced or self._resync or now >= self._next_heartbeat
        if forced or now >= self._retry_at:
            with self._pending_lock:
                has_events = bool(self._pending)
            if has_events or heartbeat_due:
                self._deliver(with_heartbeat=heartbeat_due)
        if forced:
            with self._state:
                self._flush_served = max(self._flush_served, flush_target)
                self._state.notify_all()
        return False

    def _take_from_queue(self):
        """Number, serialize and buffer what the agent threads queued (bounded per call)."""
        queue = self.queue
        encode = self._encode
        instance = self.instance
        present_fields = fields.present_fields
        encoded = []
        for index in range(len(queue)):
            if index % _YIELD_EVERY == _YIELD_EVERY - 1:
                time.sleep(0)  # let waiting agent threads have the GIL during a long backlog
            try:
                hook, observed_at, names, values = queue.popleft()
            except IndexError:
                break
            try:
                line = encode(hook, observed_at, instance, self._next_seq,
                              present_fields(names, values))
            except Exception:
                self.count_drop(hook, SERIALIZE_ERROR)
                continue
            encoded.append((self._next_seq, hook, line))
            self._next_seq += 1
        if encoded:
            self._buffer(encoded)

    def _buffer(self, encoded):
        """Append to the retry buffer; past its capacity the oldest events are dropped."""
        evicted = []
        with self._pending_lock:
            abandoned = self._abandoned
            if not abandoned:
                pending = self._pending
                pending.extend(encoded)
                for _ in range(len(pending) - self.config.buffer_size):
                    evicted.append(pending.popleft())
        if abandoned:
            evicted = encoded
        for hook, count in _count_by_hook(evicted).items():
            self.count_drop(hook, SHUTDOWN if abandoned else SEND_FAILED, count)
        if evicted and not abandoned:
            self._report_once(("buffer_full",),
                              "hermes_prometheus_bridge: retry buffer full, dropping oldest")

    def _next_batch(self):
        with self._pending_lock:
            count = min(len(self._pending), self.config.batch_size)
            return [self._pending[index] for index in range(count)]

    def _deliver(self, with_heartbeat):
        """Send the buffer oldest first, batch by batch, until empty, refused-and-dropped or a
        retryable failure (which sets the back-off)."""
        while True:
            batch = self._next_batch()
            lines = [event[LINE] for event in batch]
            if with_heartbeat:
                # First, so a sidecar meeting this instance for the first time (a restart) learns
                # acked_seq before the events, and counts a gap after it as lost.
                lines.insert(0, self.heartbeat_line())
            if not lines:
                return
            outcome = self._send(lines, self.config.timeout)
            if with_heartbeat:
                with_heartbeat = False
                self._next_heartbeat = time.monotonic() + self.config.heartbeat_interval
                if outcome.kind == DELIVERED:
                    self._delivery["heartbeats_sent"] += 1
                    self._resync = False
            if outcome.kind == RETRY:
                self._schedule_retry(outcome)
                return
            self._consecutive_failures = 0
            self._retry_at = 0.0
            if not self._settle(batch, outcome) or self._stopping:
                return  # on stop, _finish sends the rest under the exit budget

    def _send(self, lines, timeout):
        self._delivery["posts"] += 1
        body = b"\n".join(lines) + b"\n"
        return self._post(self.endpoint, body, self.config.token, timeout)

    def _settle(self, batch, outcome):
        """Remove a delivered or refused batch from the buffer; ``False`` when abandoned."""
        if not batch:
            return True
        with self._pending_lock:
            if self._abandoned:
                return False
            for _ in batch:
                self._pending.popleft()
        if outcome.kind == DELIVERED:
            self._acked_seq = batch[-1][SEQ]
            self._delivery["events_delivered"] += len(batch)
            self._delivery["batches_delivered"] += 1
            if outcome.accepted is not None:
                self._delivery["sidecar_accepted"] += outcome.accepted
            if outcome.rejected is not None:
                self._delivery["sidecar_rejected"] += outcome.rejected
        else:
            for hook, count in _count_by_hook(batch).items():
                self.count_drop(hook, SEND_FAILED, count)
            self._report_once(("refused", outcome.status),
                              "hermes_prometheus_bridge: sidecar at %s refused a batch with "
                              "HTTP %s; its events are dropped", self.endpoint.display,
                              outcome.status)
        return True

    def _schedule_retry(self, outcome):
        self._delivery["retries"] += 1
        # The sidecar may come back as a new process: lead the next attempt with a heartbeat.
        self._resync = True
        self._consecutive_failures += 1
        if outcome.retry_after is not None:
            delay = min(outcome.retry_after, self.config.retry_after_max)
        else:
            exponential = self.config.backoff_initial * (2 ** (self._consecutive_failures - 1))
            delay = min(exponential, self.config.backoff_max) * random.uniform(0.5, 1.0)
        self._retry_at = time.monotonic() + max(delay, _MIN_RETRY_DELAY)
        if outcome.status is None:
            self._report_once(("unreachable", outcome.error),
                              "hermes_prometheus_bridge: sidecar at %s unreachable (%s); "
                              "buffering and retrying", self.endpoint.display, outcome.error)
        else:
            self._report_once(("busy", outcome.status),
                              "hermes_prometheus_bridge: sidecar at %s answered HTTP %s; "
                              "retrying", self.endpoint.display, outcome.status)

    def _remaining(self):
        return self._shutdown_deadline - time.monotonic()

    def _finish(self):
        """Exit path on the sender thread: one pass over the buffer within the budget, count
        the rest as ``shutdown``, then a final heartbeat carrying those counts."""
        budget = max(0.0, self._remaining())
        reserve = budget * _HEARTBEAT_RESERVE_FRACTION
        while self._remaining() > reserve:
            batch = self._next_batch()
            if not batch:
                break
            timeout = min(self.config.timeout, self._remaining() - reserve)
            outcome = self._send([event[LINE] for event in batch], timeout)
            if outcome.kind == RETRY or not self._settle(batch, outcome):
                break
        if not self._count_leftovers_as_shutdown():
            return
        timeout = max(0.01, self._remaining())
        outcome = self._send([self.heartbeat_line()], timeout)
        if outcome.kind == DELIVERED:
            self._delivery["heartbeats_sent"] += 1

    def _abandon(self):
        """Called by :meth:`shutdown` when the sender cannot finish: count what is left."""
        self._count_leftovers_as_shutdown()

    def _count_leftovers_as_shutdown(self):
        """Count buffered and queued events as ``shutdown`` exactly once; ``False`` if already
        done by the other thread."""
        with self._pending_lock:
            if self._abandoned:
                return False
            self._abandoned = True
            leftovers = list(self._pending)
            self._pending.clear()
        counts = _count_by_hook(leftovers)
        queue = self.queue
        for _ in range(len(queue)):
            try:
                hook = queue.popleft()[0]
            except IndexError:
                break
            counts[hook] = counts.get(hook, 0) + 1
        for hook, count in counts.items():
            self.count_drop(hook, SHUTDOWN, count)
        return True

    def _report_once(self, key, message, *args):
        """One warning per distinct condition per process; repeats go to DEBUG."""
        if key in self._reported:
            logger.debug(message, *args)
            return
        self._reported.add(key)
        logger.warning(message, *args)
