"""The ``plugin_heartbeat`` line: the plugin's delivery report, sent every ``interval``.

It carries the cumulative drop and error counters, queue and buffer depths, the highest
sequence number the sidecar acknowledged, so a sidecar that restarted (and lost its sequence
state) counts events dropped from the buffer meanwhile, and ``boot``, a random token chosen when
the numbering starts at 1, so a sidecar tells a new numbering under the same instance from a
delayed replay of the old one. It also names its host (the Hermes version and profile, when
register read them) and counts the values the boundary grammar refused, by field. It has no
``seq``: it is not an event.
"""

import time

from .encoding import encode_json

HEARTBEAT_EVENT = "plugin_heartbeat"


def _seconds_for_json(value):
    """``5`` rather than ``5.0`` when the interval is whole, as the wire examples show."""
    return int(value) if float(value).is_integer() else value


class Heartbeat(object):
    def __init__(self, config, plugin_version, counters, clock=time.monotonic, host=None):
        self.config = config
        self.plugin_version = plugin_version
        self._counters = counters
        # {"hermes_version": ..., "profile": ...}: only values the host check admitted.
        self._host = dict(host or {})
        self._clock = clock
        self.next_due = clock() + config.heartbeat_interval

    def due(self):
        return self._clock() >= self.next_due

    def sent(self):
        self.next_due = self._clock() + self.config.heartbeat_interval

    def line(self, instance, queue_depth, buffer_depth, acked_seq, boot=None):
        data = {
            "interval_seconds": _seconds_for_json(self.config.heartbeat_interval),
            "dropped": self._counters.dropped(),
            "queue_depth": queue_depth,
            "queue_capacity": self.config.queue_size,
            "buffer_depth": buffer_depth,
            "buffer_capacity": self.config.buffer_size,
            "acked_seq": acked_seq,
            "plugin_version": self.plugin_version,
        }
        if boot is not None:
            data["boot"] = boot
        data.update(self._host)
        errors = self._counters.errors()
        if errors:
            data["plugin_errors"] = errors
        refused = self._counters.refused()
        if refused:
            data["refused_fields"] = refused
        return encode_json({"event": HEARTBEAT_EVENT, "observed_at": time.time(),
                            "instance": instance, "data": data})
