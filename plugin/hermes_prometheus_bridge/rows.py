"""Positional rows: the compact form of an event's ``data``, built by a function generated per
hook from ``contract.json``.

A row is ``(code, observed_at_us, value, value, ...)``: ``code`` indexes :data:`ROW_SPECS`
(hooks, then envelope events), ``observed_at_us`` is the observation time in integer
microseconds, and the values follow :func:`row_names` of that spec (its plain fields, then its
transformed ones, then, for a priced call, ``cost_usd`` and ``cost_status``); ``None`` is an
absent field, and a number in seconds is the nearest integer microsecond (:data:`MICROS_NAMES`).
``usage`` is a tuple in ``USAGE_KEYS`` order, optionally followed by the
``reported_usage_fields`` flags (:func:`compact_usage`).

The builders apply exactly the rules of :func:`fields.event_data`, field by field: each field
first tries the one case real Hermes values take (an exact ``str`` already admitted by its
grammar, a finite ``float``, an ``int`` in range, a ``bool``), written out inline; anything
else goes through :func:`plain_value`, which is ``event_data``'s rule for one value. A string
crosses only when its field's grammar matched it whole: either now, or earlier in this process
(:class:`Admitted`, a bounded set per grammar of strings that matched it). The code is
generated so that no loop over field descriptors runs per event on the sender thread, which
shares the GIL with Hermes.

:class:`ColumnBuilder` does the same for many events of one hook at once, a field at a time in
C-level passes (a set of types, a set difference against the admitted strings, ``min``/``max``
or ``isfinite``), and hands the events to the per-event builder whenever a column holds anything
but the one case, so the rule applied is the same value for value (plugin/tests/test_rows.py).
"""

import itertools
import math
import operator

from .contract import CONTRACT, GRAMMARS, HOOK_SPECS, OBSERVER_SPECS, USAGE_KEYS
from .fields import (MAX_GRAMMAR_CHARS, MISSING, REPORTED_USAGE_FIELDS,
                     TRANSFORM_FUNCTIONS, _CANONICAL_USAGE_KEYS, _INT_LIMIT, _REFUSING_TRANSFORMS,
                     _canonical_usage, canonical_token_numbers, clean_scalar, clean_usage)

# Distinct strings remembered per grammar before the set starts over (ids are mostly unique:
# the set is what repeats within a few thousand events, e.g. model, provider, turn and session).
ADMITTED_LIMIT = 4096

# Fields a priced hook carries after its contract fields.
PRICED_NAMES = ("cost_usd", "cost_status")

# Number fields in seconds travel in rows as integer microseconds (the nearest): the JSON
# encoder writes an int's digits in a fraction of the time a float's shortest repr takes, and a
# time Hermes took with time.time() has no finer resolution to lose.
MICROS_UNITS = frozenset({"seconds", "epoch seconds"})
# Seconds at or beyond this magnitude (31.7 million years) are refused: nothing Hermes measures
# comes near, and their microseconds would overflow a float.
MAX_MICROS_SECONDS = 1e15

# Every spec that can become a row, by code: hooks first, then envelope events.
ROW_SPECS = tuple(HOOK_SPECS.values()) + tuple(OBSERVER_SPECS.values())
_ENTRIES = (tuple(CONTRACT["hooks"][spec.hook] for spec in HOOK_SPECS.values())
            + tuple(CONTRACT["observer"][spec.hook] for spec in OBSERVER_SPECS.values()))
CODES = {id(spec): code for code, spec in enumerate(ROW_SPECS)}

_REPORTED_KEYS = tuple(CONTRACT["usage_flags"][REPORTED_USAGE_FIELDS])
_USAGE_COUNT = len(USAGE_KEYS)
if USAGE_KEYS[:len(_CANONICAL_USAGE_KEYS)] != _CANONICAL_USAGE_KEYS:
    # compact_usage's one-lookup case relies on the canonical keys leading USAGE_KEYS.
    raise ValueError("contract.json: usage_keys must end with completion_tokens")


