"""The hot path: what runs on Hermes' threads when a hook fires.

A callback copies the allow-listed values (one C-level ``itemgetter`` over the hook's
precomputed keyword names), snapshots ``usage``, stamps ``time.time()`` and appends one tuple to a
``collections.deque`` (atomic under the GIL, no lock), then returns ``None``. It never blocks,
never does I/O and never raises into Hermes: a full queue or a failure costs one counted drop.
Everything else (cleaning, JSON, HTTP, retries, pricing) happens on the sender thread.
"""

import collections
import operator
import time

from .drops import CALLBACK_ERROR, QUEUE_FULL
from .fields import MISSING


def absent_names(names, kwargs):
    """The names a call left out, or ``None`` when it left none out."""
    return tuple(name for name in names if name not in kwargs) or None


class Enqueuer(object):
    """The bounded queue between agent threads and the sender, and the callbacks feeding it.

    A queued event is ``(spec, observed_at, values, usage)``: ``values`` holds the hook's
    ``sources`` in order (``MISSING`` where absent), ``usage`` a copy of the ``usage`` dict taken
    when the hook ran (``MISSING`` for hooks without one, or when absent).
    """

    def __init__(self, capacity, batch_size, counters, wake):
        self.queue = collections.deque()
        self.capacity = capacity
        self.batch_size = batch_size
        self._counters = counters
        self._wake = wake  # set when a full batch is waiting: the sender need not wait

    def hook_callback(self, spec):
        """The ``**kwargs`` callback of one hook: the one body every callback shape runs."""
        queue = self.queue
        append = queue.append
        capacity = self.capacity
        batch_trigger = self.batch_size
        clock = time.time
        drop = self._counters.drop
        wake = self._wake.set
        names = spec.sources
        missings = (MISSING,) * len(names)
        usage_at = spec.usage_at
        hook = spec.hook
        # One C call when every name is present (Hermes' call sites pass a fixed set). A call
        # site that leaves some out (a release that does not pass a field yet) would pay a
        # KeyError and a per-name lookup on every call: the names it left out last time are
        # remembered and set to MISSING in the call's own keyword dict (a fresh dict per call:
        # Hermes' is never touched), so the one C call still reads them all.
        pick = operator.itemgetter(*names) if len(names) > 1 else None
        absent = [None]  # the names this call site left out last time, or None

        def values_with_missing(kwargs):
            """Every name's value or MISSING, name by name; remembers the names left out."""
            absent[0] = absent_names(names, kwargs)
            return tuple(map(kwargs.get, names, missings))

        def callback(**kwargs):
            try:
                depth = len(queue)
                if depth >= capacity:
                    drop(hook, QUEUE_FULL)
                    return
                left_out = absent[0]
                if left_out is not None:
                    for name in left_out:
                        kwargs.setdefault(name, MISSING)  # a value passed after all is kept
                try:
                    values = pick(kwargs)
                except (KeyError, TypeError):
                    values = values_with_missing(kwargs)
                usage = values[usage_at] if usage_at >= 0 else MISSING
                # Hermes may reuse its dict; what is sent is what the hook saw.
                append((spec, clock(), values, usage.copy() if type(usage) is dict else usage))
                if depth + 1 == batch_trigger:
                    wake()
            except Exception:
                # Never raise into Hermes. (KeyboardInterrupt is left alone on purpose.)
                drop(hook, CALLBACK_ERROR)

        callback.__name__ = "bridge_" + spec.hook
        return callback

    def observer_callback(self, spec):
        """A callback for the envelope variant: fields come from ``hook.payload["data"]``,
        passed to the same body as keyword arguments."""
        body = self.hook_callback(spec)
        drop = self._counters.drop
        names = spec.sources
        hook_name = spec.hook

        def callback(hook, *_args, **_kwargs):
            try:
                data = hook.payload.get("data")
                if data is None:
                    data = {}
                # Only the names the contract lists are passed on (absent ones as MISSING).
                body(**{name: data.get(name, MISSING) for name in names})
            except Exception:
                drop(hook_name, CALLBACK_ERROR)

        callback.__name__ = "bridge_observer_" + spec.hook
        return callback

    def take(self, limit):
        """Up to ``limit`` queued events, oldest first (sender thread)."""
        queue = self.queue
        popleft = queue.popleft
        taken = []
        for _ in range(min(limit, len(queue))):
            try:
                taken.append(popleft())
            except IndexError:
                break
        return taken

    def clear(self):
        """Empty the queue; returns the hooks of what it held (to count as drops)."""
        hooks = []
        while True:
            try:
                hooks.append(self.queue.popleft()[0].hook)
            except IndexError:
                return hooks

    def __len__(self):
        return len(self.queue)
