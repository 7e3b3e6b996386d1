"""Cumulative counters of the plugin's own losses, shared by every part of one bridge.

``dropped`` counts events that will never reach the sidecar, once each, under their hook and one
reason. ``errors`` counts the plugin's own failures that lose no event (a sender bug it recovered
from, a fork renewal or pricing that failed). ``refused`` counts values the boundary grammar kept
in the process, by wire field (the event itself is sent without them). All three travel in the
``plugin_heartbeat`` line.
"""

import threading

QUEUE_FULL = "queue_full"
SERIALIZE_ERROR = "serialize_error"
CALLBACK_ERROR = "callback_error"
SEND_FAILED = "send_failed"
SHUTDOWN = "shutdown"


class Counters(object):
    """Thread-safe ``{hook: {reason: count}}`` drops, ``{kind: count}`` errors and
    ``{field: count}`` refused values."""

    def __init__(self):
        self._start_empty()

    def _start_empty(self):
        self._lock = threading.Lock()
        self._dropped = {}
        self._errors = {}
        self._refused = {}

    def reset_after_fork(self):
        """A forked child counts afresh, under a lock no parent thread can be holding."""
        self._start_empty()

    def drop(self, hook, reason, count=1):
        with self._lock:
            per_hook = self._dropped.get(hook)
            if per_hook is None:
                per_hook = self._dropped[hook] = {}
            per_hook[reason] = per_hook.get(reason, 0) + count

    def drop_each(self, hooks, reason):
        """Count one drop per hook name in ``hooks`` (an iterable, repeats allowed)."""
        counts = {}
        for hook in hooks:
            counts[hook] = counts.get(hook, 0) + 1
        for hook, count in counts.items():
            self.drop(hook, reason, count)

    def error(self, kind, count=1):
        with self._lock:
            self._errors[kind] = self._errors.get(kind, 0) + count

    def refuse(self, field, count=1):
        with self._lock:
            self._refused[field] = self._refused.get(field, 0) + count

    def refused(self):
        with self._lock:
            return dict(self._refused)

    def dropped(self):
        with self._lock:
            return {hook: dict(reasons) for hook, reasons in self._dropped.items()}

    def errors(self):
        with self._lock:
            return dict(self._errors)
