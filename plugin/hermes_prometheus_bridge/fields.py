"""Which fields of each Hermes hook may leave the process, and how they are cleaned.

The allow-lists are the privacy boundary of the bridge: only ids, names, enumerations,
numbers, booleans and the numeric ``usage`` keys are copied. Content (prompts, messages,
tool arguments and results, commands, goals, summaries, error text, URLs) is never read,
because it is never named here.

Two stages, split for speed:

* on the agent thread, a callback copies the allow-listed *references* (a dict comprehension
  over a precomputed tuple), snapshots ``usage`` and turns an ``error`` value into a boolean;
* on the sender thread, :func:`clean_data` keeps only JSON-safe scalars (see
  :func:`clean_scalar`), so one odd value costs a field, never the event.
"""

import math

# Strings longer than this are cut: every allowed field is an id, a name or an enumeration,
# so anything longer is already suspicious, and the sidecar truncates labels to 128.
MAX_STRING_CHARS = 256

# Integers outside this range carry no meaning for metrics (and JavaScript cannot hold them).
_INT_LIMIT = 2 ** 63

# The numeric keys of Hermes' ``usage`` summary (CanonicalUsage) plus OpenAI-style spellings.
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "prompt_tokens",
    "total_tokens",
    "completion_tokens",
    "request_count",
)

# Sentinel for "drop this field".
MISSING = object()

_API_IDENTITY = (
    "session_id", "task_id", "turn_id", "api_request_id", "platform",
    "model", "provider", "api_mode", "api_call_count",
)
_API_RESULT = (
    "api_duration", "started_at", "ended_at", "first_chunk_at", "finish_reason",
    "message_count", "response_model", "usage", "assistant_content_chars",
    "assistant_tool_call_count",
)
_API_REQUEST_SIZE = (
    "retry_count", "message_count", "tool_count", "approx_input_tokens",
    "request_char_count", "max_tokens", "started_at",
)
_API_FAILURE = (
    "api_duration", "started_at", "ended_at", "first_chunk_at", "first_delta_at",
    "status_code", "retry_count", "max_retries", "retryable", "reason",
)
_TOOL_IDENTITY = ("session_id", "task_id", "turn_id", "api_request_id", "tool_call_id", "tool_name")
_APPROVAL = ("session_id", "turn_id", "tool_call_id", "pattern_key", "session_key", "surface")
_SESSION_BOUNDARY = ("session_id", "platform", "reason", "old_session_id", "new_session_id")


def _unique(*groups):
    """Concatenate field groups, keeping the first occurrence of each name."""
    seen = []
    for group in groups:
        for name in group:
            if name not in seen:
                seen.append(name)
    return tuple(seen)


# Flat Hermes hooks (``ctx.register_hook``): kwargs as documented in CONTRACT.md §3.
HOOK_FIELDS = {
    "on_session_start": ("session_id", "model", "platform"),
    "on_session_end": (
        "session_id", "task_id", "turn_id", "api_request_id", "completed", "failed",
        "interrupted", "turn_exit_reason", "reason", "model", "platform",
    ),
    "on_session_finalize": _SESSION_BOUNDARY,
    "on_session_reset": _SESSION_BOUNDARY,
    "pre_llm_call": (
        "session_id", "task_id", "turn_id", "is_first_turn", "model", "platform",
        "parent_session_id",
    ),
    "post_llm_call": ("session_id", "task_id", "turn_id", "model", "platform"),
    "pre_api_request": _unique(_API_IDENTITY, _API_REQUEST_SIZE),
    # retry_count is not sent by current Hermes on success, but keep it if a build adds it.
    "post_api_request": _unique(_API_IDENTITY, _API_RESULT, ("retry_count",)),
    "api_request_error": _unique(_API_IDENTITY, _API_FAILURE),
    "pre_auxiliary_call": _unique(("aux_task", "streaming"), _API_IDENTITY, _API_REQUEST_SIZE),
    # ``error`` becomes a boolean (see ERROR_FLAG_HOOKS); its text never leaves.
    "post_auxiliary_call": _unique(
        ("aux_task", "streaming"), _API_IDENTITY, ("retry_count",), _API_RESULT,
        ("error", "error_type", "status_code", "retryable", "reason"),
    ),
    "pre_tool_call": _TOOL_IDENTITY,
    "post_tool_call": _unique(_TOOL_IDENTITY, ("duration_ms", "status", "error_type")),
    "pre_approval_request": _APPROVAL,
    "post_approval_response": _unique(_APPROVAL, ("choice", "decided_by")),
    "subagent_start": (
        "parent_session_id", "parent_turn_id", "parent_subagent_id", "child_session_id",
        "child_subagent_id", "child_role",
    ),
    "subagent_stop": (
        "parent_session_id", "parent_turn_id", "child_session_id", "child_subagent_id",
        "child_role", "child_status", "duration_ms",
    ),
}

