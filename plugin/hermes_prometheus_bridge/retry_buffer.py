"""Encoded events waiting for the sidecar's acknowledgement, oldest first, bounded.

Filled and drained by the sender thread; :meth:`RetryBuffer.abandon` may also be called from
the thread running ``shutdown`` when the sender is stuck, so every access takes the lock.
Past its capacity the oldest events are evicted and counted as ``send_failed``; once abandoned
(process exit) everything left, and everything added later, counts as ``shutdown``.
"""

import collections
import itertools
import threading

from .drops import SEND_FAILED, SHUTDOWN
from .encoding import encode_data_texts, row_data_text
from .rows import row_data

# A buffered event is a plain tuple (creating a namedtuple costs a Python-level call per event):
# ``(seq, hook, template, observed_at, data)``, ``data`` being its data text or its row
# (rows.py). Its line or compact row is put together only when it is sent (:func:`line_of`,
# encoding.compact_body): an event evicted or abandoned while the sidecar is down never is.
SEQ, HOOK, DATA = 0, 1, 4


# The template of an event encoded whole (one by one, after a batch failed): its text is the line.
WHOLE_LINE = "%.0s%.0s%s"


def lines_of(events):
    """The NDJSON lines of buffered events, the data of their rows encoded in one call (as a
    sender meeting a sidecar without compact bodies sends every batch)."""
    rows = [event[DATA] for event in events if type(event[DATA]) is not str]
    texts = iter(encode_data_texts([row_data(row) for row in rows]))
    lines = []
    for seq, _hook, template, observed_at, text in events:
        if type(text) is not str:
            text = next(texts)
        lines.append(template % (observed_at, seq, text))
    return lines


def line_of(event):
    """The NDJSON line of a buffered event."""
    seq, _hook, template, observed_at, text = event
    if type(text) is not str:
        text = row_data_text(text)
    return template % (observed_at, seq, text)


class RetryBuffer(object):
    def __init__(self, capacity, counters):
        self.capacity = capacity
        self._counters = counters
        self._start_empty()

    def _start_empty(self):
        self._pending = collections.deque()
        self._lock = threading.Lock()
        self._abandoned = False

    def reset_after_fork(self):
        """A forked child holds nothing of its parent's, under a lock no parent thread holds."""
        self._start_empty()

    def add(self, encoded):
        """Append ``[(seq, hook, template, observed_at, data_text), ...]``; returns how many
        older events were evicted."""
        evicted = []
        with self._lock:
            abandoned = self._abandoned
            if not abandoned:
                pending = self._pending
                pending.extend(encoded)
                for _ in range(len(pending) - self.capacity):
                    evicted.append(pending.popleft())
        if abandoned:
            self._counters.drop_each((event[HOOK] for event in encoded), SHUTDOWN)
            return 0
        self._counters.drop_each((event[HOOK] for event in evicted), SEND_FAILED)
        return len(evicted)

    def head(self, limit):
        """The oldest ``limit`` events, left in place until :meth:`settle`."""
        with self._lock:
            # islice walks the deque once; indexing it would walk from an end per item.
            return list(itertools.islice(self._pending, limit))

    def settle(self, count):
        """Remove the ``count`` oldest events (delivered or refused); ``False`` when abandoned."""
        with self._lock:
            if self._abandoned:
                return False
            for _ in range(count):
                self._pending.popleft()
            return True

    def abandon(self):
        """Stop accepting; returns the hooks still held, exactly once (``None`` afterwards)."""
        with self._lock:
            if self._abandoned:
                return None
            self._abandoned = True
            leftovers = [event[HOOK] for event in self._pending]
            self._pending.clear()
            return leftovers

    @property
    def abandoned(self):
        with self._lock:
            return self._abandoned

    def __len__(self):
        with self._lock:
            return len(self._pending)
