"""A stand-in for Hermes' plugin manager, faithful to how it really calls hook callbacks.

Reproduces ``PluginDispatchMixin.invoke_hook`` from ``hermes_cli/plugins_dispatch.py``
(NousResearch/hermes-agent, read at commit 006a5aeb), so tests and the driver exercise the
plugin the way Hermes does:

* callbacks are called with keyword arguments only; a ``**kwargs`` callback gets
  ``dict(payload)`` (a shallow copy per callback), a narrow signature only the names it declares;
* ``telemetry_schema_version`` is injected with ``setdefault`` for every hook except
  ``gateway_platform_event``;
* hooks in the timeout-bounded set run on a daemon worker thread the caller waits for (at most
  ``hook_callback_timeout`` seconds; a worker that overruns is abandoned, never joined, its
  callback suppressed for 60 s, and skipped while a call with the same identity still runs or
  three abandoned workers exist); ``subagent_stop`` and unlisted hooks run on the caller thread;
* exceptions (including ``SystemExit``) are swallowed and recorded; ``pre_tool_call`` fails
  closed (a raise or timeout becomes a block directive);
* non-``None`` return values are collected and returned.

Directory plugins are imported the way Hermes' loader does: as the package
``hermes_plugins.<name>`` built from the plugin directory, then ``register(ctx)`` is called.

The envelope variant (``ctx.register_observer_hook``, seed 004) is optional: its callbacks
receive one ``hook`` object whose ``payload`` is a read-only ``{"event": ..., "data": {...}}``.
"""

import contextlib
import importlib.metadata
import importlib.util
import inspect
import os
import sys
import threading
import time
import types

OBSERVER_SCHEMA_VERSION = "hermes.observer.v1"

HOOK_TIMEOUT_BOUNDED_HOOKS = frozenset({
    "post_tool_call", "transform_terminal_output", "transform_tool_result", "transform_llm_output",
    "pre_llm_call", "post_llm_call", "pre_api_request", "post_api_request", "api_request_error",
    "pre_auxiliary_call", "post_auxiliary_call", "pre_verify", "on_session_start",
    "on_session_end",
})
HOOK_TIMEOUT_FAIL_CLOSED_HOOKS = frozenset({"pre_tool_call", "pre_tts_synthesis"})
HOOK_CALLER_THREAD_HOOKS = frozenset({"subagent_stop"})
HOOK_TIMEOUT_SUPPRESSION_SECONDS = 60.0
HOOK_MAX_ABANDONED_WORKERS = 3
DEFAULT_HOOK_CALLBACK_TIMEOUT = 30.0
PRE_TOOL_CALL_TIMEOUT_BLOCK_MESSAGE = "pre_tool_call plugin callback timed out or is still running"

# Subset of hermes_cli.plugins.VALID_HOOKS relevant here plus the documented auxiliary hooks;
# unknown names are stored anyway (Hermes only warns), as in PluginContext.register_hook.
KNOWN_HOOKS = frozenset({
    "pre_tool_call", "post_tool_call", "transform_terminal_output", "transform_tool_result",
    "transform_llm_output", "pre_llm_call", "post_llm_call", "pre_verify", "pre_api_request",
    "post_api_request", "api_request_error", "transform_api_error_classification",
    "on_session_start", "on_session_end", "on_session_finalize", "on_session_reset",
    "on_skill_lifecycle", "subagent_start", "subagent_stop", "pre_gateway_dispatch",
    "agent_loop_stopped", "pre_approval_request", "post_approval_response",
    "gateway_platform_event", "pre_command", "pre_auxiliary_call", "post_auxiliary_call",
    "on_stream_start", "on_stream_delta", "on_stream_end", "on_interim_message",
})

# hermes_cli/plugins.py VALID_HOOKS as stored for NousResearch/hermes-agent (read for this
# harness; the July 2026 commit has no pre_auxiliary_call/post_auxiliary_call).
HERMES_VALID_HOOKS = frozenset({
    "pre_tool_call", "post_tool_call", "transform_terminal_output", "transform_tool_result",
    "transform_llm_output", "pre_llm_call", "post_llm_call", "on_stream_start",
    "on_stream_delta", "on_stream_end", "on_interim_message", "pre_verify", "pre_api_request",
    "post_api_request", "api_request_error", "transform_api_error_classification",
    "on_session_start", "on_session_end", "on_session_finalize", "on_session_reset",
    "on_skill_lifecycle", "subagent_start", "subagent_stop", "pre_gateway_dispatch",
    "agent_loop_stopped", "pre_approval_request", "post_approval_response",
    "on_room_member_activity", "pre_transcription", "kanban_task_claimed",
    "kanban_task_completed", "kanban_task_blocked", "on_kanban_worker_spawned",
    "on_kanban_worker_exited", "on_kanban_worker_stale_claim", "on_kanban_task_updated",
    "on_kanban_dispatch_tick", "gateway_platform_event", "pre_command",
})

