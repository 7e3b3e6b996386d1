#!/usr/bin/env python3
"""Drive the bridge plugin through the Hermes dispatch harness against a running sidecar.

    python3 plugin/tests/drive_conversation.py --url URL [--scenario conversation|envelope]
    python3 plugin/tests/drive_conversation.py --url URL --events N [--rate R]
    python3 plugin/tests/drive_conversation.py --url URL --hold [...]

Loads ``plugin/hermes_prometheus_bridge`` exactly as Hermes would (``register(ctx)`` through the
harness), emits a scripted multi-turn conversation (or a synthetic load), waits for delivery,
flushes, and prints JSON lines on stdout. The LAST line is always the summary
(``{"type": "summary", ...}``): what was emitted per hook plus metric-level tallies, so an
end-to-end test can compute the values the sidecar must export.

Scenarios:
  conversation  two sessions (cli, telegram), 3 turns, a 429 retried then successful, an
                auxiliary title call, tools ok/error/blocked/timeout, approvals cli + smart +
                gateway, one subagent (with its own API call), gateway finalize + reset.
                Every content field carries the sentinel printed in the summary.
  envelope      the register_observer_hook variant: agent/turn/memory/session events.

Load mode (``--events N``): exactly N events (session start, synthetic turns, finalize) at R
events per second (0 = as fast as possible). As in Hermes, timeout-bounded hooks run on a new
worker thread per call, which caps the unthrottled rate (about 1-2k events/s on a small VM);
``--hook-timeout 0`` (Hermes' ``plugins.hook_callback_timeout: 0``) calls them inline.

Hold mode (``--hold``): after the scenario or load, print ``{"type": "ready"}`` and keep the
plugin alive (heartbeats continue) reading commands from stdin until it closes:
``turn [N]`` emit N synthetic turns, ``events N [R]`` emit N synthetic events at R/s,
``flush`` deliver now, ``stats`` print delivery stats. Each command answers one JSON line.

Environment: any ``HERMES_SIDECAR_*`` variable set by the caller is honoured; ``--url``,
``--token`` and ``--heartbeat-interval`` override theirs.
"""

import argparse
import json
import os
import sys
import time
import uuid

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
if TESTS_DIR not in sys.path:
    sys.path.insert(0, TESTS_DIR)

from hermes_dispatch import PluginManager, load_directory_plugin, load_entry_point_plugin  # noqa: E402

PLUGIN_DIR = os.path.join(os.path.dirname(TESTS_DIR), "hermes_prometheus_bridge")

MODEL = "anthropic/claude-sonnet-4.6"
RESPONSE_MODEL = "anthropic/claude-4.6-sonnet-20260514"
AUX_MODEL = "google/gemini-3.5-flash"
PROVIDER = "openrouter"
BASE_URL = "https://openrouter.ai/api/v1"
TOKEN_TYPES = (("input_tokens", "input"), ("cache_read_tokens", "cache_read"),
               ("cache_write_tokens", "cache_write"), ("output_tokens", "output"),
               ("reasoning_tokens", "reasoning"))


class NormalizedMessage(object):
    """Like Hermes' provider message object: not JSON-serializable, holds content."""

    def __init__(self, content):
        self.content = content


def usage(input_tokens, output_tokens, cache_read=0, cache_write=0, reasoning=0):
    prompt = input_tokens + cache_read + cache_write
    return {"input_tokens": input_tokens, "output_tokens": output_tokens,
            "cache_read_tokens": cache_read, "cache_write_tokens": cache_write,
            "reasoning_tokens": reasoning, "request_count": 1, "prompt_tokens": prompt,
            "total_tokens": prompt + output_tokens}


def bump(table, *path):
    """``table[path[0]]...[path[-1]] += 1`` with nested dicts created on the way."""
    for key in path[:-1]:
        table = table.setdefault(str(key), {})
    last = str(path[-1])
    table[last] = table.get(last, 0) + 1


