"""The sender thread: numbers, cleans, prices and encodes what the agent threads queued, and
delivers it to the sidecar in batches with back-off, heartbeats and a bounded exit flush.

Sequence numbers are assigned here as events leave the queue, in queue order: one number per
event that entered the queue (a ``queue_full`` drop never gets one), in order even when two
agent threads race, with no lock on the hot path. An event whose serialization fails gets no
number either (it is counted as ``serialize_error``), so a gap in the numbers means exactly
"sent but never acknowledged".
"""

import collections
import itertools
import logging
import operator
import random
import threading
import time
import uuid

from . import drops
from .encoding import (COMPACT_MEDIA_TYPE, compact_body, compact_prefix, compact_schema_text,
                       encode_data_texts, encode_event, line_template)
from .fields import compiled_grammars, compiled_transforms, event_data
from .retry_buffer import DATA, SEQ, WHOLE_LINE, lines_of
from .rows import Admitted, ColumnBuilder, row_builder
from .transport import DELIVERED, NDJSON_MEDIA_TYPE, RETRY

logger = logging.getLogger("hermes_prometheus_bridge")

THREAD_NAME = "hermes-prometheus-bridge"
# Part of the exit budget kept for the final heartbeat, which carries the shutdown counts.
_HEARTBEAT_RESERVE_FRACTION = 0.25
# Events encoded between voluntary GIL releases while draining a backlog; otherwise an agent
# thread could wait the full 5 ms switch interval for the GIL.
_YIELD_EVERY = 100
# A Retry-After of 0 must not turn into a busy loop.
_MIN_RETRY_DELAY = 0.05
# What a sidecar that does not read compact bodies answers them with.
_UNSUPPORTED_MEDIA_TYPE = 415
# What it answers a compact body over --ingest.max-json-bytes with (NDJSON has its own limit).
_TOO_LARGE = 413
# Plugin errors (no event lost): a sidecar refused a compact body, so the batch went as NDJSON.
COMPACT_REFUSED = "compact_refused"
COMPACT, NDJSON = "compact", "ndjson"
COMPACT_TOO_LARGE = "compact_too_large"
_SCHEMA_TEXT = compact_schema_text()
_data_of = operator.itemgetter(DATA)
_spec_of = operator.itemgetter(0)