# hermes_cli/plugins.py VALID_HOOKS of Hermes 0.21.3 (00067189): the list above plus the
# auxiliary-call hooks.
HERMES_021_VALID_HOOKS = HERMES_VALID_HOOKS | frozenset({"pre_auxiliary_call", "post_auxiliary_call"})
HERMES_021_VERSION = "0.21.3"

_SKIPPED = object()


@contextlib.contextmanager
def host_hook_list(valid_hooks=HERMES_VALID_HOOKS, version=None):
    """Expose ``hermes_cli.plugins.VALID_HOOKS`` the way a running Hermes does (the module is
    in ``sys.modules``), for the duration of the block; ``version`` is ``hermes_cli.__version__``
    (hermes_cli/__init__.py: "0.21.3" at 00067189)."""
    saved = {name: sys.modules.get(name) for name in ("hermes_cli", "hermes_cli.plugins")}
    package = types.ModuleType("hermes_cli")
    package.__path__ = []
    if version is not None:
        package.__version__ = version
    plugins = types.ModuleType("hermes_cli.plugins")
    plugins.VALID_HOOKS = set(valid_hooks)
    package.plugins = plugins
    sys.modules["hermes_cli"] = package
    sys.modules["hermes_cli.plugins"] = plugins
    try:
        yield plugins
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _call_identity(kwargs):
    """``tool_call_id``, else ``turn_id``: what tells concurrent calls of one callback apart."""
    for field in ("tool_call_id", "turn_id"):
        value = kwargs.get(field)
        if isinstance(value, str) and value:
            return value
    return None


def hook_callback_kwargs(callback, payload):
    """What Hermes passes: everything (a fresh dict) to ``**kwargs`` callbacks, else only the
    declared keyword names."""
    try:
        parameters = inspect.signature(callback).parameters
    except (TypeError, ValueError):
        return dict(payload)
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(payload)
    keyword_kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY}
    return {name: value for name, value in payload.items()
            if name in parameters and parameters[name].kind in keyword_kinds}


class HookFailure(object):
    """One swallowed callback failure (what Hermes would log)."""

    def __init__(self, hook_name, callback, exc):
        self.hook_name = hook_name
        self.callback = callback
        self.exc = exc

    def __repr__(self):
        return "HookFailure(%s, %s, %r)" % (
            self.hook_name, getattr(self.callback, "__name__", self.callback), self.exc)


class ObserverHook(object):
    """What an envelope-variant observer callback receives: ``hook.payload`` is frozen."""

    __slots__ = ("payload",)

    def __init__(self, event, data):
        self.payload = types.MappingProxyType(
            {"event": event, "data": types.MappingProxyType(dict(data))})