def row_names(spec):
    """The wire names of a spec's row values, in row order (priced fields not included)."""
    return spec.plain + tuple(wire for _, wire, _ in spec.transforms)


def priced(spec):
    """Whether the sender prices this spec's events (it has ``usage`` and a ``base_url``)."""
    return spec.usage_at >= 0 and any(name == "base_url" for name, _ in spec.private)


class Admitted(object):
    """Strings that matched a grammar, per grammar, at most ``limit`` each; ``resets`` counts
    how often a full set started over."""

    def __init__(self, limit=ADMITTED_LIMIT):
        self.limit = limit
        self.sets = {name: set() for name in GRAMMARS}
        self.resets = 0

    def admit(self, grammar, value):
        admitted = self.sets[grammar]
        if len(admitted) >= self.limit:
            admitted.clear()
            self.resets += 1
        admitted.add(value)

    def admit_all(self, grammar, values):
        """Remembers a set of strings that matched ``grammar`` in one C-level union; a set that
        would outgrow the limit starts over first, and more new strings than the limit holds
        are not remembered at all (unique ids, which never repeat)."""
        admitted = self.sets[grammar]
        if len(admitted) + len(values) > self.limit:
            admitted.clear()
            self.resets += 1
            if len(values) > self.limit:
                return
        admitted |= values


def field_kind(entry, wire):
    """A plain field's kind as the builders read it: its contract type, or ``micros`` for a
    number in seconds (sent as integer microseconds)."""
    field = entry["fields"][wire]
    if field["type"] == "number" and field.get("unit") in MICROS_UNITS:
        return "micros"
    return field["type"]


def to_micros(seconds, wire, refused):
    """A cleaned number in seconds as integer microseconds; ``None`` stays absent and a bool
    stays what it is (the sidecar refuses it as a number, as before); a magnitude of
    MAX_MICROS_SECONDS or more is refused."""
    kind = type(seconds)
    if kind is not int and kind is not float:
        return seconds
    if -MAX_MICROS_SECONDS < seconds < MAX_MICROS_SECONDS:
        return seconds * 1000000 if kind is int else round(seconds * 1e6)
    refused(wire)
    return None


def plain_value(value, grammar, wire, refused, admitted):
    """``event_data``'s rule for one plain value: its JSON-safe form, or ``None`` (absent). A
    string outside its field's grammar is refused (``refused(wire)``); one inside it is
    remembered in ``admitted``."""
    kind = type(value)
    if kind is not str and kind is not int and kind is not float and kind is not bool:
        if value is MISSING or value is None:
            return None
        value = clean_scalar(value)  # subclasses become their base type; the rest is dropped
        if value is MISSING:
            return None
        kind = type(value)
    if kind is str:
        if not value:
            return None  # Hermes passes "" for an unknown id: absent, not refused
        if (grammar is None or len(value) > MAX_GRAMMAR_CHARS
                or GRAMMARS[grammar].fullmatch(value) is None):
            refused(wire)
            return None
        admitted.admit(grammar, value)
        return value
    if kind is int:
        return value if -_INT_LIMIT <= value <= _INT_LIMIT else None
    if kind is float:
        return value if math.isfinite(value) else None
    return value  # bool


def transformed_value(value, transform, wire, refused):
    """``event_data``'s rule for one transformed value."""
    if value is MISSING:
        return None
    cleaned = transform(value)
    if cleaned is not MISSING and cleaned is not None:
        return cleaned
    if value is not None and transform in _REFUSING_TRANSFORMS:
        refused(wire)
    return None