# Envelope variant (``ctx.register_observer_hook``, callback gets ``hook.payload["data"]``).
# Shared names use the flat allow-list plus the envelope's own spellings.
OBSERVER_FIELDS = {
    "agent_start": ("session_id", "task_id", "turn_id", "run_start_time_ms"),
    "agent_end": ("session_id", "task_id", "turn_id", "run_duration_ms", "stop_reason"),
    "pre_api_request": HOOK_FIELDS["pre_api_request"],
    "post_api_request": _unique(HOOK_FIELDS["post_api_request"], ("duration_ms",)),
    "api_request_error": _unique(
        HOOK_FIELDS["api_request_error"], ("duration_ms", "error", "error_type"),
    ),
    "pre_tool_call": HOOK_FIELDS["pre_tool_call"],
    "post_tool_call": _unique(HOOK_FIELDS["post_tool_call"], ("error",)),
    "memory_write": ("session_id", "task_id", "memory_provider", "action", "size_bytes"),
    "turn_end": (
        "session_id", "turn_id", "turn_start_time_ms", "turn_end_time_ms", "turn_duration_ms",
    ),
    "session_event": ("session_id", "session_key", "event", "timestamp"),
}

# Hooks whose ``error`` value is reduced to a boolean on the agent thread.
ERROR_FLAG_HOOKS = frozenset({"post_auxiliary_call"})
OBSERVER_ERROR_FLAG_EVENTS = frozenset({"api_request_error", "post_tool_call"})

# Every name in the allow-lists above that is content or may carry content. Kept here so a
# test can assert no allow-list ever grows one of them.
CONTENT_FIELDS = frozenset({
    "request", "response", "assistant_message", "assistant_response", "conversation_history",
    "user_message", "request_messages", "system_prompt", "args", "result", "tool_args",
    "tool_result", "command", "description", "child_goal", "child_summary", "error_message",
    "memory_path", "memory_name", "tool_call_history", "base_url", "middleware_trace",
    "sender_id", "response_text", "moa_references",
})


def present_fields(names, values):
    """The dict of an event queued as parallel ``names``/``values`` (``MISSING`` = absent)."""
    return {name: value for name, value in zip(names, values) if value is not MISSING}


def error_flag(value):
    """``True`` when an ``error`` value says something failed, without looking at its text."""
    if value is None or value is False:
        return False
    if type(value) in (str, bytes, dict, list, tuple):
        return len(value) > 0
    return True


def snapshot_usage(value):
    """Copy an exact dict so later mutation by Hermes cannot change what is sent."""
    if type(value) is dict:
        return dict(value)
    return value


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


def clean_usage(value):
    """``usage`` keeps only its finite numeric token keys; ``None`` stays ``None``."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return MISSING
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


def clean_data(data):
    """The allow-listed fields of one event, reduced to what JSON and the sidecar accept.

    Same rules as :func:`clean_scalar`, with the exact built-in types handled inline: this runs
    for every field of every event on the sender thread, which shares the GIL with Hermes.
    """
    cleaned = {}
    isfinite = math.isfinite
    for key, value in data.items():
        kind = type(value)
        if key == "usage":
            value = clean_usage(value)
            if value is MISSING:
                continue
        elif kind is str:
            if len(value) > MAX_STRING_CHARS:
                value = value[:MAX_STRING_CHARS]
        elif kind is int:
            if not -_INT_LIMIT <= value <= _INT_LIMIT:
                continue
        elif kind is float:
            if not isfinite(value):
                continue
        elif value is not None and kind is not bool:
            value = clean_scalar(value)
            if value is MISSING:
                continue
        cleaned[key] = value
    return cleaned