class PluginManager(object):
    """Holds registered callbacks and invokes them with Hermes' dispatch semantics."""

    def __init__(self, hook_callback_timeout=DEFAULT_HOOK_CALLBACK_TIMEOUT):
        self.hook_callback_timeout = hook_callback_timeout
        self._hooks = {}
        self._observer_hooks = {}
        self.failures = []
        self.warnings = []
        self.skipped = []
        self._lock = threading.Lock()
        self._running = {}
        self._suppressed_until = {}
        self._abandoned = {}

    # -- registration -------------------------------------------------------------------

    def add_hook(self, hook_name, callback):
        if hook_name not in KNOWN_HOOKS:
            self.warnings.append("unknown hook %s" % hook_name)
        self._hooks.setdefault(hook_name, []).append(callback)

    def add_observer_hook(self, event, callback):
        self._observer_hooks.setdefault(event, []).append(callback)

    def has_hook(self, hook_name):
        return bool(self._hooks.get(hook_name))

    def has_observer_hook(self, event):
        return bool(self._observer_hooks.get(event))

    def hook_names(self):
        return sorted(self._hooks)

    def observer_event_names(self):
        return sorted(self._observer_hooks)

    # -- dispatch -----------------------------------------------------------------------

    def invoke_hook(self, hook_name, **kwargs):
        """Call every callback of ``hook_name``; return their non-``None`` results."""
        if hook_name != "gateway_platform_event":
            kwargs.setdefault("telemetry_schema_version", OBSERVER_SCHEMA_VERSION)
        results = []
        timeout = self.hook_callback_timeout
        use_timeout = (
            timeout > 0 and hook_name not in HOOK_CALLER_THREAD_HOOKS
            and (hook_name in HOOK_TIMEOUT_BOUNDED_HOOKS
                 or hook_name in HOOK_TIMEOUT_FAIL_CLOSED_HOOKS))
        fail_closed = hook_name in HOOK_TIMEOUT_FAIL_CLOSED_HOOKS
        for callback in list(self._hooks.get(hook_name, [])):
            try:
                if use_timeout:
                    result = self._run_bounded(hook_name, callback, kwargs, timeout)
                    if result is _SKIPPED:
                        self.skipped.append(hook_name)
                        if fail_closed:
                            results.append({"action": "block",
                                            "message": PRE_TOOL_CALL_TIMEOUT_BLOCK_MESSAGE})
                        continue
                else:
                    result = callback(**hook_callback_kwargs(callback, kwargs))
                if result is not None:
                    results.append(result)
            except (Exception, SystemExit) as exc:
                self.failures.append(HookFailure(hook_name, callback, exc))
                if fail_closed:
                    results.append({"action": "block", "message": "%s plugin callback %s raised %s" % (
                        hook_name, getattr(callback, "__name__", repr(callback)),
                        type(exc).__name__)})
        return results

    def emit_observer(self, event, data):
        """Deliver one envelope event to ``register_observer_hook`` callbacks (caller thread;
        exceptions are caught and recorded, as the variant documents)."""
        data = dict(data)
        data.setdefault("telemetry_schema_version", OBSERVER_SCHEMA_VERSION)
        results = []
        for callback in list(self._observer_hooks.get(event, [])):
            try:
                result = callback(ObserverHook(event, data))
                if result is not None:
                    results.append(result)
            except (Exception, SystemExit) as exc:
                self.failures.append(HookFailure(event, callback, exc))
        return results

    def _run_bounded(self, hook_name, callback, kwargs, timeout):
        """The callback on a daemon worker the caller waits for; ``_SKIPPED`` when gated or
        timed out (the worker is abandoned, never joined)."""
        suppression_key = (hook_name, id(callback))
        gate_key = suppression_key + (_call_identity(kwargs),)
        token = object()
        with self._lock:
            suppressed_until = self._suppressed_until.get(suppression_key)
            if gate_key in self._running or (
                    suppressed_until is not None and suppressed_until > time.monotonic()):
                return _SKIPPED
            abandoned = self._abandoned.get(suppression_key)
            if abandoned and len(abandoned) >= HOOK_MAX_ABANDONED_WORKERS:
                return _SKIPPED
            if suppressed_until is not None:
                self._suppressed_until.pop(suppression_key, None)
            self._running[gate_key] = token

        done = threading.Event()
        outcome = {}

        def release():
            with self._lock:
                if self._running.get(gate_key) is token:
                    self._running.pop(gate_key, None)
                    left = self._abandoned.get(suppression_key)
                    if left is not None:
                        left.discard(gate_key)
                        if not left:
                            self._abandoned.pop(suppression_key, None)

        def runner():
            try:
                outcome["value"] = callback(**hook_callback_kwargs(callback, kwargs))
            except BaseException as exc:
                outcome["exc"] = exc
            finally:
                release()
                done.set()

        name = ("hermes-hook-%s" % getattr(callback, "__name__", "callback"))[:40]
        worker = threading.Thread(target=runner, name=name, daemon=True)
        worker.start()
        if not done.wait(timeout=timeout):
            with self._lock:
                self._suppressed_until[suppression_key] = (
                    time.monotonic() + HOOK_TIMEOUT_SUPPRESSION_SECONDS)
                if self._running.get(gate_key) is token:
                    self._abandoned.setdefault(suppression_key, set()).add(gate_key)
            return _SKIPPED
        if "exc" in outcome:
            raise outcome["exc"]
        return outcome.get("value")


