"""Hermes Agent plugin that forwards content-free observer-hook events to the Prometheus sidecar.

Install into ``$HERMES_HOME/plugins/hermes_prometheus_bridge/`` (``hermes-prometheus-sidecar
install-plugin``) and enable with ``hermes plugins enable hermes_prometheus_bridge``.

Standard library only. Every callback copies a fixed allow-list of ids, names, enumerations and
numbers (``contract.json``) into a bounded in-memory queue and returns ``None`` within
microseconds; a daemon thread POSTs NDJSON batches to ``HERMES_SIDECAR_URL``. See ``bridge.py``
for the parts and the delivery rules.
"""

import atexit
import logging
import os
import sys
import threading
import time
import weakref

from .bridge import PLUGIN_VERSION, Bridge
from .config import config_from_env, is_disabled
from .contract import HOOK_SPECS, OBSERVER_SPECS
from .host import hermes_version, host_fields
from .sender import THREAD_NAME

__version__ = PLUGIN_VERSION

logger = logging.getLogger("hermes_prometheus_bridge")
# Library convention: Hermes' logging configuration decides where warnings go; without one,
# stay silent rather than print to stderr.
logger.addHandler(logging.NullHandler())

# The module Hermes keeps its hook list in (read, never imported: outside Hermes it is absent).
HOST_HOOKS_MODULE = "hermes_cli.plugins"

# Bridges started in this process: flushed at exit and renewed in forked children. Weak, so a
# test (or a plugin reload) that drops a bridge does not keep it alive.
_LIVE_BRIDGES = weakref.WeakSet()


def register(ctx):
    """Hermes entry point: register every supported hook on ``ctx`` (nothing when disabled)."""
    environ = os.environ
    if is_disabled(environ):
        return None
    version = hermes_version()
    try:
        bridge = Bridge(config_from_env(environ),
                        host=lambda counters: host_fields(ctx, counters, version))
    except Exception as exc:  # e.g. an unsupported URL scheme: warn, never break Hermes
        logger.warning("hermes_prometheus_bridge disabled: %s", exc)
        return None
    # Hermes runs on_unload callbacks when it unloads or reloads a plugin. Several plugin
    # managers (profiles) may share a process, so only a host without on_unload makes this load
    # retire the sender threads earlier loads left behind.
    if not _stop_on_unload(ctx, bridge):
        retire_earlier_loads()
    attach(ctx, bridge)
    start(bridge)
    return None


def _stop_on_unload(ctx, bridge):
    on_unload = getattr(ctx, "on_unload", None)
    if not callable(on_unload):
        return False
    try:
        on_unload(bridge.retire)
        return True
    except Exception as exc:
        logger.debug("hermes_prometheus_bridge: on_unload refused (%s)", type(exc).__name__)
        return False


def host_hooks(modules=None):
    """The host's ``VALID_HOOKS`` when Hermes exposes it, else ``None`` (register everything)."""
    module = (sys.modules if modules is None else modules).get(HOST_HOOKS_MODULE)
    hooks = getattr(module, "VALID_HOOKS", None)
    if isinstance(hooks, (set, frozenset, list, tuple)):
        return frozenset(hooks)
    return None


def attach(ctx, bridge, supported=None):
    """Register the bridge's callbacks on a Hermes plugin context; returns the names registered.

    Only hooks the host knows are registered when it exposes its list (``supported``, default
    :func:`host_hooks`); the skipped ones are logged once. The envelope events are registered
    only when the host offers ``register_observer_hook``.
    """
    if supported is None:
        supported = host_hooks()
    registered, skipped = [], []
    for hook, spec in HOOK_SPECS.items():
        if supported is not None and hook not in supported:
            skipped.append(hook)
            continue
        if spec.flush:
            callback = bridge.finalize_callback(hook)
        else:
            callback = bridge.hook_callback(hook)
        if _try_register(ctx.register_hook, hook, callback):
            registered.append(hook)
    if skipped:
        logger.info("hermes_prometheus_bridge: this Hermes does not offer %s; not registered",
                    ", ".join(skipped))
    register_observer = getattr(ctx, "register_observer_hook", None)
    if callable(register_observer):
        for event in OBSERVER_SPECS:
            callback = bridge.observer_callback(event)
            if _try_register(register_observer, event, callback):
                registered.append("observer:" + event)
    return registered


def start(bridge):
    """Start the sender thread and enrol the bridge for the exit flush and fork renewal."""
    bridge.start()
    _LIVE_BRIDGES.add(bridge)


def retire_earlier_loads():
    """Stop sender threads left by an earlier load of this plugin in this process.

    A reload imports this package afresh, so module state cannot find the old bridge; its
    thread can (it carries a ``retire`` callable under a fixed attribute name).
    """
    retired = 0
    for thread in threading.enumerate():
        retire = getattr(thread, "hermes_prometheus_bridge_retire", None)
        if thread.name == THREAD_NAME and callable(retire):
            try:
                retire()
                retired += 1
            except Exception:
                logger.debug("hermes_prometheus_bridge: could not retire an earlier sender")
    return retired


def _try_register(register_fn, name, callback):
    # A host that rejects one name must not cost us the other hooks.
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
        except Exception as exc:
            bridge.counters.error("exit_flush_error")
            logger.debug("hermes_prometheus_bridge: exit flush failed (%s)", type(exc).__name__)


def _renew_after_fork():
    """In a forked child: each bridge starts over (its own instance id, counters, thread). A
    failure is counted on that bridge and shows in its next heartbeat."""
    for bridge in list(_LIVE_BRIDGES):
        try:
            bridge.after_fork_in_child()
        except Exception as exc:
            bridge.counters.error("fork_renew_error")
            logger.debug("hermes_prometheus_bridge: renewal after fork failed (%s)",
                         type(exc).__name__)


atexit.register(_shutdown_live_bridges)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_after_fork)