def compact_usage(value):
    """:func:`fields.clean_usage` as a tuple in ``USAGE_KEYS`` order (``None`` where absent,
    trailing absent keys left off), followed by a tuple of the ``reported_usage_fields`` flags
    in contract order (``None`` where absent) when there are any; ``None`` when absent or not a
    dict. Hermes' canonical summary (every key but ``completion_tokens``, plain ints in range)
    takes one C lookup, as in ``clean_usage``. Tuples of scalars leave the garbage collector's
    lists, so a full retry buffer costs no collection time."""
    if type(value) is dict:
        numbers = canonical_token_numbers(value)
        if numbers is not None:
            reported = value.get(REPORTED_USAGE_FIELDS)
            if type(reported) is dict:
                return _with_flags(list(numbers), map(reported.get, _REPORTED_KEYS))
            return numbers
    if value is MISSING:
        return None
    cleaned = clean_usage(value)
    if cleaned is MISSING or cleaned is None:
        return None
    counts = [cleaned.get(key) for key in USAGE_KEYS]
    flags = cleaned.get(REPORTED_USAGE_FIELDS)
    if flags is not None:
        return _with_flags(counts, map(flags.get, _REPORTED_KEYS))
    while counts and counts[-1] is None:
        counts.pop()
    return tuple(counts)


def _with_flags(counts, flags):
    """``counts`` padded to every usage key, then the booleans among ``flags`` (``None`` for
    the rest), when there is at least one; else ``counts`` alone."""
    kept = tuple(flag if flag is True or flag is False else None for flag in flags)
    if any(flag is not None for flag in kept):
        counts.extend([None] * (_USAGE_COUNT - len(counts)))
        counts.append(kept)
    return tuple(counts)


def _plain_expression(index, wire, grammar, kind):
    """The inline fast case of one plain value, falling back to ``plain_value``."""
    v = "v%d" % index
    slow = "plain(%s, %r, %r, refused, admitted)" % (v, grammar, wire)
    if grammar is not None:
        # Admitted before, or matching now and remembered (set.add returns None) while the set
        # has room; a full set, an empty string or a refusal take plain().
        fast = ("type(%s) is str and (%s in set_%s or match_%s(%s) is not None"
                " and len(set_%s) < limit and not set_%s.add(%s))"
                % (v, v, grammar, grammar, v, grammar, grammar, v))
    elif kind == "boolean":
        fast = "%s is True or %s is False" % (v, v)
    elif kind == "integer":
        fast = "type(%s) is int and %d <= %s <= %d" % (v, -_INT_LIMIT, v, _INT_LIMIT)
    elif kind == "micros":
        # A finite float (a NaN fails both comparisons) or an int, within the bound.
        bound = "%r < %s < %r" % (-MAX_MICROS_SECONDS, v, MAX_MICROS_SECONDS)
        return ("(round(%s * 1e6) if type(%s) is float and %s else %s * 1000000 if type(%s) is int"
                " and %s else None if %s is None or %s is MISSING else micros(%s, %r, refused))"
                % (v, v, bound, v, v, bound, v, v, slow, wire))
    else:  # numbers: a finite float (inf - inf and nan - nan are nan), or an int in range
        fast = ("type(%s) is float and %s - %s == 0.0 or type(%s) is int and %d <= %s <= %d"
                % (v, v, v, v, -_INT_LIMIT, v, _INT_LIMIT))
    return "(%s if %s else None if %s is None or %s is MISSING else %s)" % (v, fast, v, v, slow)


def builder_source(spec, code):
    """The Python source of ``build(values, usage, observed_at, refused, admitted)`` for one
    spec (kept as text so a test can read what runs)."""
    entry = _ENTRIES[code]
    count = len(spec.sources)
    names = ", ".join("v%d" % index for index in range(count))
    lines = ["def build(values, usage, observed_at, refused, admitted):"]
    grammars_used = sorted({grammar for grammar in spec.grammars if grammar is not None})
    if grammars_used:
        lines.append("    limit = admitted.limit")
    for grammar in grammars_used:
        lines.append("    set_%s = admitted.sets[%r]" % (grammar, grammar))
        lines.append("    match_%s = GRAMMARS[%r].fullmatch" % (grammar, grammar))
    lines.append("    (%s%s) = values" % (names, "," if count == 1 else ""))
    parts = ["%d" % code, "int(observed_at * 1000000.0)"]
    for index, (wire, grammar) in enumerate(zip(spec.plain, spec.grammars)):
        parts.append(_plain_expression(index, wire, grammar, field_kind(entry, wire)))
    for index, wire, kind in spec.transforms:
        if kind == "usage":
            parts.append("usage_row(usage)")
        else:
            parts.append("transformed(v%d, %s, %r, refused)" % (index, kind, wire))
    lines.append("    return (%s)" % ",\n            ".join(parts))
    return "\n".join(lines) + "\n"