class Sender(object):
    """Owns the delivery state: next seq, acked seq, back-off, flush requests, the thread."""

    def __init__(self, config, enqueuer, buffer, counters, heartbeat, connection, pricer,
                 wake, instance, encode=None):
        self.config = config
        self.instance = instance
        self._enqueuer = enqueuer
        self._buffer = buffer
        self._counters = counters
        self._heartbeat = heartbeat
        self._connection = connection
        self._pricer = pricer
        self._encode = encode  # a per-event encoder (tests); None = the batch encoder
        self.wake = wake  # the enqueuer's signal that a full batch waits (wakeup.Wakeup)
        self._state = threading.Condition()
        self._stopping = False
        self._shutdown_deadline = None
        self._thread = None
        self._reported = set()
        self.delivery = {"events_delivered": 0, "batches_delivered": 0, "heartbeats_sent": 0,
                         "posts": 0, "retries": 0, "sidecar_accepted": 0,
                         "sidecar_rejected": 0}
        self._reset_delivery_state()

    def _reset_delivery_state(self):
        """Numbering, flush requests, back-off, line templates and counters as a new sender has them."""
        self._flush_requested = self._flush_served = 0
        self._next_seq = 1
        self._acked_seq = 0
        # A new numbering: the heartbeat's boot tells the sidecar it is not a replay of the old one.
        self.boot = uuid.uuid4().hex
        self._resync = False
        self._consecutive_failures = 0
        self._retry_at = 0.0
        # spec -> (plain, transforms, base_url index or -1, hook, template, grammars, row
        # builder or None, row index of model, of provider, column builder or None); templates
        # carry the instance id, which a fork changes
        self._compiled = {}
        # What the sidecar reads, learnt from its answers: None until one arrived, COMPACT once
        # one advertised compact bodies (Accept-Post), NDJSON otherwise or after a 415.
        self._format = None
        self._compact_prefix = compact_prefix(self.instance, _SCHEMA_TEXT)
        self._admitted = Admitted()
        for key in self.delivery:  # in place: readers hold this dict
            self.delivery[key] = 0

    # ------------------------------------------------------------------ control (any thread)

    def start(self):
        """Start the thread once; ``False`` when it runs already or the sender was stopped."""
        with self._state:
            if self._stopping or (self._thread is not None and self._thread.is_alive()):
                return False
            self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
            # Lets a later load of the plugin in this process find and retire this sender.
            self._thread.hermes_prometheus_bridge_retire = self.retire
            self._thread.start()
            return True

    @property
    def running(self):
        thread = self._thread
        return thread is not None and thread.is_alive()

    @property
    def stopping(self):
        with self._state:
            return self._stopping

    @property
    def backing_off(self):
        """True while the sidecar is known unreachable (waiting for the next retry)."""
        return self._consecutive_failures > 0

    @property
    def events_numbered(self):
        return self._next_seq - 1

    @property
    def body_format(self):
        """``compact`` once the sidecar advertised compact bodies (until one refuses them),
        else ``ndjson``."""
        return "compact" if self._format == COMPACT else "ndjson"

    @property
    def admitted_resets(self):
        """How often a full set of admitted strings started over (rows.Admitted)."""
        return self._admitted.resets

    def flush(self, timeout):
        """Ask for an immediate delivery attempt; wait at most ``timeout`` seconds for it.

        ``True`` once the sender made its attempt (delivered, refused, or one failed try),
        ``False`` on timeout, when not running, or when called on the sender thread itself.
        """
        thread = self._thread
        if thread is None or not thread.is_alive() or thread is threading.current_thread():
            return False
        with self._state:
            if self._stopping:
                return False
            self._flush_requested += 1
            target = self._flush_requested
        self.wake.set()
        deadline = time.monotonic() + timeout
        with self._state:
            while self._flush_served < target:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not thread.is_alive():
                    return False
                self._state.wait(remaining)
        return True

    def stop(self, timeout):
        """Deliver what can be delivered within ``timeout``, count the rest as ``shutdown``,
        send a last heartbeat. Idempotent; safe from ``atexit``."""
        thread = self._thread
        with self._state:
            already = self._stopping
            if not already:
                self._stopping = True
                self._shutdown_deadline = time.monotonic() + timeout
                self._state.notify_all()
        if already:
            if thread is not None and thread is not threading.current_thread():
                thread.join(max(0.0, timeout))
            return
        if thread is None or not thread.is_alive():
            self._count_leftovers_as_shutdown()  # never started (or died): nothing will send
            return
        self.wake.set()
        thread.join(timeout)
        if thread.is_alive():
            # Stuck in a request to a sidecar that does not answer; a daemon thread, it dies
            # with the process. Count what it still held.
            self._count_leftovers_as_shutdown()

    def retire(self):
        """Stop without waiting: a newer load of the plugin replaced this one."""
        threading.Thread(target=self.stop, args=(self.config.shutdown_timeout,),
                         name=THREAD_NAME + "-retire", daemon=True).start()

    def reset_after_fork(self, instance):
        """A forked child under a new ``instance`` id: fresh numbering, locks, back-off and
        connection; not running. The bridge resets the shared wake-up signal."""
        self.instance = instance
        self._state = threading.Condition()
        was_running = self._thread is not None and not self._stopping
        self._thread = None
        self._connection.close()
        self._reset_delivery_state()
        return was_running

    # ------------------------------------------------------------------ the thread

    def _run(self):
        while True:
            try:
                if self._step():
                    self._connection.close()
                    return
            except Exception as exc:  # a bug here must not end delivery for the process
                self._counters.error("sender_error")
                self._report_once(("sender_error", type(exc).__name__),
                                  "hermes_prometheus_bridge: sender error %s", type(exc).__name__)
                time.sleep(self.config.flush_interval)

    def _step(self):
        """One wake-up; ``True`` when the thread should end."""
        self.wake.wait(self.config.flush_interval)
        self.wake.clear()
        with self._state:
            stopping = self._stopping
            flush_target = self._flush_requested
        self._take_from_queue()
        if stopping:
            self._finish()
            return True
        forced = flush_target > self._flush_served
        heartbeat_due = forced or self._resync or self._heartbeat.due()
        if forced or time.monotonic() >= self._retry_at:
            if len(self._buffer) or heartbeat_due:
                self._deliver(with_heartbeat=heartbeat_due)
        if forced:
            with self._state:
                self._flush_served = max(self._flush_served, flush_target)
                self._state.notify_all()
        return False

    def _take_from_queue(self):
        """Number, clean, price and encode what the agent threads queued, into the buffer."""
        while True:
            taken = self._enqueuer.take(_YIELD_EVERY)
            if not taken:
                return
            try:
                encoded = self._encode_events(taken)
            except Exception:
                # A bug, not bad input (that is dropped field by field): the events are lost,
                # and counted.
                self._counters.drop_each((event[0].hook for event in taken),
                                         drops.SERIALIZE_ERROR)
                raise
            if encoded:
                evicted = self._buffer.add(encoded)
                if evicted:
                    self._report_once(("buffer_full",), "hermes_prometheus_bridge: retry "
                                      "buffer full, dropping oldest")
            if len(taken) < _YIELD_EVERY:
                return
            time.sleep(0)  # let waiting agent threads have the GIL during a long backlog

    def _encode_events(self, taken):
        """``[(seq, hook, template, observed_at, row), ...]`` for events taken off the queue,
        numbered in order: cleaned into rows now (rows.py; a value that cannot be cleaned
        costs its event here, before it has a number), encoded when sent, as a compact row or
        a JSON line. The events of one hook are cleaned together, field by field
        (rows.ColumnBuilder), unless a value needs the per-event rule. Until the sidecar
        answered without them (or refused them) events become their JSON data text at once,
        which is what an NDJSON line costs least as; before any answer (a sidecar not up yet)
        they become rows, which cost least to buffer and to evict."""
        if self._encode is not None or self._format == NDJSON or not self.config.compact:
            return self._encode_as_lines(taken)
        try:
            encoded = [None] * len(taken)
            specs = list(map(_spec_of, taken))
            positions = range(len(specs))
            for spec in {id(spec): spec for spec in specs}.values():
                # The positions of this spec's events (by identity), found in C-level passes.
                indexes = list(itertools.compress(positions, map(operator.is_, specs,
                                                                 itertools.repeat(spec))))
                self._encode_group(spec, indexes, taken, encoded)
        except Exception:
            # A value that cannot be cleaned (a bug, not bad input): find it, one by one.
            return self._encode_as_lines(taken)
        self._next_seq += len(encoded)
        return encoded

    def _encode_group(self, spec, indexes, taken, encoded):
        """Rows of the events of one spec (at ``indexes`` in ``taken``) into ``encoded``."""
        compiled = self._compiled.get(spec)
        if compiled is None:
            compiled = self._compiled[spec] = self._compile(spec)
        hook, template, build = compiled[3], compiled[4], compiled[6]
        first = self._next_seq
        events = list(map(taken.__getitem__, indexes))
        if build is None:  # a hook outside the contract: JSON lines
            for index, (_spec, observed_at, values, usage) in zip(indexes, events):
                encoded[index] = (first + index, hook, template, observed_at,
                                  self._data_text(compiled, values, usage))
            return
        # ``usages``: the copies taken when the hooks ran, not Hermes' own dicts in ``values``.
        _specs, stamps, values, usages = zip(*events)
        rows = compiled[9].build(stamps, values, usages, self._admitted)
        if rows is None:
            refused = self._counters.refuse
            admitted = self._admitted
            rows = [build(value, usage, stamp, refused, admitted)
                    for stamp, value, usage in zip(stamps, values, usages)]
        if compiled[2] >= 0 and not self._pricer.unavailable:
            rows = [self._add_cost_to_row(compiled, value, usage, row)
                    for value, usage, row in zip(values, usages, rows)]
        # Each buffered tuple built by zip and put in its place by setitem, both in C.
        buffered = zip(map(first.__add__, indexes), itertools.repeat(hook),
                       itertools.repeat(template), stamps, rows)
        collections.deque(map(encoded.__setitem__, indexes, buffered), maxlen=0)

    def _data_text(self, compiled, values, usage):
        plain, transforms, _base_url_at, _hook, _template, grammars = compiled[:6]
        data = event_data(plain, transforms, values, usage, grammars, self._counters.refuse)
        return encode_data_texts([data])[0]

    def _encode_as_lines(self, taken):
        """``[(seq, hook, template, observed_at, data_text), ...]``: the data of every event as
        JSON text, in one call into the C encoder for the batch; when one event cannot be
        encoded (or a per-event encoder is given: tests), event by event, and one that cannot
        be encoded is dropped as ``serialize_error``, unnumbered."""
        hooks, templates, stamps, datas = [], [], [], []
        compiled_for = self._compiled
        # Once Hermes' pricing module is known missing, no call is priced: not asked per call.
        priced = not self._pricer.unavailable
        refused = self._counters.refuse
        for spec, observed_at, values, usage in taken:
            compiled = compiled_for.get(spec)
            if compiled is None:
                compiled = compiled_for[spec] = self._compile(spec)
            plain, transforms, base_url_at, hook, template, grammars = compiled[:6]
            try:
                data = event_data(plain, transforms, values, usage, grammars, refused)
                if priced and base_url_at >= 0:
                    self._add_cost(values[base_url_at], usage, data)
            except Exception:
                data = None  # counted below, with the events that cannot be encoded
            hooks.append(hook)
            templates.append(template)
            stamps.append(observed_at)
            datas.append(data)
        if self._encode is None and None not in datas:
            try:
                texts = encode_data_texts(datas)
            except (TypeError, ValueError):
                texts = ()  # one event cannot be encoded: find it, one by one
            if len(texts) == len(datas):
                first = self._next_seq
                self._next_seq = first + len(texts)
                return list(zip(range(first, first + len(texts)), hooks, templates, stamps, texts))
        return self._encode_one_by_one(hooks, stamps, datas)

    def _compile(self, spec):
        """What the sender needs of a hook: its plain names and transforms, the value index of
        ``base_url`` when the hook is priced (else -1), its name, its line template for this
        instance, the grammars of its plain values, its row builder (``None`` outside the
        contract), the row indexes of its model and provider (for pricing) and its column
        builder."""
        base_url_at = dict(spec.private).get("base_url", -1) if spec.usage_at >= 0 else -1
        names = spec.plain
        build = row_builder(spec)
        return (spec.plain, compiled_transforms(spec), base_url_at, spec.hook,
                line_template(spec.hook, self.instance), compiled_grammars(spec), build,
                names.index("model") + 2 if "model" in names else -1,
                names.index("provider") + 2 if "provider" in names else -1,
                None if build is None else ColumnBuilder(spec))

    def _encode_one_by_one(self, hooks, stamps, datas):
        encode = self._encode or encode_event
        encoded = []
        for hook, stamp, data in zip(hooks, stamps, datas):
            try:
                if data is None:
                    raise ValueError("no data")
                line = encode(hook, stamp, self.instance, self._next_seq, data)
                if isinstance(line, bytes):
                    line = line.decode("ascii")
            except Exception:
                self._counters.drop(hook, drops.SERIALIZE_ERROR)
                continue
            encoded.append((self._next_seq, hook, WHOLE_LINE, stamp, line))
            self._next_seq += 1
        return encoded

    def _add_cost(self, base_url, usage, data):
        priced = self._pricer.price(data.get("model"), data.get("provider"), base_url, usage)
        if priced is not None:
            cost, status = priced
            if cost is not None:
                data["cost_usd"] = cost
            data["cost_status"] = status

    def _add_cost_to_row(self, compiled, values, usage, row):
        """The row with ``cost_usd`` and ``cost_status`` after its contract fields."""
        model_at, provider_at = compiled[7], compiled[8]
        priced = self._pricer.price(row[model_at] if model_at >= 0 else None,
                                    row[provider_at] if provider_at >= 0 else None,
                                    values[compiled[2]], usage)
        if priced is None:
            return row
        cost, status = priced
        return row + (cost, status)

    # ------------------------------------------------------------------ delivery

    def _heartbeat_line(self):
        return self._heartbeat.line(self.instance, len(self._enqueuer), len(self._buffer),
                                    self._acked_seq, self.boot)

    def _deliver(self, with_heartbeat):
        """Send the buffer oldest first, batch by batch, until empty, refused-and-dropped or a
        retryable failure (which sets the back-off)."""
        while True:
            batch = self._buffer.head(self.config.batch_size)
            # First, so a sidecar meeting this instance for the first time (a restart) learns
            # acked_seq before the events, and counts a gap after it as lost.
            heartbeat = self._heartbeat_line() if with_heartbeat else None
            if not batch and heartbeat is None:
                return
            outcome = self._send_batch(batch, heartbeat, self.config.timeout)
            if with_heartbeat:
                with_heartbeat = False
                self._heartbeat.sent()
                if outcome.kind == DELIVERED:
                    self.delivery["heartbeats_sent"] += 1
                    self._resync = False
            if outcome.kind == RETRY:
                self._schedule_retry(outcome)
                return
            self._consecutive_failures = 0
            self._retry_at = 0.0
            if not self._settle(batch, outcome) or self.stopping:
                return  # on stop, _finish sends the rest under the exit budget

    def _send_batch(self, batch, heartbeat, timeout):
        """Post a batch (and the heartbeat line before it) as one compact body when the sidecar
        reads them, else as NDJSON; a sidecar that refuses the compact body with 415 (an older
        one, after a downgrade) gets the same batch as NDJSON at once, and NDJSON from then on
        (counted as the plugin error ``compact_refused``); one over its size limit (413) gets
        it as NDJSON, which the sidecar reads line by line under a larger limit."""
        unreachable = self._connection.open(timeout)
        if unreachable is not None:
            self.delivery["posts"] += 1
            return unreachable
        rows = list(map(_data_of, batch)) if self._format == COMPACT else None
        if rows is not None and self._compactable(batch, rows):
            self.delivery["posts"] += 1
            body = compact_body(self._compact_prefix, batch[0][SEQ], rows, heartbeat)
            outcome = self._connection.post(body, timeout, COMPACT_MEDIA_TYPE)
            if outcome.status == _UNSUPPORTED_MEDIA_TYPE:
                self._format = NDJSON
                self._counters.error(COMPACT_REFUSED)
                self._report_once((COMPACT_REFUSED,), "hermes_prometheus_bridge: sidecar at %s "
                                  "does not read compact bodies; sending NDJSON",
                                  self._connection.endpoint.display)
            elif outcome.status == _TOO_LARGE:
                self._counters.error(COMPACT_TOO_LARGE)
            else:
                self._learn_format(outcome)
                return outcome
        lines = lines_of(batch)
        if heartbeat is not None:
            lines.insert(0, heartbeat)
        outcome = self._send(lines, timeout)
        self._learn_format(outcome)
        return outcome

    @staticmethod
    def _compactable(batch, rows):
        """Rows only (no JSON line of a hook outside the contract, no per-event encoder), with
        consecutive numbers: a compact body numbers its rows from its first. A heartbeat
        alone goes as a line."""
        if not batch or str in set(map(type, rows)):
            return False
        return batch[-1][SEQ] - batch[0][SEQ] == len(batch) - 1

    def _learn_format(self, outcome):
        """A delivered answer says whether the sidecar reads compact bodies (Accept-Post)."""
        if outcome.kind == DELIVERED and self._encode is None and self.config.compact:
            self._format = COMPACT if self._connection.accepts_compact else NDJSON

    def _send(self, lines, timeout):
        self.delivery["posts"] += 1
        lines.append("")
        body = "\n".join(lines).encode("ascii")
        return self._connection.post(body, timeout, NDJSON_MEDIA_TYPE)

    def _settle(self, batch, outcome):
        """Remove a delivered or refused batch from the buffer; ``False`` when abandoned."""
        if not batch:
            self._count_answer(outcome)  # a heartbeat sent alone
            return True
        if not self._buffer.settle(len(batch)):
            return False
        if outcome.kind == DELIVERED:
            self._acked_seq = batch[-1][SEQ]
            self.delivery["events_delivered"] += len(batch)
            self.delivery["batches_delivered"] += 1
            self._count_answer(outcome)
        else:
            self._counters.drop_each((event[1] for event in batch), drops.SEND_FAILED)
            self._report_once(("refused", outcome.status),
                              "hermes_prometheus_bridge: sidecar at %s refused a batch with "
                              "HTTP %s; its events are dropped",
                              self._connection.endpoint.display, outcome.status)
        return True

    def _schedule_retry(self, outcome):
        self.delivery["retries"] += 1
        # The sidecar may come back as a new process: lead the next attempt with a heartbeat.
        self._resync = True
        self._consecutive_failures += 1
        if outcome.retry_after is not None:
            delay = min(outcome.retry_after, self.config.retry_after_max)
        else:
            exponential = self.config.backoff_initial * (2 ** (self._consecutive_failures - 1))
            delay = min(exponential, self.config.backoff_max) * random.uniform(0.5, 1.0)
        self._retry_at = time.monotonic() + max(delay, _MIN_RETRY_DELAY)
        display = self._connection.endpoint.display
        if outcome.status is None:
            self._report_once(("unreachable", outcome.error),
                              "hermes_prometheus_bridge: sidecar at %s unreachable (%s); "
                              "buffering and retrying", display, outcome.error)
        else:
            self._report_once(("busy", outcome.status),
                              "hermes_prometheus_bridge: sidecar at %s answered HTTP %s; "
                              "retrying", display, outcome.status)

    # ------------------------------------------------------------------ exit

    def _remaining(self):
        return self._shutdown_deadline - time.monotonic()

    def _finish(self):
        """One pass over the buffer within the exit budget, the rest counted as ``shutdown``,
        then a final heartbeat carrying those counts."""
        reserve = max(0.0, self._remaining()) * _HEARTBEAT_RESERVE_FRACTION
        while self._remaining() > reserve:
            batch = self._buffer.head(self.config.batch_size)
            if not batch:
                break
            timeout = min(self.config.timeout, self._remaining() - reserve)
            outcome = self._send(lines_of(batch), timeout)
            if outcome.kind == RETRY or not self._settle(batch, outcome):
                break
        if not self._count_leftovers_as_shutdown():
            return
        outcome = self._send([self._heartbeat_line()], max(0.01, self._remaining()))
        if outcome.kind == DELIVERED:
            self.delivery["heartbeats_sent"] += 1
        self._count_answer(outcome)

    def _count_answer(self, outcome):
        """What the sidecar said it accepted and rejected of a delivered body, heartbeat lines
        included."""
        if outcome.kind != DELIVERED:
            return
        if outcome.accepted is not None:
            self.delivery["sidecar_accepted"] += outcome.accepted
        if outcome.rejected is not None:
            self.delivery["sidecar_rejected"] += outcome.rejected

    def _count_leftovers_as_shutdown(self):
        """Count buffered and queued events as ``shutdown`` exactly once; ``False`` if the
        other thread already did."""
        leftovers = self._buffer.abandon()
        if leftovers is None:
            return False
        leftovers.extend(self._enqueuer.clear())
        self._counters.drop_each(leftovers, drops.SHUTDOWN)
        return True

    def _report_once(self, key, message, *args):
        """One warning per distinct condition per process; repeats go to DEBUG."""
        if key in self._reported:
            logger.debug(message, *args)
            return
        self._reported.add(key)
        logger.warning(message, *args)
