"""Which fields of each Hermes hook may leave the process, and how they are cleaned.

The allow-lists are the privacy boundary of the bridge: only ids, names, enumerations,
numbers, booleans and the numeric ``usage`` keys are copied, as ``contract.json`` lists them.
Content (prompts, messages, tool arguments and results, commands, goals, summaries, error text,
URLs) is never read, because it is never named there.

Two stages, split for speed:

* on the agent thread, a callback copies the allow-listed *references* (one C-level ``map`` over
  a precomputed tuple) and snapshots ``usage``;
* on the sender thread, :func:`event_data` keeps only JSON-safe scalars (see
  :func:`clean_scalar`), forwards a string only when it matches its field's grammar (an id or an
  identifier: contract.json ``grammars``), and applies the contract's transforms (``usage`` keys,
  ``error`` to a flag, an error class name, an exit reason's leading identifier), so one odd
  value costs a field, never the event. Each refused string is counted under its wire field.
"""

import math
import operator

from .contract import CONTRACT, GRAMMARS, HOOK_SPECS, OBSERVER_SPECS, PATTERNS, USAGE_KEYS

# Strings longer than this are cut by clean_scalar (the heartbeat and tests use it). Event
# fields never are: a string outside its grammar (whose longest is 128) is refused whole.
MAX_STRING_CHARS = 256

# The longest string any grammar admits: a longer one is refused without running the pattern.
MAX_GRAMMAR_CHARS = 128

# Integers outside this range carry no meaning for metrics (and JavaScript cannot hold them).
_INT_LIMIT = 2 ** 63

# Sentinel for "drop this field".
MISSING = object()

# Wire names per hook, derived from contract.json (what tests and docs call the allow-lists).
HOOK_FIELDS = {hook: spec.wire for hook, spec in HOOK_SPECS.items()}
OBSERVER_FIELDS = {event: spec.wire for event, spec in OBSERVER_SPECS.items()}

# Hooks whose ``error`` value is reduced to a boolean (its text is never read).
ERROR_FLAG_HOOKS = frozenset(
    hook for hook, spec in HOOK_SPECS.items()
    if any(kind == "error_flag" for _, _, kind in spec.transforms))
OBSERVER_ERROR_FLAG_EVENTS = frozenset(
    event for event, spec in OBSERVER_SPECS.items()
    if any(kind == "error_flag" for _, _, kind in spec.transforms))

# Names that are content or may carry content. Kept here so a test can assert no allow-list
# ever forwards one of them (``error`` of api_request_error is read only for its ``type``).
CONTENT_FIELDS = frozenset({
    "request", "response", "assistant_message", "assistant_response", "conversation_history",
    "user_message", "request_messages", "system_prompt", "args", "result", "tool_args",
    "tool_result", "command", "description", "child_goal", "child_summary", "error_message",
    "memory_path", "memory_name", "tool_call_history", "base_url", "middleware_trace",
    "sender_id", "response_text", "moa_references",
})


def error_flag(value):
    """``True`` when an ``error`` value says something failed, without looking at its text."""
    if value is None or value is False:
        return False
    if type(value) in (str, bytes, dict, list, tuple):
        return len(value) > 0
    return True


def clean_scalar(value):
    """The JSON-safe form of a scalar, or ``MISSING`` when the field must be dropped.

    Subclasses (``str``/``int`` enums) are read through the base type's own methods so an
    override cannot run or raise here.
    """
    kind = type(value)
    if kind is str:
        return value if len(value) <= MAX_STRING_CHARS else value[:MAX_STRING_CHARS]
    if value is None or kind is bool:
        return value
    if kind is int:
        return value if -_INT_LIMIT <= value <= _INT_LIMIT else MISSING
    if kind is float:
        return value if math.isfinite(value) else MISSING
    if issubclass(kind, str):
        return clean_scalar(str.__str__(value))
    if issubclass(kind, int):
        return clean_scalar(int.__int__(value))
    if issubclass(kind, float):
        return clean_scalar(float.__float__(value))
    return MISSING  # bytes, containers, objects: never guessed at


