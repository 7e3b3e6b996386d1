"""Settings from ``HERMES_SIDECAR_*`` environment variables, read once at ``register(ctx)``.

A malformed value falls back to its default (and is logged once): a typo in an environment
variable must never stop Hermes from loading its other plugins.
"""

import logging
import math
from collections import namedtuple

logger = logging.getLogger("hermes_prometheus_bridge")

DEFAULT_URL = "http://127.0.0.1:9479/v1/events"

BridgeConfig = namedtuple(
    "BridgeConfig",
    [
        "url",                 # sidecar ingest endpoint
        "token",               # bearer token or None
        "queue_size",          # events waiting for the sender thread (callback side)
        "buffer_size",         # events serialized and waiting for delivery (retry buffer)
        "batch_size",          # events per POST
        "flush_interval",      # seconds between sends while events trickle in
        "timeout",             # seconds per HTTP request
        "heartbeat_interval",  # seconds between plugin_heartbeat lines
        "shutdown_timeout",    # seconds the exit flush may take in total
        "flush_timeout",       # seconds on_session_finalize may wait for delivery
        "backoff_initial",     # first retry delay (seconds), doubled per failure
        "backoff_max",         # cap of the retry delay (seconds)
        "retry_after_max",     # cap on a server's Retry-After (seconds)
        "compact",             # send compact bodies once the sidecar advertises them
    ],
)

DEFAULTS = BridgeConfig(
    url=DEFAULT_URL,
    token=None,
    queue_size=10000,
    buffer_size=10000,
    batch_size=2000,
    flush_interval=0.2,
    timeout=2.0,
    heartbeat_interval=5.0,
    shutdown_timeout=1.0,
    flush_timeout=1.0,
    backoff_initial=0.25,
    backoff_max=10.0,
    retry_after_max=30.0,
    compact=True,
)


def is_disabled(env):
    """``HERMES_SIDECAR_DISABLED`` set to a true-ish value turns the plugin into a no-op."""
    value = env.get("HERMES_SIDECAR_DISABLED", "").strip().lower()
    return value in ("1", "true", "yes", "on")


def _compact(env):
    """``HERMES_SIDECAR_COMPACT`` set to a false-ish value keeps every body NDJSON (for a proxy
    or a capture that must read them)."""
    value = env.get("HERMES_SIDECAR_COMPACT", "").strip().lower()
    return value not in ("0", "false", "no", "off")


def _positive_int(env, name, default):
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = 0
    if value < 1:
        logger.warning("hermes_prometheus_bridge: ignoring %s (not a positive integer)", name)
        return default
    return value


def _positive_seconds(env, name, default):
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        logger.warning("hermes_prometheus_bridge: ignoring %s (not a positive number)", name)
        return default
    return value


def _token(env):
    token = env.get("HERMES_SIDECAR_TOKEN", "").strip()
    if token:
        return token
    path = env.get("HERMES_SIDECAR_TOKEN_FILE", "").strip()
    if not path:
        return None
    try:
        with open(path, "r", encoding="utf-8") as handle:
            token = handle.read().strip()
    except OSError:
        # The path is configuration, not content; the file's text is never logged.
        logger.warning("hermes_prometheus_bridge: cannot read HERMES_SIDECAR_TOKEN_FILE")
        return None
    return token or None


def config_from_env(env):
    """Build a :data:`BridgeConfig` from a mapping such as ``os.environ``."""
    url = env.get("HERMES_SIDECAR_URL", "").strip() or DEFAULT_URL
    return DEFAULTS._replace(
        url=url,
        token=_token(env),
        queue_size=_positive_int(env, "HERMES_SIDECAR_QUEUE_SIZE", DEFAULTS.queue_size),
        buffer_size=_positive_int(env, "HERMES_SIDECAR_BUFFER_SIZE", DEFAULTS.buffer_size),
        batch_size=_positive_int(env, "HERMES_SIDECAR_BATCH_SIZE", DEFAULTS.batch_size),
        flush_interval=_positive_seconds(
            env, "HERMES_SIDECAR_FLUSH_INTERVAL", DEFAULTS.flush_interval),
        timeout=_positive_seconds(env, "HERMES_SIDECAR_TIMEOUT", DEFAULTS.timeout),
        heartbeat_interval=_positive_seconds(
            env, "HERMES_SIDECAR_HEARTBEAT_INTERVAL", DEFAULTS.heartbeat_interval),
        compact=_compact(env),
    )
