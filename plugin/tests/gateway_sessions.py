"""A Hermes 0.21 gateway in one process, driving the real bridge plugin: two profiles (as a
multiplexing gateway hosts them, each with its own plugin manager and so its own plugin
instance) and ten worker threads, as gateway/run.py runs one agent per session key on a
``ThreadPoolExecutor(max_workers=10)``, so up to ten sessions' hooks interleave.

Every session runs the same three turns on its own thread, and every turn starts at a barrier
the ten workers share, so their hooks interleave for certain. Each hook is fired with the
keyword arguments of the call site its step names (Hermes 0.21 where the hook or field is new,
see CALL_SITES), content fields holding SENTINEL. The plan is fixed, so the counts a sidecar must
show follow from it (``expected()``) and are checked exactly by test/e2e/gateway.test.ts.

Hermes' own dispatch (plugin/tests/hermes_dispatch.py, as plugins_dispatch.py gates bounded
hooks) skips a call while another call of the same callback with the same identity runs; a
hook without tool_call_id or turn_id (on_session_start at its call site) shares one identity
across sessions, so concurrent session starts can be skipped by Hermes before the plugin sees
them. Those skips are reported (``skipped``) and subtracted: the plugin must deliver exactly
what Hermes handed it.

    python3 plugin/tests/gateway_sessions.py <sidecar events URL>

prints one JSON line: the expected counts, each plugin instance's delivery stats, and whether
every instance flushed.
"""

import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import support  # noqa: E402
from hermes_dispatch import (  # noqa: E402
    HERMES_021_VALID_HOOKS, HERMES_021_VERSION, PluginManager, host_hook_list,
    load_directory_plugin)

SENTINEL = "GATEWAY-SENTINEL-7f3e"
PROFILES = (("default", "telegram"), ("work", "discord"))
SESSIONS_PER_PROFILE = 20
TURNS = 3
WORKERS = 10  # gateway/run.py: ThreadPoolExecutor(max_workers=10)
MODEL = "anthropic/claude-sonnet-4.6"
PROVIDER = "openrouter"
CONTEXT_LENGTH = 200000
USAGE = {"input_tokens": 1000, "output_tokens": 200, "cache_read_tokens": 3000,
         "cache_write_tokens": 0, "reasoning_tokens": 50, "request_count": 1,
         "prompt_tokens": 4000, "total_tokens": 4200,
         # agent/api_request_hooks.py (28a1cc92): the provider reported no cache writes.
         "reported_usage_fields": {"prompt_tokens": True, "input_tokens": True,
                                   "output_tokens": True, "cache_read_tokens": True,
                                   "cache_write_tokens": False, "reasoning_tokens": True}}

CALL_SITES = {
    "on_session_start": "run_agent.py AIAgent.run_conversation (first turn of a session)",
    "pre_llm_call": "run_agent.py AIAgent.run_conversation (turn start)",
    "pre_api_request": "run_agent.py conversation loop, before the provider call",
    "api_request_error": "agent/api_request_hooks.py _invoke_api_request_error_hook (28a1cc92)",
    "post_api_request": "agent/turn_response_intake.py _fire_post_api_request_hook (03a3acc0); "
                        "context_length as on Hermes main",
    "pre_tool_call": "model_tools.py handle_function_call",
    "post_tool_call": "model_tools.py _emit_post_tool_call_hook",
    "pre_approval_request": "tools/approval.py _human_decision via "
                            "tools/approval_context.py _fire_approval_hook (079b5a95)",
    "post_approval_response": "tools/approval.py _human_decision via "
                              "tools/approval_context.py _fire_approval_hook (079b5a95)",
    "agent_loop_stopped": "gateway/run_agent_cache.py _interrupt_and_clear_session (003b7ae5)",
    "on_session_end": "agent/turn_finalizer.py finalize_turn (0107e039)",
    "on_session_finalize": "gateway/run.py session teardown",
}

