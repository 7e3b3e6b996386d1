"""NDJSON lines for the sidecar: one call into the C JSON encoder per batch.

The sender thread shares the GIL with Hermes, so the ``data`` objects of a batch are encoded in
one ``encode`` of ``[{"data": ...}, ...]`` and split at ``}},{"data":``, which cannot occur
anywhere else: inside a JSON string every ``"`` is escaped, and ``data`` holds only scalars and
the flat ``usage`` object. Each line is then the event's constant envelope text (per hook and
instance, formatted once) with ``observed_at``, ``seq`` and the data text filled in.
"""

import json

from .fields import clean_data
from .rows import _REPORTED_KEYS, MICROS_NAMES, ROW_NAMES, ROW_SPECS, USAGE_KEYS, row_data

_DATA_BOUNDARY = '}},{"data":'
_encode_batch = json.JSONEncoder(allow_nan=False, separators=(",", ":"),
                                 check_circular=False).encode


def encode_event(hook, observed_at, instance, seq, data):
    """One NDJSON line (ASCII ``str``, no newline) for an event, its ``data`` cleaned the way
    the batch path cleans it; raises when it cannot be encoded."""
    return _encode_batch({
        "event": hook, "observed_at": observed_at, "instance": instance, "seq": seq,
        "data": clean_data(data),
    })


def line_template(hook, instance):
    """The envelope of one hook's lines: ``template % (observed_at, seq, data_text)``.

    ``observed_at`` is written with microsecond precision (``%.6f``, a JSON number): what
    ``time.time()`` resolves, at about four fifths of the cost of the shortest ``repr`` of a
    ten-digit epoch float (~270 against ~335 ns). Hook names and the instance id are identifiers (no escaping
    needed), checked here.
    """
    for text in (hook, instance):
        if not text.replace("_", "").isalnum() or not text.isascii():
            raise ValueError("not an identifier: %r" % (text,))
    return ('{"event":"%s","observed_at":%%.6f,"instance":"%s","seq":%%d,"data":%%s}}'
            % (hook, instance))


def encode_data_texts(datas):
    """The JSON text of each ``data`` dict, without its closing brace, or raise ``ValueError``
    / ``TypeError`` when any of them cannot be encoded."""
    if not datas:
        return []
    text = _encode_batch([{"data": data} for data in datas])
    return text[9:-3].split(_DATA_BOUNDARY)


def encode_json(value):
    """A compact, strict JSON line (``str``) for anything else the plugin sends."""
    return _encode_batch(value)


def row_data_text(row):
    """The JSON text of a row's ``data``, without its closing brace (as a line template takes
    it): the JSON line form of an event buffered as a row."""
    return _encode_batch(row_data(row))[:-1]


# The compact body (docs/contract.md, "Compact encoding"): what the sidecar advertises in
# ``Accept-Post`` when it reads it, and the version this plugin writes.
COMPACT_MEDIA_TYPE = "application/x-hermes-events-compact+json"
COMPACT_VERSION = 1


def compact_schema_text():
    """The ``schema`` member of every compact body: per row code, the event name and the names
    of its row values; then the usage keys and flags a usage list stands for, and the names of
    the values sent as integer microseconds (numbers in seconds)."""
    return encode_json({
        "events": [[spec.hook] + list(names) for spec, names in zip(ROW_SPECS, ROW_NAMES)],
        "usage": list(USAGE_KEYS),
        "usage_flags": list(_REPORTED_KEYS),
        "micros": sorted(set().union(*MICROS_NAMES)),
    })


def compact_prefix(instance, schema_text):
    """The constant head of an instance's compact bodies: ``prefix % first_seq`` is followed by
    the optional heartbeat member and the rows (:func:`compact_body`)."""
    line_template("compact", instance)  # the instance id is an identifier (checked there)
    return ('{"v":%d,"instance":"%s","schema":%s,"seq":' % (COMPACT_VERSION, instance,
                                                            schema_text)).replace("%", "%%") + "%d"


def compact_body(prefix, first_seq, rows, heartbeat_line=None):
    """One compact body (ASCII bytes): the rows of consecutive events from ``first_seq``, with
    the heartbeat line, when given, applied before them."""
    parts = [prefix % first_seq]
    if heartbeat_line is not None:
        parts.append(',"heartbeat":')
        parts.append(heartbeat_line)
    parts.append(',"events":')
    parts.append(_encode_batch(rows))
    parts.append("}")
    return "".join(parts).encode("ascii")
