"""What the heartbeat says about its host: the Hermes version and the Hermes profile.

Both are read once, in ``register(ctx)``, never on a hook's thread. Hermes reads its own version
as ``hermes_cli.plugins_manifest.running_hermes_version`` does (the installed ``hermes-agent``
distribution, else ``hermes_cli.__version__`` of a source checkout); the profile is
``ctx.profile_name`` (``hermes_cli/plugins.py`` ``PluginContext.profile_name``: ``default``, a
``~/.hermes/profiles/<name>`` id, or ``custom``). Each crosses only when it matches its grammar; a
value that does not is left out and counted as refused, like any event field.
"""

import re
import sys

HERMES_DISTRIBUTION = "hermes-agent"
HERMES_PACKAGE = "hermes_cli"

# 0.21.3, 0.21.5rc1, 0.22.0+local: a version, never a path or a sentence.
VERSION = re.compile(r"[0-9][0-9A-Za-z.+\-]{0,31}")
# Hermes profile ids are directory names under ~/.hermes/profiles/.
PROFILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}")
_MAX_CHARS = 64


def hermes_version(modules=None, distribution_version=None):
    """The running Hermes version string, or ``None`` when none can be read."""
    if distribution_version is None:
        distribution_version = _distribution_version
    version = distribution_version(HERMES_DISTRIBUTION)
    if version is None:
        package = (sys.modules if modules is None else modules).get(HERMES_PACKAGE)
        version = getattr(package, "__version__", None)
    return version


def _distribution_version(name):
    try:
        import importlib.metadata
        return importlib.metadata.version(name)
    except Exception:
        return None


def profile_name(ctx):
    """``ctx.profile_name`` when the host has it (Hermes 0.21), else ``None``."""
    try:
        return getattr(ctx, "profile_name", None)
    except Exception:
        return None


def host_fields(ctx, counters, version=None):
    """``{"hermes_version": ..., "profile": ...}`` with the values that pass their grammar; each
    present value that does not is counted as refused under its field name."""
    fields = {}
    for field, value, grammar in (("hermes_version", version, VERSION),
                                  ("profile", profile_name(ctx), PROFILE)):
        if value is None:
            continue
        if type(value) is str and len(value) <= _MAX_CHARS and grammar.fullmatch(value):
            fields[field] = value
        else:
            counters.refuse(field)
    return fields