def clean_number(value):
    """A finite int or float (not a bool), else ``MISSING``."""
    if type(value) is bool:
        return MISSING
    cleaned = clean_scalar(value)
    if type(cleaned) in (int, float):
        return cleaned
    return MISSING


# Hermes' own usage summary (asdict(CanonicalUsage) plus prompt_tokens) always has these keys.
_CANONICAL_USAGE_KEYS = tuple(key for key in USAGE_KEYS if key != "completion_tokens")
_canonical_usage = operator.itemgetter(*_CANONICAL_USAGE_KEYS)
_INT_ONLY = frozenset({int})


# The usage keys whose ``reported_usage_fields`` flag (Hermes 0.21) is forwarded.
REPORTED_USAGE_FIELDS = "reported_usage_fields"
_REPORTED_KEYS = tuple(CONTRACT["usage_flags"][REPORTED_USAGE_FIELDS])


def clean_usage(value):
    """``usage`` keeps only its finite numeric token keys, plus ``reported_usage_fields`` as
    ``{usage key: bool}`` (which counts the provider really reported: Hermes' CanonicalUsage
    holds 0 for both an absent and a reported-zero count); ``None`` stays ``None``.

    Fast path: Hermes' canonical keys all present as plain ints in range (one C lookup, one
    type check over the values); anything else goes key by key.
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        return MISSING
    cleaned = _token_counts(value)
    reported = value.get(REPORTED_USAGE_FIELDS)
    if type(reported) is dict:
        flags = {key: flag for key, flag in zip(_REPORTED_KEYS, map(reported.get, _REPORTED_KEYS))
                 if flag is True or flag is False}
        if flags:
            cleaned[REPORTED_USAGE_FIELDS] = flags
    return cleaned


def canonical_token_numbers(value):
    """The token counts of Hermes' canonical usage summary (every key but ``completion_tokens``,
    plain ints in range) in ``_CANONICAL_USAGE_KEYS`` order, read with one C lookup; ``None`` for
    any other dict, which then takes the per-key rule."""
    try:
        numbers = _canonical_usage(value)
    except KeyError:
        return None
    if ("completion_tokens" not in value and _INT_ONLY.issuperset(map(type, numbers))
            and max(numbers) <= _INT_LIMIT and min(numbers) >= -_INT_LIMIT):
        return numbers
    return None


def _token_counts(value):
    numbers = canonical_token_numbers(value)
    if numbers is not None:
        return dict(zip(_CANONICAL_USAGE_KEYS, numbers))
    cleaned = {}
    for key in USAGE_KEYS:
        number = value.get(key)
        kind = type(number)
        if kind is int:
            if -_INT_LIMIT <= number <= _INT_LIMIT:
                cleaned[key] = number
        elif kind is float:
            if math.isfinite(number):
                cleaned[key] = number
        elif number is not None:
            number = clean_number(number)  # int/float subclasses; everything else is dropped
            if number is not MISSING:
                cleaned[key] = number
    return cleaned


def error_class(value):
    """The exception class name of Hermes' ``error={"type": ..., "message": ...}`` (or a bare
    string), when it is a code identifier; the message is never read."""
    if isinstance(value, dict):
        value = value.get("type")
    if type(value) is str and PATTERNS["error_class"].match(value):
        return value
    return MISSING


def short_identifier(value):
    """A short lower-case identifier such as a CLI exit reason, else ``MISSING``."""
    if type(value) is str and len(value) <= MAX_GRAMMAR_CHARS and PATTERNS["reason"].match(value):
        return value
    return MISSING


_EXIT_REASON = PATTERNS["exit_reason"]


def exit_reason(value):
    """The leading identifier of Hermes' ``turn_exit_reason`` (``max_iterations_reached(90/90)``
    becomes ``max_iterations_reached``; ``local_processing_error(<error text>)`` becomes
    ``local_processing_error``), else ``MISSING``. What follows the identifier is never kept, so
    error text and paths inside the parentheses stay in Hermes."""
    if type(value) is not str:
        return MISSING
    found = _EXIT_REASON.match(value)
    return MISSING if found is None else found.group(1)


TRANSFORM_FUNCTIONS = {
    "usage": clean_usage,
    "error_flag": error_flag,
    "error_class": error_class,
    "reason": short_identifier,
    "exit_reason": exit_reason,
}

# Transforms that reduce a string to an identifier: a value they refuse is counted as refused.
_REFUSING_TRANSFORMS = frozenset({error_class, short_identifier, exit_reason})


def compiled_transforms(spec):
    """``((index, wire name, function), ...)`` for the sender thread; index -1 reads the usage
    copy the callback took instead of a value."""
    return tuple((-1 if kind == "usage" else index, wire, TRANSFORM_FUNCTIONS[kind])
                 for index, wire, kind in spec.transforms)


def _fullmatch(grammar):
    pattern = GRAMMARS[grammar]
    return pattern.fullmatch


def compiled_grammars(spec):
    """Per plain value: the precompiled ``fullmatch`` of its grammar, or ``None`` (no string
    belongs in that field)."""
    return tuple(None if grammar is None else _fullmatch(grammar) for grammar in spec.grammars)


def _no_refusals(_field):
    return None


def event_data(plain, transforms, values, usage=MISSING, grammars=None, refused=_no_refusals):
    """The wire ``data`` of one queued event: ``plain`` names zip with the leading values (exact
    built-in types handled inline: this runs for every field of every event on the sender
    thread, which shares the GIL with Hermes), then each transform reads its own value.

    A string crosses only when its field's grammar (``grammars``, aligned with ``plain``)
    matches it whole: anything longer than the longest grammar, or outside it, is left out and
    ``refused(wire name)`` counts it; an empty string is left out as absent. ``grammars=None`` is the plain-mapping form (tests, the
    benchmark's reference rows), where strings are only cut to ``MAX_STRING_CHARS``.

    Absent keyword arguments (``MISSING``), ``None`` (every sidecar reader treats null as
    absent, so it is not worth its bytes) and values that cannot be made JSON-safe are left out.
    """
    data = {}
    isfinite = math.isfinite
    if grammars is None:
        grammars = (False,) * len(plain)
    for key, value, match in zip(plain, values, grammars):
        kind = type(value)
        if kind is not str and kind is not int and kind is not float and kind is not bool:
            if value is MISSING or value is None:
                continue
            value = clean_scalar(value)  # subclasses become their base type; the rest is dropped
            if value is MISSING:
                continue
            kind = type(value)
        if kind is str:
            if match is False:
                if len(value) > MAX_STRING_CHARS:
                    value = value[:MAX_STRING_CHARS]
            elif not value:
                continue  # Hermes passes "" for an unknown id: absent, not refused
            elif match is None or len(value) > MAX_GRAMMAR_CHARS or match(value) is None:
                refused(key)
                continue
        elif kind is int:
            if not -_INT_LIMIT <= value <= _INT_LIMIT:
                continue
        elif kind is float:
            if not isfinite(value):
                continue
        data[key] = value
    for index, key, transform in transforms:
        value = values[index] if index >= 0 else usage
        if value is not MISSING:
            cleaned = transform(value)
            if cleaned is not MISSING and cleaned is not None:
                data[key] = cleaned
            elif value is not None and transform in _REFUSING_TRANSFORMS:
                refused(key)
    return data


def clean_data(data):
    """Compatibility form of :func:`event_data` for a plain mapping (tests, the benchmark)."""
    names = tuple(data)
    return event_data(names, (), tuple(data[name] for name in names))
