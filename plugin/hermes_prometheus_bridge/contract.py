"""The wire contract, loaded once from ``contract.json`` beside this file.

Every hook's allow-list is derived from that table, so the plugin, ``docs/contract.md`` and the
sidecar's readers (checked by a sidecar test) describe one contract. A :class:`HookSpec` is what
the two threads need of one hook, precomputed at import:

* the agent thread copies ``sources`` (Hermes keyword names, in that order) and nothing else;
* the sender thread turns the first ``len(plain)`` values into same-named wire fields (a string
  only when it matches its field's grammar), applies ``transforms`` to the values after them,
  and reads ``private`` values (never forwarded).
"""

import json
import os
import re
from collections import namedtuple

CONTRACT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "contract.json")

HookSpec = namedtuple("HookSpec", [
    "hook",        # hook or envelope event name (the wire ``event``)
    "sources",     # Hermes keyword names copied on the agent thread, in value order
    "plain",       # wire names of the leading plain scalar values
    "transforms",  # ((value index, wire name, transform kind), ...)
    "private",     # ((name, value index), ...) for values used inside the plugin only
    "usage_at",    # value index of ``usage`` (snapshotted on the agent thread) or -1
    "flush",       # True when the callback flushes before returning
    "wire",        # every wire name this hook can send (plain + transformed + added)
    "grammars",    # per plain value: the grammar name of a string field, None for other types
])

TRANSFORMS = ("usage", "error_flag", "error_class", "reason", "exit_reason")


def _load(path=CONTRACT_PATH):
    with open(path, "r", encoding="utf-8") as handle:
        return json.load(handle)


def _grammar(hook, name, field, grammars):
    """The grammar name of a plain string field (required), ``None`` for other types."""
    grammar = field.get("grammar")
    if field["type"] != "string":
        if grammar is not None:
            raise ValueError("contract.json: %s.%s has a grammar but is no string" % (hook, name))
        return None
    if grammar not in grammars:
        raise ValueError("contract.json: string field %s.%s needs a grammar of %s"
                         % (hook, name, ", ".join(sorted(grammars))))
    return grammar


def _spec(hook, entry, grammars):
    plain, transformed, plain_grammars = [], [], []
    for name, field in entry["fields"].items():
        kind = field.get("transform")
        if kind is not None and kind not in TRANSFORMS:
            raise ValueError("contract.json: %s.%s has unknown transform %r" % (hook, name, kind))
        source = field.get("from", name)
        if kind is None:
            plain.append((source, name))
            plain_grammars.append(_grammar(hook, name, field, grammars))
        else:
            transformed.append((source, name, kind))
    private = list(entry.get("private", {}))
    sources = tuple([s for s, _ in plain] + [s for s, _, _ in transformed] + private)
    if len(set(sources)) != len(sources):
        raise ValueError("contract.json: %s copies a Hermes field twice" % hook)
    transforms = tuple((len(plain) + index, wire, kind)
                       for index, (_, wire, kind) in enumerate(transformed))
    usage_at = next((index for index, wire, kind in transforms if kind == "usage"), -1)
    return HookSpec(
        hook=hook,
        sources=sources,
        plain=tuple(wire for _, wire in plain),
        transforms=transforms,
        private=tuple((name, sources.index(name)) for name in private),
        usage_at=usage_at,
        flush=bool(entry.get("flush", False)),
        wire=tuple(entry["fields"]) + tuple(entry.get("added", {})),
        grammars=tuple(plain_grammars),
    )


CONTRACT = _load()
GRAMMARS = {name: re.compile(grammar["pattern"]) for name, grammar in CONTRACT["grammars"].items()}
HOOK_SPECS = {hook: _spec(hook, entry, GRAMMARS) for hook, entry in CONTRACT["hooks"].items()}
OBSERVER_SPECS = {event: _spec(event, entry, GRAMMARS)
                  for event, entry in CONTRACT["observer"].items()}
PATTERNS = {name: re.compile(pattern) for name, pattern in CONTRACT["identifier_patterns"].items()}
USAGE_KEYS = tuple(CONTRACT["usage_keys"])