def _builder(spec, code):
    scope = {"plain": plain_value, "transformed": transformed_value, "usage_row": compact_usage,
             "micros": to_micros, "MISSING": MISSING, "GRAMMARS": GRAMMARS}
    scope.update(TRANSFORM_FUNCTIONS)
    exec(compile(builder_source(spec, code), "<row builder %s>" % spec.hook, "exec"), scope)
    return scope["build"]


def row_builder(spec):
    """``build(values, usage, observed_at, refused, admitted)`` -> row, for a contract spec;
    ``None`` for a hook outside the contract (its events go as JSON lines)."""
    code = CODES.get(id(spec))
    return None if code is None else _builder(spec, code)


def row_data(row):
    """The ``data`` mapping a row stands for (the JSON line form of a row), absent fields left
    out."""
    names = ROW_NAMES[row[0]]
    micros = MICROS_NAMES[row[0]]
    data = {}
    for name, value in zip(names, row[2:]):
        if value is None:
            continue
        if name == "usage":
            value = usage_mapping(value)
        elif name in micros and type(value) is int:
            value = value / 1e6
        data[name] = value
    return data


def usage_mapping(counts):
    """The ``usage`` mapping a compact usage list stands for."""
    usage = {key: value for key, value in zip(USAGE_KEYS, counts) if value is not None}
    if len(counts) > _USAGE_COUNT:
        usage[REPORTED_USAGE_FIELDS] = {key: flag for key, flag in
                                        zip(_REPORTED_KEYS, counts[_USAGE_COUNT])
                                        if flag is not None}
    return usage


# Row names by code, priced fields included where the spec is priced (they trail the row).
ROW_NAMES = tuple(row_names(spec) + (PRICED_NAMES if priced(spec) else ()) for spec in ROW_SPECS)
# Per code, the names of its values sent as integer microseconds.
MICROS_NAMES = tuple(frozenset(wire for wire in spec.plain if field_kind(entry, wire) == "micros")
                     for spec, entry in zip(ROW_SPECS, _ENTRIES))


# ------------------------------------------------------------------------------ columns

_NONE_TYPES = frozenset({type(None), type(MISSING)})
_STR = frozenset({str})
_FLOAT = frozenset({float})
_INT = frozenset({int})
_BOOL = frozenset({bool})


def _string_column(column, grammar, admitted):
    """The column, all of whose values are strings, when its grammar admits every one (matched
    now or earlier); ``None`` when any value needs the per-event rule (empty, refused). The
    strings not admitted yet are matched and remembered in C-level passes (``map``, a union):
    ids are mostly new, two or three per call."""
    unseen = set(column)
    unseen -= admitted.sets[grammar]
    if unseen:
        if not all(map(GRAMMARS[grammar].fullmatch, unseen)):
            return None
        admitted.admit_all(grammar, unseen)
    return column


def _number_column(column, kinds):
    """The column when every value is a finite float or every one an int in range."""
    if kinds == _FLOAT:
        return column if all(map(math.isfinite, column)) else None
    if kinds == _INT:
        return column if -_INT_LIMIT <= min(column) and max(column) <= _INT_LIMIT else None
    return None


_MICROS_PER_SECOND = 1000000
_MICROS_PER_SECOND_FLOAT = 1e6


def _micros_column(column, kinds):
    """The column in integer microseconds when every value is a finite float or every one an
    int, all within MAX_MICROS_SECONDS."""
    if kinds != _INT and (kinds != _FLOAT or not all(map(math.isfinite, column))):
        return None
    if not -MAX_MICROS_SECONDS < min(column) or not max(column) < MAX_MICROS_SECONDS:
        return None
    if kinds == _INT:
        return list(map(_MICROS_PER_SECOND.__mul__, column))
    return list(map(round, map(_MICROS_PER_SECOND_FLOAT.__mul__, column)))


