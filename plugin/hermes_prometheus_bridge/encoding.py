"""NDJSON lines for the sidecar: one ``json.dumps`` per batch, one line per event.

The sender thread shares the GIL with Hermes, so a batch is encoded with a single call into the
C encoder instead of one call per event. The batch is a JSON array of envelopes whose first key
is ``event``; the array's commas between envelopes are turned into newlines. ``},{"event":``
cannot occur anywhere else: inside a JSON string every ``"`` is escaped, and ``data`` holds only
scalars and the flat ``usage`` object, never a list of objects.
"""

import json

from .fields import clean_data

_BOUNDARY = '},{"event":'
_NEWLINE_BOUNDARY = '}\n{"event":'
_encode_batch = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode


def encode_event(hook, observed_at, instance, seq, data):
    """One NDJSON line (ASCII ``str``, no newline) for an event, its ``data`` cleaned the way
    the batch path cleans it; raises when it cannot be encoded."""
    return _encode_batch({
        "event": hook, "observed_at": observed_at, "instance": instance, "seq": seq,
        "data": clean_data(data),
    })


def encode_batch(envelopes):
    """The lines of a list of envelope dicts (``event`` first), or raise ``ValueError`` /
    ``TypeError`` when any of them cannot be encoded."""
    if not envelopes:
        return []
    text = _encode_batch(envelopes)
    return text[1:-1].replace(_BOUNDARY, _NEWLINE_BOUNDARY).split("\n")


def encode_json(value):
    """A compact, strict JSON line (``str``) for anything else the plugin sends."""
    return _encode_batch(value)
