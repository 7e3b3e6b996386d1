"""Hermes Agent plugin that forwards content-free observer-hook events to the Prometheus sidecar.

Install into ``$HERMES_HOME/plugins/hermes_prometheus_bridge/`` (``hermes-prometheus-sidecar
install-plugin``) and enable with ``hermes plugins enable hermes_prometheus_bridge``.

Standard library only. Every callback copies a fixed allow-list of ids, names, enumerations and
numbers into a bounded in-memory queue and returns ``None`` within microseconds; a daemon thread
POSTs NDJSON batches to ``HERMES_SIDECAR_URL``. See ``bridge.py`` for the delivery rules and
``fields.py`` for exactly what leaves the process.
"""

import atexit
import logging
import os
import time
import weakref

from .bridge import PLUGIN_VERSION, Bridge
from .config import config_from_env, is_disabled
from .fields import (
    ERROR_FLAG_HOOKS,
    HOOK_FIELDS,
    OBSERVER_ERROR_FLAG_EVENTS,
    OBSERVER_FIELDS,
)

__version__ = PLUGIN_VERSION

logger = logging.getLogger("hermes_prometheus_bridge")
# Library convention: Hermes' logging configuration decides where warnings go; without one,
# stay silent rather than print to stderr.
logger.addHandler(logging.NullHandler())

# Hooks after which the bridge flushes before returning (Hermes' last-chance boundary).
FLUSH_AFTER_HOOKS = frozenset({"on_session_finalize"})

# Bridges started in this process: flushed at exit and renewed in forked children. Weak, so a
# test (or a plugin reload) that drops a bridge does not keep it alive.
_LIVE_BRIDGES = weakref.WeakSet()


def register(ctx):
    """Hermes entry point: register every mapped hook on ``ctx`` (nothing when disabled)."""
    environ = os.environ
    if is_disabled(environ):
        return None
    try:
        bridge = Bridge(config_from_env(environ))
    except Exception as exc:  # e.g. an unsupported URL scheme: warn, never break Hermes
        logger.warning("hermes_prometheus_bridge disabled: %s", exc)
        return None
    attach(ctx, bridge)
    start(bridge)
    return None


def attach(ctx, bridge):
    """Register the bridge's callbacks on a Hermes plugin context; returns the names registered.

    The envelope events are registered only when the host offers ``register_observer_hook``.
    """
    registered = []
    for hook, allowed in HOOK_FIELDS.items():
        if hook in FLUSH_AFTER_HOOKS:
            callback = bridge.finalize_callback(hook, allowed)
        else:
            callback = bridge.hook_callback(hook, allowed, error_flag=hook in ERROR_FLAG_HOOKS)
        if _try_register(ctx.register_hook, hook, callback):
            registered.append(hook)
    register_observer = getattr(ctx, "register_observer_hook", None)
    if callable(register_observer):
        for event, allowed in OBSERVER_FIELDS.items():
            callback = bridge.observer_callback(
                event, allowed, error_flag=event in OBSERVER_ERROR_FLAG_EVENTS)
            if _try_register(register_observer, event, callback):
                registered.append("observer:" + event)
    return registered


def start(bridge):
    """Start the sender thread and enrol the bridge for the exit flush and fork renewal."""
    bridge.start()
    _LIVE_BRIDGES.add(bridge)


def _try_register(register_fn, name, callback):
    # A host that rejects one name (older Hermes) must not cost us the other hooks.
    try:
        register_fn(name, callback)
        return True
    except Exception as exc:
        logger.warning("hermes_prometheus_bridge: could not register %s (%s)",
                       name, type(exc).__name__)
        return False


def _shutdown_live_bridges():
    """atexit: flush every live bridge within one shared budget (1 s by default)."""
    bridges = list(_LIVE_BRIDGES)
    if not bridges:
        return
    deadline = time.monotonic() + min(bridge.config.shutdown_timeout for bridge in bridges)
    for bridge in bridges:
        try:
            bridge.shutdown(max(0.0, deadline - time.monotonic()))
        except Exception:
            pass


def _renew_after_fork():
    for bridge in list(_LIVE_BRIDGES):
        try:
            bridge.after_fork_in_child()
        except Exception:
            pass


atexit.register(_shutdown_live_bridges)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_after_fork)
