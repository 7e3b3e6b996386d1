"""One plugin instance: the parts wired together, and the API Hermes' side of the plugin uses.

The parts, each owning its own state:

* :mod:`.enqueuer` - the hot path on Hermes' threads and the bounded queue;
* :mod:`.sender` - the daemon thread that numbers, encodes, prices and delivers;
* :mod:`.retry_buffer` - encoded events awaiting the sidecar's acknowledgement;
* :mod:`.heartbeat` - the periodic delivery report;
* :mod:`.drops` - the drop and error counters every part writes to;
* :mod:`.transport` - the HTTP connection; :mod:`.pricing` - cost in USD.

Every event that is not delivered is counted once, under its hook, with one reason:
``queue_full`` / ``callback_error`` (callback side), ``serialize_error``, ``send_failed``
(refused by the sidecar, or evicted from the full retry buffer) and ``shutdown`` (still
undelivered when the process exits).
"""

import uuid

from . import drops
from .contract import HOOK_SPECS, OBSERVER_SPECS, HookSpec
from .encoding import encode_event
from .enqueuer import Enqueuer
from .heartbeat import Heartbeat
from .pricing import Pricer
from .retry_buffer import RetryBuffer
from .sender import Sender
from .transport import Connection, parse_endpoint
from .wakeup import Wakeup

PLUGIN_VERSION = "0.1.0"

# encode_event is imported from here by the tests and bench/plugin_callback.py.
__all__ = ["Bridge", "PLUGIN_VERSION", "encode_event"]

# The longest on_session_finalize may hold Hermes while the sender delivers (a courtesy:
# the sender delivers anyway, and exit has its own budget).
FINALIZE_WAIT_MAX = 0.25


class Bridge(object):
    """Queue, sender thread and counters of one plugin instance (one per process)."""

    def __init__(self, config, encode=None, instance=None, pricing_modules=None, host=None):
        """``host``: a callable given this bridge's counters that returns the heartbeat's host
        fields (``host.host_fields`` bound to a plugin context), or ``None`` outside Hermes.
        ``pricing_modules``: where Hermes' pricing module is looked up (``sys.modules``)."""
        self.config = config
        self.endpoint = parse_endpoint(config.url)
        self.counters = drops.Counters()
        self.buffer = RetryBuffer(config.buffer_size, self.counters)
        self.heartbeat = Heartbeat(config, PLUGIN_VERSION, self.counters,
                                   host=None if host is None else host(self.counters))
        self._wake = Wakeup()
        self._enqueuer = Enqueuer(config.queue_size, config.batch_size, self.counters, self._wake)
        self._sender = Sender(config, self._enqueuer, self.buffer, self.counters, self.heartbeat,
                              Connection(self.endpoint, config.token), self._pricer(pricing_modules),
                              self._wake, instance or uuid.uuid4().hex, encode=encode)

    def _pricer(self, modules):
        return Pricer(self.counters) if modules is None else Pricer(self.counters, modules)

    @property
    def instance(self):
        return self._sender.instance

    @property
    def queue(self):
        return self._enqueuer.queue

    # ------------------------------------------------------------------ callbacks

    def hook_callback(self, hook, allowed=None):
        """The ``**kwargs`` callback of a flat Hermes hook (fields from contract.json;
        ``allowed``, when given, must agree with it, or names the fields of a hook outside it)."""
        return self._enqueuer.hook_callback(_spec_for(HOOK_SPECS, hook, allowed))

    def observer_callback(self, event, allowed=None):
        """The callback of an envelope event (``hook.payload["data"]``)."""
        return self._enqueuer.observer_callback(_spec_for(OBSERVER_SPECS, event, allowed))

    def finalize_callback(self, hook, allowed=None):
        """Like :meth:`hook_callback`, then a short bounded flush (Hermes' last-chance boundary
        before a session's process may go away).

        It waits at most ``min(flush_timeout, FINALIZE_WAIT_MAX)``, and not at all when the
        sidecar is known unreachable (back-off) or the sender is not running: Hermes is never
        held for a delivery that cannot happen.
        """
        enqueue = self._enqueuer.hook_callback(_spec_for(HOOK_SPECS, hook, allowed))
        sender_ref = self
        wait = min(self.config.flush_timeout, FINALIZE_WAIT_MAX)

        def callback(**kwargs):
            enqueue(**kwargs)
            sender = sender_ref._sender
            if sender.running and not sender.backing_off:
                try:
                    sender.flush(wait)
                except Exception:
                    sender_ref.counters.error("flush_error")

        callback.__name__ = "bridge_" + hook
        return callback

    def count_drop(self, hook, reason, count=1):
        self.counters.drop(hook, reason, count)

    # ------------------------------------------------------------------ control

    def start(self):
        """Start the sender thread; ``False`` when already running or already shut down."""
        return self._sender.start()

    def flush(self, timeout=None):
        """Ask the sender to deliver everything queued now; wait at most ``timeout`` seconds.

        ``True`` once the sender made its attempt (delivered, refused, or one failed try while
        the sidecar is down), ``False`` on timeout or when the sender is not running.
        """
        return self._sender.flush(self.config.flush_timeout if timeout is None else timeout)

    def shutdown(self, timeout=None):
        """Deliver what can be delivered within ``timeout`` (default 1 s), count the rest as
        ``shutdown`` and send a last heartbeat. Idempotent; safe to call from ``atexit``."""
        self._sender.stop(self.config.shutdown_timeout if timeout is None else timeout)

    def retire(self):
        """Stop in the background (a newer load of the plugin took over)."""
        self._sender.retire()

    def after_fork_in_child(self):
        """A forked child gets its own identity, empty queue and buffer, fresh counters and a
        fresh sender thread. The registered callbacks keep working: they hold the enqueuer,
        whose queue is emptied in place, and the wake-up signal, whose event is replaced."""
        self.counters.reset_after_fork()
        self.buffer.reset_after_fork()
        self._enqueuer.queue.clear()
        self._wake.reset_after_fork()
        was_running = self._sender.reset_after_fork(uuid.uuid4().hex)
        if was_running:
            self._sender.start()

    # ------------------------------------------------------------------ introspection

    def dropped(self):
        """A copy of the cumulative drop counters: ``{hook: {reason: count}}``."""
        return self.counters.dropped()

    def stats(self):
        """Delivery figures for tests, the driver and the benchmark (content-free)."""
        delivery = dict(self._sender.delivery)
        delivery.update({
            "instance": self.instance,
            "events_numbered": self._sender.events_numbered,
            "body_format": self._sender.body_format,
            "admitted_resets": self._sender.admitted_resets,
            "queue_depth": len(self._enqueuer),
            "buffer_depth": len(self.buffer),
            "dropped": self.dropped(),
            "errors": self.counters.errors(),
        })
        return delivery

    def heartbeat_line(self):
        """The ``plugin_heartbeat`` NDJSON line (no ``seq``: it is not a counted event)."""
        return self._sender._heartbeat_line()


def _spec_for(specs, hook, allowed):
    spec = specs.get(hook)
    if spec is None:
        if allowed is None:
            raise KeyError("no contract entry for %r" % hook)
        names = tuple(allowed)
        # A hook outside the contract: its strings must still be identifiers to cross.
        spec = HookSpec(hook=hook, sources=names, plain=names, transforms=(), private={},
                        usage_at=-1, flush=False, wire=names, grammars=("identifier",) * len(names))
    elif allowed is not None and tuple(allowed) != spec.wire:
        raise ValueError("%s: allow-list differs from contract.json" % hook)
    return spec