class Tally(object):
    """Metric-level facts of everything emitted, computed from the content-free fields only."""

    def __init__(self):
        self.emitted = {}
        self.facts = {
            "api_requests": {}, "api_errors": {}, "tokens": {}, "finish_reasons": {},
            "tool_calls": {}, "tool_errors": {}, "approval_requests": {},
            "approval_decisions": {}, "sessions_started": {}, "sessions_finalized": {},
            "session_resets": {}, "turns_started": {}, "turns_finished": {},
            "subagents_started": {}, "subagents_finished": {}, "agent_runs": {},
            "memory_writes": {}, "session_events": {},
        }

    def record(self, hook, data):
        self.emitted[hook] = self.emitted.get(hook, 0) + 1
        handler = getattr(self, "_" + hook, None)
        if handler is not None:
            handler(data)

    # flat hooks -------------------------------------------------------------------------

    def _post_api_request(self, data, kind="main"):
        f = self.facts
        bump(f["api_requests"], kind, data.get("provider"), data.get("model"), "success")
        bump(f["finish_reasons"], kind, data.get("finish_reason"))
        for key, name in TOKEN_TYPES:
            value = (data.get("usage") or {}).get(key, 0)
            by_kind = f["tokens"].setdefault(kind, {})
            by_kind[name] = by_kind.get(name, 0) + value

    def _api_request_error(self, data, kind="main"):
        f = self.facts
        bump(f["api_requests"], kind, data.get("provider"), data.get("model"), "error")
        retryable = data.get("retryable")
        bump(f["api_errors"], kind, data.get("reason"), data.get("status_code"),
             "unknown" if retryable is None else str(retryable).lower())

    def _post_auxiliary_call(self, data):
        if data.get("error"):
            self._api_request_error(data, kind="auxiliary")
        else:
            self._post_api_request(data, kind="auxiliary")

    def _post_tool_call(self, data):
        bump(self.facts["tool_calls"], data.get("tool_name"), data.get("status"))
        if data.get("status") != "ok":
            bump(self.facts["tool_errors"], data.get("tool_name"), data.get("error_type"))

    def _pre_approval_request(self, data):
        bump(self.facts["approval_requests"], data.get("surface"), data.get("pattern_key"))

    def _post_approval_response(self, data):
        bump(self.facts["approval_decisions"], data.get("surface"), data.get("pattern_key"),
             data.get("choice"))

    def _on_session_start(self, data):
        bump(self.facts["sessions_started"], data.get("platform"))

    def _on_session_finalize(self, data):
        bump(self.facts["sessions_finalized"], data.get("platform"))

    def _on_session_reset(self, data):
        bump(self.facts["session_resets"], data.get("platform"))

    def _pre_llm_call(self, data):
        bump(self.facts["turns_started"], data.get("platform"))

    def _on_session_end(self, data):
        if data.get("completed"):
            outcome = "completed"
        elif data.get("failed"):
            outcome = "failed"
        elif data.get("interrupted"):
            outcome = "interrupted"
        else:
            outcome = "incomplete"
        bump(self.facts["turns_finished"], data.get("platform"), outcome)

    def _subagent_start(self, data):
        bump(self.facts["subagents_started"], data.get("child_role"))

    def _subagent_stop(self, data):
        bump(self.facts["subagents_finished"], data.get("child_role"), data.get("child_status"))

    # envelope events --------------------------------------------------------------------

    def _agent_end(self, data):
        bump(self.facts["agent_runs"], data.get("stop_reason"))

    def _memory_write(self, data):
        bump(self.facts["memory_writes"], data.get("memory_provider"), data.get("action"))

    def _session_event(self, data):
        bump(self.facts["session_events"], data.get("event"))


# Events of one synthetic turn (Driver.synthetic_turn_events), all of registered hooks.
TURN_EVENTS = 8