# The three ways a turn ends here: turn t of session s ends the ((s + t) % 3)-th way, so every
# session ends one turn each way.
ENDINGS = ("completed", "failed", "interrupted")
EXIT_REASONS = {
    "completed": "text_response(finish_reason=stop)",
    # local_processing_error(<the first 80 characters of an error message>): free text, a path.
    "failed": "local_processing_error(FileNotFoundError: /home/alice/" + SENTINEL + "/notes.txt)",
    "interrupted": "interrupted_during_api_call(" + SENTINEL + ")",
}


def session_steps(profile, platform, number):
    """``[(hook, kwargs), ...]`` per turn for one session, and its finalize step."""
    session_id = "%s_s%02d" % (profile, number)
    session_key = "agent:%s:%s:dm:%d" % (profile, platform, 1000 + number)
    index = _global_index(profile, number)
    turns = []
    for turn in range(TURNS):
        turn_id = "%s_t%d" % (session_id, turn)
        api_request_id = turn_id + ":api:1"
        tool_call_id = "toolu_%s" % turn_id
        ending = ENDINGS[(index + turn) % 3]
        steps = []
        if turn == 0:
            steps.append(("on_session_start", dict(session_id=session_id, model=MODEL,
                                                   platform=platform)))
        steps.append(("pre_llm_call", dict(
            session_id=session_id, task_id=session_id, turn_id=turn_id,
            user_message="please read " + SENTINEL, conversation_history=[SENTINEL],
            is_first_turn=turn == 0, model=MODEL, platform=platform, sender_id=SENTINEL)))
        api = dict(task_id=session_id, turn_id=turn_id, api_request_id=api_request_id,
                   session_id=session_id, platform=platform, model=MODEL, provider=PROVIDER,
                   base_url="https://" + SENTINEL + "@openrouter.ai/api/v1",
                   api_mode="chat_completions", api_call_count=1)
        steps.append(("pre_api_request", dict(api, request={"body": {"messages": [SENTINEL]}})))
        if turn == 0:
            # A streamed attempt that failed after its first chunk, then the retry.
            steps.append(("api_request_error", dict(
                api, api_duration=2.0, started_at=1789000000.0, ended_at=1789000002.0,
                first_chunk_at=1789000000.5, first_delta_at=1789000000.75, status_code=502,
                retry_count=0, max_retries=3, retryable=True, reason="server_error",
                error={"type": "APIConnectionError", "message": SENTINEL + " connection reset"},
                request={"body": {"messages": [SENTINEL]}})))
            steps.append(("pre_api_request", dict(api, retry_count=1,
                                                  request={"body": {"messages": [SENTINEL]}})))
        steps.append(("post_api_request", dict(
            api, api_duration=3.0, started_at=1789000000.0, ended_at=1789000003.0,
            first_chunk_at=1789000001.0, finish_reason="tool_calls", message_count=2,
            response_model=MODEL, response={"assistant_message": {"content": SENTINEL}},
            usage=dict(USAGE), assistant_message=support.NotSerializable(SENTINEL),
            assistant_content_chars=10, assistant_tool_call_count=1, moa_references=None,
            context_length=CONTEXT_LENGTH)))
        steps.append(("pre_tool_call", dict(
            tool_name="terminal", args={"command": SENTINEL}, task_id=session_id,
            session_id=session_id, tool_call_id=tool_call_id, turn_id=turn_id,
            api_request_id=api_request_id, middleware_trace=[SENTINEL])))
        if turn == 1:
            approval = dict(command="rm -rf /home/" + SENTINEL, description=SENTINEL,
                            pattern_key="rm_rf", pattern_keys=["rm_rf"],
                            session_key=session_key, surface="gateway", turn_id=turn_id,
                            tool_call_id=tool_call_id, session_id=session_id)
            steps.append(("pre_approval_request", dict(approval)))
            choice = "once" if index % 2 == 0 else "deny"
            steps.append(("post_approval_response", dict(approval, choice=choice,
                                                         decided_by="user")))
        interrupted = ending == "interrupted"
        if interrupted:
            steps.append(("agent_loop_stopped", dict(
                session_key=session_key, platform=platform, reason="user_stop",
                invalidation_reason="session_interrupt")))
        steps.append(("post_tool_call", dict(
            tool_name="terminal", args={"command": SENTINEL}, result=SENTINEL,
            task_id=session_id, session_id=session_id, tool_call_id=tool_call_id,
            turn_id=turn_id, api_request_id=api_request_id, duration_ms=250,
            status="cancelled" if interrupted else "ok",
            error_type="user_interrupt" if interrupted else None,
            error_message=SENTINEL if interrupted else None, middleware_trace=[SENTINEL])))
        steps.append(("on_session_end", dict(
            session_id=session_id, task_id=session_id, turn_id=turn_id,
            completed=ending == "completed", failed=ending == "failed",
            interrupted=interrupted, turn_exit_reason=EXIT_REASONS[ending], model=MODEL,
            platform=platform)))
        turns.append(steps)
    finalize = ("on_session_finalize", dict(session_id=session_id, platform=platform,
                                            reason="session_end"))
    return turns, finalize