class PluginContext(object):
    """The ``ctx`` handed to ``register(ctx)``: ``register_hook`` always, and
    ``register_observer_hook`` only when the manager was built with ``observer_hooks=True``."""

    def __init__(self, manager, name, observer_hooks=False, profile=None):
        self._manager = manager
        self.plugin_id = name
        self.unload_callbacks = []
        if observer_hooks:
            self.register_observer_hook = self._register_observer_hook
        if profile is not None:
            # hermes_cli/plugins.py PluginContext.profile_name (Hermes 0.21, 00067189): the active
            # profile of the manager that loads the plugin.
            self.profile_name = profile

    def register_hook(self, hook_name, callback):
        self._manager.add_hook(hook_name, callback)

    def on_unload(self, callback):
        """As ``PluginContext.on_unload`` in hermes_cli/plugins.py: run at unload, errors
        logged, never raised."""
        self.unload_callbacks.append(callback)

    def unload(self):
        for callback in reversed(self.unload_callbacks):
            try:
                callback()
            except Exception as exc:
                self._manager.failures.append(HookFailure("on_unload", callback, exc))

    def _register_observer_hook(self, event, callback):
        self._manager.add_observer_hook(event, callback)


def load_directory_plugin(plugin_dir, manager, observer_hooks=False, profile=None):
    """Import ``plugin_dir`` as ``hermes_plugins.<name>`` and call its ``register(ctx)``.

    Returns the module. A fresh module object is created each call (as after a plugin reload, or
    as each profile's plugin manager of a multiplexing gateway loads its own), so tests get
    independent plugin state. ``profile`` is the context's ``profile_name`` (Hermes 0.21).
    """
    plugin_dir = os.path.abspath(plugin_dir)
    name = os.path.basename(plugin_dir.rstrip(os.sep))
    if not os.path.isfile(os.path.join(plugin_dir, "plugin.yaml")):
        raise FileNotFoundError("no plugin.yaml in %s" % plugin_dir)
    parent = sys.modules.get("hermes_plugins")
    if parent is None:
        parent = types.ModuleType("hermes_plugins")
        parent.__path__ = []
        sys.modules["hermes_plugins"] = parent
    module_name = "hermes_plugins." + name
    for loaded in [key for key in sys.modules if key == module_name or key.startswith(module_name + ".")]:
        del sys.modules[loaded]
    spec = importlib.util.spec_from_file_location(
        module_name, os.path.join(plugin_dir, "__init__.py"),
        submodule_search_locations=[plugin_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    context = PluginContext(manager, name, observer_hooks=observer_hooks, profile=profile)
    module.register(context)
    module.hermes_test_context = context  # lets a test unload it as Hermes would
    return module


# hermes_cli/plugins_discovery.py ENTRY_POINTS_GROUP (00067189): pip-installed plugins.
ENTRY_POINTS_GROUP = "hermes_agent.plugins"


def _select_entry_point_group(entry_points, group):
    """As ``_select_entry_point_group`` in hermes_cli/plugins_discovery.py: one group across the
    ``importlib.metadata`` APIs of Python 3.9 (a dict) and 3.10+ (``select``)."""
    if hasattr(entry_points, "select"):
        return list(entry_points.select(group=group))
    if isinstance(entry_points, dict):
        return list(entry_points.get(group, []))
    return [ep for ep in entry_points if ep.group == group]


def load_entry_point_plugin(name, manager, profile=None):
    """Load the pip-installed plugin ``name`` the way Hermes' loader does, and call ``register``.

    ``discover_entrypoint_manifests`` names each plugin after its entry point (``ep.name`` is the
    key ``hermes plugins enable`` takes); ``_load_entrypoint_module`` finds the entry point of
    that name in the group and ``ep.load()``s it; ``_load_plugin_scoped`` then calls the loaded
    object's ``register(ctx)`` (a plugin without one is reported, not loaded). Returns the module.
    """
    for entry_point in _select_entry_point_group(importlib.metadata.entry_points(), ENTRY_POINTS_GROUP):
        if entry_point.name == name:
            module = entry_point.load()
            break
    else:
        raise ImportError("Entry point '%s' not found in group '%s'" % (name, ENTRY_POINTS_GROUP))
    register = getattr(module, "register", None)
    if register is None:
        raise ImportError("plugin '%s' has no register() function" % name)
    context = PluginContext(manager, name, profile=profile)
    register(context)
    module.hermes_test_context = context
    return module