class Driver(object):
    """Emits hooks through the harness and tallies them."""

    def __init__(self, manager, bridge, sentinel, observer=False):
        self.manager = manager
        self.bridge = bridge
        self.sentinel = sentinel
        self.observer = observer
        self.tally = Tally()
        self.clock = 1789862400.0
        self.synthetic_turns = 0

    def emit(self, hook, **kwargs):
        # Hermes fires the hook either way; only hooks the plugin registered reach the sidecar.
        if self.manager.has_hook(hook):
            self.tally.record(hook, kwargs)
        self.manager.invoke_hook(hook, **kwargs)

    def emit_envelope(self, name, fields=None, **data):
        """One envelope event; ``fields`` carries names that clash with ``name`` (``event``)."""
        data.update(fields or {})
        if self.manager.has_observer_hook(name):
            self.tally.record(name, data)
        self.manager.emit_observer(name, data)

    def secret(self, text):
        return "%s %s" % (text, self.sentinel)

    def tick(self, seconds):
        self.clock += seconds
        return round(self.clock, 3)

    # building blocks --------------------------------------------------------------------

    def api_attempt(self, ids, call, retry, outcome, finish="stop", tokens=None, error=None,
                    model=MODEL, provider=PROVIDER):
        """``pre_api_request`` then ``post_api_request`` or ``api_request_error``."""
        request_id = "%s:api:%d" % (ids["turn_id"], call)
        base = dict(ids, api_request_id=request_id, model=model, provider=provider,
                    base_url=BASE_URL, api_mode="chat_completions", api_call_count=call)
        started = self.tick(0.05)
        self.emit("pre_api_request", retry_count=retry, message_count=2 + 2 * call,
                  tool_count=31, approx_input_tokens=20000, request_char_count=80000,
                  max_tokens=16000, started_at=started, middleware_trace=[],
                  request={"method": "POST", "body": {"messages": [self.secret("prompt")]}},
                  user_message=self.secret("user asks"),
                  conversation_history=[{"role": "user", "content": self.secret("hist")}],
                  request_messages=[self.secret("messages")], system_prompt=self.secret("sys"),
                  **base)
        duration = 1.5 + call
        ended = self.tick(duration)
        if outcome == "success":
            self.emit("post_api_request", api_duration=duration, started_at=started,
                      ended_at=ended, first_chunk_at=round(started + 0.8, 3),
                      finish_reason=finish, message_count=2 + 2 * call,
                      response_model=RESPONSE_MODEL, usage=tokens,
                      response={"assistant_message": {"content": self.secret("answer")}},
                      assistant_message=NormalizedMessage(self.secret("answer")),
                      assistant_content_chars=42, assistant_tool_call_count=1, **base)
        else:
            status_code, reason, retryable = error
            self.emit("api_request_error", api_duration=duration, started_at=started,
                      ended_at=ended, first_chunk_at=None, first_delta_at=None,
                      status_code=status_code, retry_count=retry, max_retries=3,
                      retryable=retryable, reason=reason,
                      error={"type": "RateLimitError", "message": self.secret("429 for key")},
                      request={"method": "POST", "body": {"messages": [self.secret("p")]}},
                      **base)

    def tool_call(self, ids, call_id, tool, status, duration_ms, error_type=None,
                  approval=None):
        tool_ids = dict(ids, tool_call_id=call_id, tool_name=tool,
                        api_request_id=ids["turn_id"] + ":api:1")
        args = {"command": self.secret("run")}
        self.emit("pre_tool_call", args=args, middleware_trace=[], **tool_ids)
        if approval is not None:
            surface, pattern_key, choice = approval
            approval_ids = {"pattern_key": pattern_key, "pattern_keys": [pattern_key],
                            "session_key": "agent:main:%s:dm:42" % ids["platform"],
                            "surface": surface, "turn_id": ids["turn_id"],
                            "tool_call_id": call_id}
            self.emit("pre_approval_request", command=self.secret("rm -rf"),
                      description=self.secret("why"), session_id=ids["session_id"],
                      **approval_ids)
            extra = {"decided_by": "aux_llm"} if surface == "smart" else {}
            self.emit("post_approval_response", command=self.secret("rm -rf"),
                      description=self.secret("why"), choice=choice, **dict(approval_ids, **extra))
        self.emit("post_tool_call", args=args, result=json.dumps({"output": self.secret("out")}),
                  duration_ms=duration_ms, status=status, error_type=error_type,
                  error_message=None if status == "ok" else self.secret("tool failed"),
                  middleware_trace=[], **tool_ids)

    def turn_start(self, session_id, turn_id, platform, first):
        ids = {"session_id": session_id, "task_id": session_id, "turn_id": turn_id,
               "platform": platform}
        self.emit("pre_llm_call", is_first_turn=first, model=MODEL, parent_session_id="",
                  sender_id=self.secret("sender"), user_message=self.secret("question"),
                  conversation_history=[self.secret("history")], **ids)
        return ids

    def turn_end(self, ids, completed=True):
        if completed:
            self.emit("post_llm_call", model=MODEL, user_message=self.secret("q"),
                      assistant_response=self.secret("final"),
                      conversation_history=[self.secret("h")], **ids)
        self.emit("on_session_end", completed=completed, failed=not completed,
                  interrupted=False,
                  turn_exit_reason="text_response(finish_reason=stop)" if completed
                  else "api_error", model=MODEL, **ids)

    # scenarios --------------------------------------------------------------------------

    def conversation(self):
        cli = "20260920_141203_9f3c2a"
        self.emit("on_session_start", session_id=cli, model=MODEL, platform="cli")

        # Turn 1: a 429 retried then successful, a tool ok and a tool error, then the title.
        ids = self.turn_start(cli, "t_1", "cli", first=True)
        self.api_attempt(ids, 1, 0, "error", error=(429, "rate_limit", True))
        self.api_attempt(ids, 1, 1, "success", "tool_calls", usage(1204, 412, 18030, 952))
        self.tool_call(ids, "toolu_1", "terminal", "ok", 3412)
        self.tool_call(ids, "toolu_2", "read_file", "error", 12, "tool_error")
        self.api_attempt(ids, 2, 0, "success", "stop", usage(300, 120, 19000, 0, 64))
        self.turn_end(ids)
        self.auxiliary_title(cli)

        # Turn 2: a blocked tool after a CLI denial, a timed-out tool after a smart approval.
        ids = self.turn_start(cli, "t_2", "cli", first=False)
        self.api_attempt(ids, 1, 0, "success", "tool_calls", usage(500, 200, 19500, 0))
        self.tool_call(ids, "toolu_3", "terminal", "blocked", 0, "plugin_block",
                       approval=("cli", "rm_rf", "deny"))
        self.tool_call(ids, "toolu_4", "terminal", "timeout", 420000, "tool_timeout",
                       approval=("smart", "sudo", "smart_approve"))
        self.api_attempt(ids, 2, 0, "success", "stop", usage(250, 90, 20000, 0))
        self.turn_end(ids)
        self.emit("on_session_finalize", session_id=cli, platform="cli", reason="cli_exit")

        # Turn 3 on a gateway session: a gateway approval, then one subagent.
        gateway = "20260920_150000_7b7b7b"
        self.emit("on_session_start", session_id=gateway, model=MODEL, platform="telegram")
        ids = self.turn_start(gateway, "t_3", "telegram", first=True)
        self.api_attempt(ids, 1, 0, "success", "tool_calls", usage(2000, 150, 0, 1800))
        self.tool_call(ids, "toolu_5", "terminal", "ok", 950,
                       approval=("gateway", "sudo", "once"))
        self.subagent(ids)
        self.api_attempt(ids, 2, 0, "success", "stop", usage(400, 300, 4000, 0))
        self.turn_end(ids)
        replacement = "20260920_160511_1a2b3c"
        self.emit("on_session_finalize", session_id=gateway, platform="telegram",
                  reason="new_command", old_session_id=gateway, new_session_id=replacement)
        self.emit("on_session_reset", session_id=replacement, platform="telegram",
                  reason="new_command", old_session_id=gateway, new_session_id=replacement)

    def auxiliary_title(self, session_id):
        aux = {"aux_task": "title_generation", "task_id": "", "turn_id": "",
               "session_id": session_id, "platform": "", "api_request_id": "aux-1",
               "api_call_count": 1, "retry_count": 0, "streaming": False, "model": AUX_MODEL,
               "provider": PROVIDER, "base_url": BASE_URL, "api_mode": "chat_completions"}
        started = self.tick(0.01)
        self.emit("pre_auxiliary_call", started_at=started,
                  request_messages=[self.secret("title please")],
                  request={"body": {"messages": [self.secret("t")]}}, **aux)
        self.emit("post_auxiliary_call", started_at=started, ended_at=self.tick(0.912),
                  api_duration=0.912, finish_reason="stop", response_model=AUX_MODEL,
                  usage=usage(310, 9), response={"content": self.secret("A title")},
                  assistant_content_chars=31, assistant_tool_call_count=0, error=None,
                  error_type=None, **aux)

    def subagent(self, parent):
        child = "20260920_151000_44d1e0"
        self.tool_call_pre_only(parent, "toolu_6", "delegate_task")
        self.emit("subagent_start", parent_session_id=parent["session_id"],
                  parent_turn_id=parent["turn_id"], parent_subagent_id=None,
                  child_session_id=child, child_subagent_id="sa-0-4f9e21c3", child_role="leaf",
                  child_goal=self.secret("goal"))
        child_ids = {"session_id": child, "task_id": "sa-0-4f9e21c3", "turn_id": "t_c1",
                     "platform": parent["platform"]}
        self.api_attempt(child_ids, 1, 0, "success", "stop", usage(800, 220, 0, 0))
        self.emit("subagent_stop", parent_session_id=parent["session_id"],
                  parent_turn_id=parent["turn_id"], child_session_id=child, child_role="leaf",
                  child_summary=self.secret("summary"), child_status="completed",
                  tool_call_history=[{"tool_name": "search_files"}], duration_ms=41270)
        self.emit("post_tool_call", args={"goal": self.secret("g")},
                  result=self.secret("result"), duration_ms=41300, status="ok",
                  error_type=None, error_message=None, middleware_trace=[],
                  **dict(parent, tool_call_id="toolu_6", tool_name="delegate_task",
                         api_request_id=parent["turn_id"] + ":api:1"))

    def tool_call_pre_only(self, ids, call_id, tool):
        self.emit("pre_tool_call", args={"goal": self.secret("g")}, middleware_trace=[],
                  **dict(ids, tool_call_id=call_id, tool_name=tool,
                         api_request_id=ids["turn_id"] + ":api:1"))

    def envelope(self):
        session, turn = "20260920_141203_9f3c2a", "t_e1"
        common = {"session_id": session, "task_id": session}
        self.emit_envelope("session_event", {"event": "created"}, session_id=session,
                           session_key="agent:main:cli", timestamp=self.tick(0))
        self.emit_envelope("agent_start", turn_id=turn, run_start_time_ms=1789862400000,
                           **common)
        api = dict(common, api_request_id=turn + ":api:1", provider=PROVIDER, model=MODEL,
                   api_mode="chat_completions")
        self.emit_envelope("pre_api_request", request={"body": self.secret("p")}, **api)
        self.emit_envelope("api_request_error", request={"body": self.secret("p")},
                           error=self.secret("rate limited"), error_type="RateLimitError",
                           duration_ms=1207, **api)
        self.emit_envelope("pre_api_request", request={"body": self.secret("p")}, **api)
        self.emit_envelope("post_api_request", request={"body": self.secret("p")},
                           response={"content": self.secret("a")},
                           usage=usage(1204, 412, 18030, 952), duration_ms=6842,
                           middleware_trace=[], **api)
        tool = dict(common, tool_name="terminal", tool_call_id="toolu_e1")
        self.emit_envelope("pre_tool_call", tool_args={"command": self.secret("c")}, **tool)
        self.emit_envelope("post_tool_call", tool_args={"command": self.secret("c")},
                           tool_result=self.secret("r"), duration_ms=3412, error=None, **tool)
        tool = dict(tool, tool_call_id="toolu_e2", tool_name="read_file")
        self.emit_envelope("pre_tool_call", tool_args={"path": self.secret("c")}, **tool)
        self.emit_envelope("post_tool_call", tool_args={"path": self.secret("c")},
                           tool_result="", duration_ms=12, error=self.secret("not found"),
                           **tool)
        self.emit_envelope("memory_write", memory_provider="builtin",
                           memory_path="/home/" + self.sentinel, memory_name=self.secret("m"),
                           action="add", size_bytes=214, **common)
        self.emit_envelope("turn_end", session_id=session, turn_id=turn,
                           turn_start_time_ms=1789862400100, turn_end_time_ms=1789862418442,
                           turn_duration_ms=18342)
        self.emit_envelope("agent_end", turn_id=turn, run_duration_ms=18342,
                           stop_reason="end_turn", **common)

    # synthetic load ---------------------------------------------------------------------

    def synthetic_turn_events(self, session_id):
        """The hooks of one synthetic turn, as (hook, kwargs) pairs (9 events)."""
        self.synthetic_turns += 1
        number = self.synthetic_turns
        turn = "t_load_%d" % number
        ids = {"session_id": session_id, "task_id": session_id, "turn_id": turn,
               "platform": "cli"}
        api = dict(ids, model=MODEL, provider=PROVIDER, api_mode="chat_completions",
                   base_url=BASE_URL)
        tool = dict(ids, tool_name=("terminal", "read_file", "search_files")[number % 3],
                    tool_call_id="call_%d" % number, api_request_id=turn + ":api:1")
        status = "error" if number % 10 == 0 else "ok"
        return [
            ("pre_llm_call", dict(ids, is_first_turn=number == 1, model=MODEL,
                                  user_message="synthetic")),
            ("pre_api_request", dict(api, api_request_id=turn + ":api:1", api_call_count=1,
                                     retry_count=0, started_at=time.time())),
            ("post_api_request", dict(api, api_request_id=turn + ":api:1", api_call_count=1,
                                      api_duration=0.8, finish_reason="tool_calls",
                                      usage=usage(500, 100, 2000, 0),
                                      assistant_message=NormalizedMessage("synthetic"))),
            ("pre_tool_call", dict(tool, args={})),
            ("post_tool_call", dict(tool, args={}, result="{}", duration_ms=25, status=status,
                                    error_type="tool_error" if status == "error" else None)),
            ("pre_api_request", dict(api, api_request_id=turn + ":api:2", api_call_count=2,
                                     retry_count=0, started_at=time.time())),
            ("post_api_request", dict(api, api_request_id=turn + ":api:2", api_call_count=2,
                                      api_duration=0.5, finish_reason="stop",
                                      usage=usage(200, 50, 2500, 0),
                                      assistant_message=NormalizedMessage("synthetic"))),
            ("on_session_end", dict(ids, completed=True, failed=False, interrupted=False,
                                    turn_exit_reason="text_response(finish_reason=stop)",
                                    model=MODEL)),
        ]

    def load(self, count, rate, session_id="load_session", wrap_session=True):
        """Exactly ``count`` events at ``rate`` per second (0: unthrottled)."""
        plan = []
        if wrap_session and count >= 1:
            plan.append(("on_session_start",
                         {"session_id": session_id, "model": MODEL, "platform": "cli"}))
        body = count - len(plan) - (1 if wrap_session and count >= 2 else 0)
        emitted = 0
        started = time.monotonic()
        for hook, kwargs in plan:
            self._paced_emit(hook, kwargs, emitted, rate, started)
            emitted += 1
        while body > 0:
            for hook, kwargs in self.synthetic_turn_events(session_id):
                if body == 0:
                    break
                self._paced_emit(hook, kwargs, emitted, rate, started)
                emitted += 1
                body -= 1
        if wrap_session and count >= 2:
            self._paced_emit("on_session_finalize",
                             {"session_id": session_id, "platform": "cli", "reason": "load_done"},
                             emitted, rate, started)
            emitted += 1
        return emitted

    def _paced_emit(self, hook, kwargs, index, rate, started):
        if rate > 0:
            delay = started + index / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        self.emit(hook, **kwargs)