def _global_index(profile, number):
    order = [name for name, _ in PROFILES].index(profile)
    return order * SESSIONS_PER_PROFILE + number


def expected():
    """The counts the plan implies, by the name a test checks them under."""
    sessions = len(PROFILES) * SESSIONS_PER_PROFILE
    turns = sessions * TURNS
    per_ending = turns // len(ENDINGS)
    return {
        "sessions": sessions,
        "turns": turns,
        "turns_by_ending": {ending: per_ending for ending in ENDINGS},
        "api_success": turns,
        "api_error": sessions,
        "tool_calls": {"ok": turns - per_ending, "cancelled": per_ending},
        "approvals": {"once": sessions // 2, "deny": sessions // 2},
        "interrupts_per_platform": per_ending // len(PROFILES),
        "profiles": [name for name, _ in PROFILES],
        "events": sum(len(step) for profile, platform in PROFILES
                      for number in range(SESSIONS_PER_PROFILE)
                      for step in _all_steps(profile, platform, number)),
    }


def _all_steps(profile, platform, number):
    turns, finalize = session_steps(profile, platform, number)
    return [[hook for hook, _ in steps] for steps in turns] + [[finalize[0]]]


def run(url, workers=WORKERS):
    """Load the plugin once per profile, run every session on the worker pool, flush."""
    managers, bridges = {}, {}
    with host_hook_list(HERMES_021_VALID_HOOKS, version=HERMES_021_VERSION):
        with support.patched_environ(support.fast_env(url)):
            for profile, _platform in PROFILES:
                manager = PluginManager()
                module = load_directory_plugin(support.PLUGIN_DIR, manager, profile=profile)
                managers[profile] = manager
                bridges[profile] = list(module._LIVE_BRIDGES)[0]
        barrier = threading.Barrier(workers)

        def run_session(job):
            profile, platform, number = job
            manager = managers[profile]
            turns, finalize = session_steps(profile, platform, number)
            for steps in turns:
                barrier.wait(timeout=30)  # all ten workers start this turn together
                for hook, kwargs in steps:
                    manager.invoke_hook(hook, **kwargs)
            manager.invoke_hook(finalize[0], **finalize[1])

        jobs = [(profile, platform, number) for profile, platform in PROFILES
                for number in range(SESSIONS_PER_PROFILE)]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gateway-agent") as pool:
            list(pool.map(run_session, jobs))
        flushed = {profile: bridge.flush(10.0) for profile, bridge in bridges.items()}
        stats = {profile: bridge.stats() for profile, bridge in bridges.items()}
        for bridge in bridges.values():
            bridge.shutdown(2.0)
    failures = [repr(failure) for manager in managers.values() for failure in manager.failures]
    skipped = {}
    for profile, manager in managers.items():
        for hook in manager.skipped:
            skipped.setdefault(profile, {}).setdefault(hook, 0)
            skipped[profile][hook] += 1
    return {"expected": expected(), "flushed": flushed, "stats": stats, "failures": failures,
            "skipped": skipped}


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1])))