def clean_column(column, grammar, kind, admitted):
    """A plain field's values across events of one hook, cleaned at once in the one case real
    Hermes values take (one type throughout, every value inside its rule, some or all of them
    absent), else ``None``: the events then take their per-event builder, whose rule this
    agrees with value for value."""
    kinds = set(map(type, column))
    present_kinds = kinds - _NONE_TYPES
    if not present_kinds:
        return (None,) * len(column)
    if len(present_kinds) == len(kinds):
        return _present_column(column, present_kinds, grammar, kind, admitted)
    # Some absent (an ok tool call's error_type, an unstreamed call's first_chunk_at): the
    # present values are cleaned as a column and the absent ones put back as None.
    present = [value for value in column if type(value) not in _NONE_TYPES]
    cleaned = _present_column(present, present_kinds, grammar, kind, admitted)
    if cleaned is None:
        return None
    values = iter(cleaned)
    return [None if type(value) in _NONE_TYPES else next(values) for value in column]


def _present_column(column, kinds, grammar, kind, admitted):
    """:func:`clean_column` of values none of which is absent."""
    if grammar is not None:
        return _string_column(column, grammar, admitted) if kinds == _STR else None
    if kind == "boolean":
        return column if kinds == _BOOL else None
    if kind == "micros":
        return _micros_column(column, kinds)
    return _number_column(column, kinds)


_DICT = frozenset({dict})
_has_completion_tokens = operator.methodcaller("__contains__", "completion_tokens")
_reported_flags = operator.methodcaller("get", REPORTED_USAGE_FIELDS)


def usage_column(usages):
    """:func:`compact_usage` of each usage, taking Hermes' canonical summary for the whole
    column in C-level passes when every usage is one (a dict with every canonical key, no
    ``completion_tokens``, no flags, plain ints in range); else usage by usage."""
    if set(map(type, usages)) == _DICT:
        try:
            numbers = list(map(_canonical_usage, usages))
        except KeyError:
            numbers = None
        if (numbers is not None and not any(map(_has_completion_tokens, usages))
                and not any(map(_reported_flags, usages))):
            counts = list(itertools.chain.from_iterable(numbers))
            if (set(map(type, counts)) == _INT and -_INT_LIMIT <= min(counts)
                    and max(counts) <= _INT_LIMIT):
                return numbers
    return list(map(compact_usage, usages))


class ColumnBuilder(object):
    """Rows for many events of one spec at once: each plain field cleaned as a column
    (:func:`clean_column`, C-level passes over the values), ``usage`` per event, rows zipped
    together. ``None`` from :meth:`build` when a column needs the per-event rule."""

    def __init__(self, spec):
        entry = _ENTRIES[CODES[id(spec)]]
        self.code = CODES[id(spec)]
        self.plain = tuple((index, grammar, field_kind(entry, wire))
                           for index, (wire, grammar) in enumerate(zip(spec.plain, spec.grammars)))
        kinds = tuple(kind for _, _, kind in spec.transforms)
        # Only hooks whose transforms are at most ``usage`` (the ones that fire per API call
        # and tool call); the others always take the per-event builder.
        self.usable = all(kind == "usage" for kind in kinds)
        self.usage = any(kind == "usage" for kind in kinds)

    def build(self, stamps, values, usages, admitted):
        """Rows for events given as parallel lists, or ``None``."""
        if not self.usable:
            return None
        columns = list(zip(*values))
        cleaned = []
        for index, grammar, kind in self.plain:
            column = clean_column(columns[index], grammar, kind, admitted)
            if column is None:
                return None
            cleaned.append(column)
        if self.usage:
            cleaned.append(usage_column(usages))
        micros = list(map(int, map(_MICROS_PER_SECOND_FLOAT.__mul__, stamps)))
        return list(zip(itertools.repeat(self.code), micros, *cleaned))