def write(line):
    sys.stdout.write(json.dumps(line, sort_keys=True) + "\n")
    sys.stdout.flush()


def drain(bridge, timeout):
    """Wait until everything emitted so far was delivered (or dropped), at most ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        bridge.flush(min(1.0, max(0.0, deadline - time.monotonic())))
        stats = bridge.stats()
        if stats["queue_depth"] == 0 and stats["buffer_depth"] == 0:
            return True
        time.sleep(0.05)
    return False


def hold(driver, bridge, stdin, plugin_file):
    write({"type": "ready", "stats": bridge.stats(), "plugin_file": plugin_file})
    for raw in stdin:
        words = raw.split()
        if not words:
            continue
        command, args = words[0], words[1:]
        try:
            if command == "turn":
                turns = int(args[0]) if args else 1
                emitted = driver.load(TURN_EVENTS * turns, 0, session_id="hold_session",
                                      wrap_session=False)
                write({"type": "ack", "command": "turn", "emitted": emitted})
            elif command == "events":
                rate = float(args[1]) if len(args) > 1 else 0.0
                emitted = driver.load(int(args[0]), rate, session_id="hold_session",
                                      wrap_session=False)
                write({"type": "ack", "command": "events", "emitted": emitted})
            elif command == "flush":
                delivered = bridge.flush(1.0)
                write({"type": "stats", "flushed": delivered, "stats": bridge.stats()})
            elif command == "stats":
                write({"type": "stats", "stats": bridge.stats()})
            else:
                write({"type": "error", "error": "unknown command"})
        except (ValueError, IndexError):
            write({"type": "error", "error": "bad arguments"})


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="sidecar ingest URL (…/v1/events)")
    parser.add_argument("--scenario", default=None, choices=("conversation", "envelope"))
    parser.add_argument("--events", type=int, default=None, help="load mode: emit N events")
    parser.add_argument("--rate", type=float, default=0.0, help="load mode: events per second")
    parser.add_argument("--hold", action="store_true", help="keep running until stdin closes")
    parser.add_argument("--token", default=None, help="bearer token (HERMES_SIDECAR_TOKEN)")
    parser.add_argument("--heartbeat-interval", type=float, default=None)
    parser.add_argument("--hook-timeout", type=float, default=30.0,
                        help="Hermes plugins.hook_callback_timeout; 0 runs every hook on the "
                             "caller thread (faster load, same plugin code)")
    parser.add_argument("--drain-timeout", type=float, default=10.0,
                        help="seconds to wait for delivery before exiting")
    parser.add_argument("--sentinel", default=None, help="secret planted in content fields")
    parser.add_argument("--entry-point", default=None, metavar="NAME",
                        help="load the pip-installed plugin NAME through the hermes_agent.plugins "
                             "entry points, as Hermes does, instead of the plugin directory")
    args = parser.parse_args(argv)
    if args.events is not None and args.scenario is not None:
        parser.error("--events and --scenario are exclusive")
    if args.events is None and args.scenario is None and not args.hold:
        args.scenario = "conversation"
    return args


def main(argv=None, stdin=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ["HERMES_SIDECAR_URL"] = args.url
    os.environ.pop("HERMES_SIDECAR_DISABLED", None)
    if args.token is not None:
        os.environ["HERMES_SIDECAR_TOKEN"] = args.token
    if args.heartbeat_interval is not None:
        os.environ["HERMES_SIDECAR_HEARTBEAT_INTERVAL"] = str(args.heartbeat_interval)
    observer = args.scenario == "envelope"
    manager = PluginManager(hook_callback_timeout=args.hook_timeout)
    if args.entry_point is not None:
        module = load_entry_point_plugin(args.entry_point, manager)
    else:
        module = load_directory_plugin(PLUGIN_DIR, manager, observer_hooks=observer)
    bridges = list(module._LIVE_BRIDGES)
    if len(bridges) != 1:
        write({"type": "error", "error": "plugin did not start a bridge"})
        return 2
    bridge = bridges[0]
    sentinel = args.sentinel or "SECRET-" + uuid.uuid4().hex
    driver = Driver(manager, bridge, sentinel, observer=observer)

    started = time.monotonic()
    if args.scenario == "conversation":
        driver.conversation()
    elif args.scenario == "envelope":
        driver.envelope()
    elif args.events is not None:
        driver.load(args.events, args.rate)
    emit_seconds = time.monotonic() - started
    drained = drain(bridge, args.drain_timeout)
    if args.hold:
        hold(driver, bridge, stdin if stdin is not None else sys.stdin, module.__file__)
        drained = drain(bridge, args.drain_timeout)
    bridge.shutdown()  # what atexit would do: final heartbeat, leftovers counted "shutdown"
    stats = bridge.stats()
    write({
        "type": "summary",
        "scenario": args.scenario or ("load" if args.events is not None else "hold"),
        "instance": bridge.instance,
        "sentinel": sentinel,
        "emitted": dict(sorted(driver.tally.emitted.items())),
        "emitted_total": sum(driver.tally.emitted.values()),
        "expected": driver.tally.facts,
        "emit_seconds": round(emit_seconds, 3),
        "drained": drained,
        "events_numbered": stats["events_numbered"],
        "events_delivered": stats["events_delivered"],
        "dropped": stats["dropped"],
        "stats": stats,
        "hook_failures": [repr(failure) for failure in manager.failures],
        "plugin_file": module.__file__,
    })
    return 0 if not manager.failures else 1


if __name__ == "__main__":
    sys.exit(main())
