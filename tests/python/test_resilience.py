"""Provider fidelity and resilience in the Python binding, against the real libpanto and the
provider emulator: retries (ProviderRetry events), Retry-After, timeouts, cancellation from
another thread, close() and Ctrl-C on a blocked next(), reopen() after set_config(), thinking
levels and thinking blocks.

    PYTHONPATH=bindings-py PANTO_LIBRARY=zig-out/lib/libpanto.so \
        .venv/bin/python -m pytest -q tests/python/test_resilience.py
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, List

import pytest

import panto
from panto import _native
from panto.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}

# Fast retries: tests never wait for the library's default backoff.
FAST = panto.RetryPolicy(max_retries=2, initial_delay_ms=1, max_delay_ms=5)
NO_RETRY = panto.RetryPolicy(max_retries=0)

HELLO = {"message": {"id": "msg_hello", "content": [{"type": "text", "text": "Hello big world"}],
                     "usage": {"input_tokens": 7, "output_tokens": 3}}}


# Every test here needs the library (conftest.py fails them clearly when it is missing).
pytestmark = pytest.mark.usefixtures("library")


def new_agent(emu: Emulator, provider: str = "anthropic", **kw: Any) -> panto.Agent:
    kw.setdefault("retry", FAST)
    return panto.Agent(provider=provider, model="test-model", base_url=emu.url, api_key="test-key", **kw)


def overloaded(**extra: Any) -> Dict[str, Any]:
    return dict({"status": 529, "error": {"type": "overloaded_error", "message": "Overloaded"}}, **extra)


def user(text: str) -> Dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def blocks_and_stop(conversation: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The messages without who made them and their usage (test_conversation.py checks those;
    a canceled message's usage depends on how far the stream was read)."""
    return [{k: v for k, v in m.items() if k not in ("provider", "model", "usage")} for m in conversation]


def assistant(text: str, stop_reason: str = "end_turn") -> Dict[str, Any]:
    content = [{"type": "text", "text": text}] if text else []
    return {"role": "assistant", "content": content, "stop_reason": stop_reason}


def kinds(events: List[panto.Event]) -> List[str]:
    return [e.kind for e in events]


def user_texts(body: Dict[str, Any]) -> List[str]:
    """The text of every user message of a request body (either provider)."""
    out = []
    for m in body["messages"]:
        if m["role"] != "user":
            continue
        content = m["content"]
        out.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return out


_cuts: Dict[str, int] = {}


def rendered_body(emu: Emulator, provider: str, answer: Dict[str, Any]) -> bytes:
    """The bytes of `answer` as the emulator renders them for the request panto sends (its
    options shape the body: OpenAI's include_usage adds `"usage": null` to every chunk)."""
    emu.load({"responses": [answer, answer]})
    with new_agent(emu, provider) as agent, agent.run("Hi") as stream:
        list(stream)
    (request,) = emu.requests()
    headers = {k: v for k, v in request["headers"].items() if k in ("x-api-key", "anthropic-version", "authorization")}
    headers["content-type"] = "application/json"
    req = urllib.request.Request(emu.url + request["path"], data=json.dumps(request["body"]).encode(), headers=headers)
    with urllib.request.urlopen(req, timeout=5) as response:
        return response.read()


def cut_after_first_delta(provider: str) -> int:
    """The body offset just after the SSE event of HELLO's first text delta ("Hello "): a
    `fault` there stalls the stream once the user has seen that delta. Measured on a real
    answer, so it follows the emulator's rendering."""
    if provider not in _cuts:
        with Emulator() as emu:
            data = rendered_body(emu, provider, HELLO)
        _cuts[provider] = data.index(b"\n\n", data.index(b"Hello ")) + 2
        assert _cuts[provider] < data.index(b"big ")
    return _cuts[provider]


def stalled(provider: str) -> Dict[str, Any]:
    """HELLO, stalled for good after its first text delta."""
    return dict(HELLO, fault={"after_bytes": cut_after_first_delta(provider), "kind": "stall"})


def read_until_first_delta(stream: panto.Stream) -> List[panto.Event]:
    seen = []
    for ev in stream:
        seen.append(ev)
        if isinstance(ev, panto.ContentDelta):
            return seen
    raise AssertionError(f"no delta: {seen}")


# ---- retries -------------------------------------------------------------------------------


def test_retry_on_529_then_success(provider: str) -> None:
    with Emulator(scenario={"responses": [overloaded(), HELLO]}) as emu, new_agent(emu, provider) as agent:
        with agent.run("Hi") as stream:
            events = list(stream)
        retry, *rest = events
        assert isinstance(retry, panto.ProviderRetry) and retry.kind == "provider_retry"
        assert (retry.attempt, retry.http_status) == (1, 529)
        assert retry.reason.startswith("overloaded_error") and "Overloaded" in retry.reason
        assert 0 <= retry.delay_ms <= 5  # FAST: 1 ms initial, 5 ms cap
        # The message then runs from its start.
        assert kinds(rest) == ["message_start", "block_start", "content_delta", "content_delta", "content_delta",
                               "block_complete", "message_end", "message_complete"]
        assert rest[-1].usage.output_tokens == 3
        first, second = emu.requests()
        assert first["body"] == second["body"]  # the same request again
        assert user_texts(second["body"]) == ["Hi"]
        assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello big world")]
        assert stream.error is None and stream.done


def test_retry_after_ms_is_honored() -> None:
    # A long backoff of its own: only the provider's retry-after-ms makes the delay 50 ms.
    policy = panto.RetryPolicy(max_retries=1, initial_delay_ms=5000, max_delay_ms=5000)
    answers = [overloaded(headers={"retry-after-ms": "50"}), HELLO]
    with Emulator(scenario={"responses": answers}) as emu, new_agent(emu, retry=policy) as agent:
        with agent.run("Hi") as stream:
            retry = next(stream)
            assert isinstance(retry, panto.ProviderRetry)
            assert retry.delay_ms == 50 and retry.http_status == 529
            started = time.monotonic()
            assert isinstance(next(stream), panto.MessageStart)  # waits the delay, asks again
            waited = time.monotonic() - started
            assert "".join(stream.text()) == "Hello big world"
        assert 0.045 <= waited < 1.0, waited
        assert len(emu.requests()) == 2


def test_retry_after_beyond_the_limit_is_not_waited_for() -> None:
    answer = {"status": 429, "error": {"type": "rate_limit_error", "message": "Slow down"},
              "headers": {"retry-after": "3600"}}
    policy = panto.RetryPolicy(max_retries=3, initial_delay_ms=1, max_retry_after_ms=1000)
    with Emulator(scenario={"responses": [answer], "repeat_last": True}) as emu, new_agent(emu, retry=policy) as agent:
        with agent.run("Hi") as stream:
            started = time.monotonic()
            with pytest.raises(panto.RateLimitError) as info:
                next(stream)
            assert time.monotonic() - started < 1.0
        assert (info.value.http_status, info.value.error_type) == (429, "rate_limit_error")
        assert len(emu.requests()) == 1


def test_retries_exhausted_raise_the_last_error(provider: str) -> None:
    with Emulator(scenario={"responses": [overloaded()], "repeat_last": True}) as emu, new_agent(emu, provider) as agent:
        with agent.run("Hi") as stream:
            r1, r2 = next(stream), next(stream)
            assert [(r.kind, r.attempt, r.http_status) for r in (r1, r2)] == [
                ("provider_retry", 1, 529), ("provider_retry", 2, 529)]
            with pytest.raises(panto.OverloadedError) as info:
                next(stream)
            err = info.value
            assert (err.http_status, err.error_type, err.code) == (529, "overloaded_error", "overloaded")
            with pytest.raises(panto.OverloadedError):  # sticky
                next(stream)
            assert stream.error is err
        assert len(emu.requests()) == 3  # the first try and 2 retries
        assert blocks_and_stop(agent.conversation) == []  # a turn that kept nothing takes its user message back out


def test_no_retry_when_turned_off() -> None:
    with Emulator(scenario={"responses": [overloaded(), HELLO]}) as emu, new_agent(emu, retry={"max_retries": 0}) as agent:
        with agent.run("Hi") as stream:
            with pytest.raises(panto.OverloadedError):
                next(stream)
        assert len(emu.requests()) == 1


def test_error_event_before_the_first_delta_is_retried(provider: str) -> None:
    # after_events 1: only the message start went out (Anthropic message_start, OpenAI role chunk).
    cut = dict(HELLO, stream_error={"type": "overloaded_error", "message": "Overloaded", "after_events": 1})
    with Emulator(scenario={"responses": [cut, HELLO]}) as emu, new_agent(emu, provider) as agent:
        with agent.run("Hi") as stream:
            events = list(stream)
        assert kinds(events[:3]) == ["message_start", "provider_retry", "message_start"]
        retry = events[1]
        assert retry.attempt == 1 and retry.http_status is None  # an event, not an HTTP answer
        assert "overloaded_error" in retry.reason
        assert "".join(e.text for e in events if isinstance(e, panto.ContentDelta)) == "Hello big world"
        assert len(emu.requests()) == 2
        assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello big world")]


def test_error_event_after_a_delta_is_not_retried(provider: str) -> None:
    events_before = {"anthropic": 5, "openai": 2}[provider]  # up to and with the first text delta
    cut = dict(HELLO, stream_error={"type": "overloaded_error", "message": "Overloaded", "after_events": events_before})
    with Emulator(scenario={"responses": [cut, HELLO]}) as emu, new_agent(emu, provider) as agent:
        with agent.run("Hi") as stream:
            seen: List[panto.Event] = []
            with pytest.raises(panto.OverloadedError) as info:
                for ev in stream:
                    seen.append(ev)
        assert panto.ContentDelta(0, "text", "Hello ") in seen
        assert not any(isinstance(e, panto.ProviderRetry) for e in seen)
        assert info.value.error_type == "overloaded_error" and info.value.http_status is None
        assert len(emu.requests()) == 1
        assert blocks_and_stop(agent.conversation) == []  # a turn that kept nothing takes its user message back out


# ---- timeouts ------------------------------------------------------------------------------


def test_idle_timeout_on_a_stalled_stream(provider: str) -> None:
    with Emulator(scenario={"responses": [stalled(provider)]}) as emu:
        with new_agent(emu, provider, timeouts={"idle_ms": 200}) as agent, agent.run("Hi") as stream:
            read_until_first_delta(stream)
            started = time.monotonic()
            with pytest.raises(panto.APITimeoutError) as info:
                next(stream)
            waited = time.monotonic() - started
            err = info.value
            assert (err.code, err.error_type, err.http_status) == ("timeout", "timeout_error", None)
            assert "idle_ms" in err.message
            assert 0.1 <= waited < 1.0, waited
            with pytest.raises(panto.APITimeoutError):  # sticky
                next(stream)
            with pytest.raises(panto.StateError):  # not a failure at the provider-open boundary
                stream.reopen()
        assert len(emu.requests()) == 1  # content was delivered: not retried


def test_first_byte_timeout() -> None:
    slow = dict(HELLO, delay_ms=3000)  # the head comes after 3 s
    with Emulator(scenario={"responses": [slow]}) as emu:
        timeouts = panto.Timeouts(first_byte_ms=150)
        with new_agent(emu, timeouts=timeouts, retry=NO_RETRY) as agent, agent.run("Hi") as stream:
            started = time.monotonic()
            with pytest.raises(panto.APITimeoutError) as info:
                next(stream)
            assert time.monotonic() - started < 1.0
            assert info.value.error_type == "timeout_error" and "first_byte_ms" in info.value.message
            assert blocks_and_stop(agent.conversation) == []  # a turn that kept nothing takes its user message back out


def test_total_timeout_ends_the_retries() -> None:
    answers = [overloaded(headers={"retry-after-ms": "100"})]
    policy = panto.RetryPolicy(max_retries=10)
    with Emulator(scenario={"responses": answers, "repeat_last": True}) as emu:
        with new_agent(emu, retry=policy, timeouts={"total_ms": 250}) as agent, agent.run("Hi") as stream:
            started = time.monotonic()
            seen: List[panto.Event] = []
            with pytest.raises(panto.APITimeoutError) as info:
                for ev in stream:
                    seen.append(ev)
            assert time.monotonic() - started < 1.0
        assert seen and all(isinstance(e, panto.ProviderRetry) and e.delay_ms == 100 for e in seen)
        assert 1 <= len(seen) <= 3
        assert info.value.error_type == "timeout_error" and info.value.http_status is None


# ---- cancel and close ----------------------------------------------------------------------


def test_cancel_from_another_thread_while_blocked(provider: str) -> None:
    with Emulator(scenario={"responses": [stalled(provider), HELLO]}) as emu, new_agent(emu, provider) as agent:
        stream = agent.run("Hi")
        read_until_first_delta(stream)
        canceled_at: List[float] = []

        def cancel() -> None:
            canceled_at.append(time.monotonic())
            stream.cancel()

        timer = threading.Timer(0.2, cancel)
        timer.start()
        with pytest.raises(panto.CanceledError) as info:
            next(stream)  # blocked on the stall until the cancel
        returned = time.monotonic()
        timer.join()
        assert canceled_at and returned - canceled_at[0] < 0.5
        assert (info.value.code, info.value.error_type, info.value.http_status) == ("canceled", "canceled_error", None)
        with pytest.raises(panto.CanceledError):  # sticky
            next(stream)
        stream.cancel()  # twice: harmless
        # What the user saw of the message stays, marked aborted.
        assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello ", "aborted")]
        stream.close()
        # A new turn works, and carries the partial message.
        with agent.run("Go on") as again:
            assert "".join(again.text()) == "Hello big world"
        assert blocks_and_stop(agent.conversation)[2:] == [user("Go on"), assistant("Hello big world")]
        sent = emu.requests()[-1]["body"]["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        assert sent[1]["content"] in ([{"type": "text", "text": "Hello "}], "Hello ")  # Anthropic, OpenAI


def test_cancel_a_stream_iterated_by_another_thread() -> None:
    with Emulator(scenario={"responses": [stalled("anthropic")]}) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        result: Dict[str, Any] = {}
        first_delta = threading.Event()

        def consume() -> None:
            try:
                for ev in stream:
                    if isinstance(ev, panto.ContentDelta):
                        first_delta.set()
            except BaseException as e:  # reported to the main thread
                result["error"] = e
            result["at"] = time.monotonic()

        worker = threading.Thread(target=consume)
        worker.start()
        assert first_delta.wait(5)
        time.sleep(0.1)  # the worker is now blocked in next()
        canceled = time.monotonic()
        stream.cancel()
        worker.join(5)
        assert not worker.is_alive()
        assert isinstance(result["error"], panto.CanceledError)
        assert result["at"] - canceled < 0.5
        assert blocks_and_stop(agent.conversation)[-1] == assistant("Hello ", "aborted")
        stream.close()


def test_cancel_before_the_first_next_sends_nothing() -> None:
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        stream.cancel()
        with pytest.raises(panto.CanceledError):
            next(stream)
        assert emu.requests() == []
        assert blocks_and_stop(agent.conversation) == []  # a turn that kept nothing takes its user message back out
        stream.close()
        stream.cancel()  # closed: nothing


def test_cancel_after_the_end_changes_nothing() -> None:
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu) as agent:
        with agent.run("Hi") as stream:
            list(stream)
            stream.cancel()
            with pytest.raises(StopIteration):
                next(stream)
            assert stream.done and stream.error is None
        assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello big world")]


def test_close_from_another_thread_while_blocked() -> None:
    with Emulator(scenario={"responses": [stalled("anthropic"), HELLO]}) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        read_until_first_delta(stream)
        timer = threading.Timer(0.2, stream.close)
        timer.start()
        started = time.monotonic()
        with pytest.raises(panto.CanceledError):
            next(stream)
        timer.join()
        assert time.monotonic() - started < 1.0
        assert stream.closed
        with pytest.raises(panto.CanceledError):
            next(stream)
        assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello ", "aborted")]
        with agent.run("Again") as again:
            assert "".join(again.text()) == "Hello big world"


def test_close_inside_a_with_block_on_an_exception() -> None:
    # Leaving the with block by an exception ends the turn: the partial message stays.
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu) as agent:
        with pytest.raises(RuntimeError):
            with agent.run("Hi") as stream:
                for ev in stream:
                    if isinstance(ev, panto.ContentDelta) and ev.text == "big ":
                        raise RuntimeError("enough")
        assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello big ", "aborted")]
        with pytest.raises(panto.CanceledError):
            next(stream)


def test_dropping_an_unfinished_stream_keeps_what_was_seen() -> None:
    # The garbage collector ends the turn as close() does: the events read ahead in the
    # batch and not seen ("world") are given back first.
    with Emulator(scenario={"responses": [HELLO, HELLO]}) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        for ev in stream:
            if isinstance(ev, panto.ContentDelta) and ev.text == "big ":
                break
        del stream, ev
        gc.collect()
        assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello big ", "aborted")]
        with agent.run("Again") as again:
            assert "".join(again.text()) == "Hello big world"
        sent = emu.requests()[-1]["body"]["messages"]
        assert sent[1]["content"] in ([{"type": "text", "text": "Hello big "}], "Hello big ")


def test_a_cancel_before_any_content_sends_no_empty_message() -> None:
    with Emulator(scenario={"responses": [HELLO], "repeat_last": True}) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        assert isinstance(next(stream), panto.MessageStart)
        stream.close()
        assert blocks_and_stop(agent.conversation) == []  # nothing arrived: no (invalid) empty message, and the turn is rolled back
        with agent.run("Again") as again:
            list(again)
        sent = emu.requests()[-1]["body"]["messages"]
        assert all(m["content"] for m in sent), sent


# ---- Ctrl-C --------------------------------------------------------------------------------

CTRL_C_CHILD = """
import json, os, signal, sys, threading, time
import panto
# Ctrl-C as at a terminal, also when this test runs in the background (where the shell
# ignores SIGINT, and Python then installs no handler).
signal.signal(signal.SIGINT, signal.default_int_handler)

url, after_bytes, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode == "foreign_wakeup_fd":  # someone else (an event loop, a GUI) holds the wakeup fd
    r, w = os.pipe()
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w)
agent = panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k", retry={"max_retries": 0})
stream = agent.run("Hi")
seen = []
for ev in stream:
    seen.append(ev.kind)
    if ev.kind == "content_delta":
        break
sent = []
def interrupt():
    sent.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)
threading.Timer(0.2, interrupt).start()
out = {"seen": seen}
try:
    for ev in stream:  # blocked: the emulator stalls
        seen.append(ev.kind)
    out["raised"] = None
except KeyboardInterrupt:
    out["raised"] = "KeyboardInterrupt"
    out["after_s"] = time.monotonic() - sent[0]
try:
    next(stream)
except panto.CanceledError as e:
    out["then"] = ["CanceledError", e.error_type]
out["conversation"] = agent.conversation
fd = signal.set_wakeup_fd(-1)
out["wakeup_fd_restored"] = fd == (w if mode == "foreign_wakeup_fd" else -1)
stream.close()
out["next_turn"] = "".join(agent.run("Again").text())
print(json.dumps(out))
"""


@pytest.mark.parametrize("mode", ["wakeup_fd", "foreign_wakeup_fd"])
def test_ctrl_c_interrupts_a_blocked_next(mode: str) -> None:
    with Emulator(scenario={"responses": [stalled("anthropic"), HELLO]}) as emu:
        env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings-py"), PANTO_LIBRARY=_native.LIB.path)  # type: ignore[union-attr]
        argv = [sys.executable, "-c", CTRL_C_CHILD, emu.url, str(cut_after_first_delta("anthropic")), mode]
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["seen"] == ["message_start", "block_start", "content_delta"]
    assert out["raised"] == "KeyboardInterrupt"
    assert out["after_s"] < 1.0, out
    assert out["then"] == ["CanceledError", "canceled_error"]
    assert blocks_and_stop(out["conversation"]) == [user("Hi"), assistant("Hello ", "aborted")]
    assert out["wakeup_fd_restored"] is True
    assert out["next_turn"] == "Hello big world"


def test_ctrl_c_while_waiting_for_the_response_head() -> None:
    code = textwrap.dedent(
        """
        import os, signal, sys, threading, time, panto
        signal.signal(signal.SIGINT, signal.default_int_handler)  # (as CTRL_C_CHILD says)
        agent = panto.Agent(provider="openai", model="m", base_url=sys.argv[1], api_key="k")
        stream = agent.run("Hi")
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
        started = time.monotonic()
        try:
            next(stream)
        except KeyboardInterrupt:
            print("interrupted", time.monotonic() - started < 1.0, len(agent.conversation))
        """
    )
    with Emulator(scenario={"responses": [dict(HELLO, delay_ms=5000)]}) as emu:
        env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings-py"), PANTO_LIBRARY=_native.LIB.path)  # type: ignore[union-attr]
        proc = subprocess.run([sys.executable, "-c", code, emu.url], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["interrupted", "True", "0"]  # canceled before any answer: rolled back


def test_the_wakeup_fd_is_given_back_after_each_next() -> None:
    # On the main thread (where pytest runs), next() borrows the wakeup fd only while blocked.
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu) as agent:
        for _ in agent.run("Hi"):
            assert signal.set_wakeup_fd(-1) == -1


# ---- reopen and set_config ------------------------------------------------------------------


def test_reopen_after_a_400_with_set_config(provider: str) -> None:
    refused = {"status": 400, "error": {"type": "invalid_request_error", "message": "thinking is not supported"}}
    with Emulator(scenario={"responses": [refused, HELLO]}) as emu:
        with new_agent(emu, provider, thinking="high") as agent, agent.run("Hi") as stream:
            with pytest.raises(panto.InvalidRequestError) as info:
                next(stream)
            assert info.value.http_status == 400
            agent.set_config(thinking="off")
            assert stream.reopen() is stream
            assert stream.error is None and not stream.done
            assert "".join(stream.text()) == "Hello big world"
            assert stream.done
            with pytest.raises(panto.StateError) as state:  # a finished turn
                stream.reopen()
            assert state.value.code == "state" and state.value.status == _native.ERR_STATE
            assert blocks_and_stop(agent.conversation) == [user("Hi"), assistant("Hello big world")]
        first, second = (r["body"] for r in emu.requests())
        assert user_texts(first) == user_texts(second) == ["Hi"]  # the user message only once
        if provider == "anthropic":
            assert first["thinking"] == {"type": "enabled", "budget_tokens": 16384}
            assert "thinking" not in second
        else:
            assert first["reasoning_effort"] == "high"
            assert "reasoning_effort" not in second


def test_reopen_is_refused_outside_an_open_failure() -> None:
    cut = dict(HELLO, stream_error={"type": "invalid_request_error", "message": "bad", "after_events": 5})
    with Emulator(scenario={"responses": [HELLO, cut], "repeat_last": True}) as emu, new_agent(emu) as agent:
        stream = agent.run("Hi")
        with pytest.raises(panto.StateError, match="not failed"):  # not started
            stream.reopen()
        next(stream)
        with pytest.raises(panto.StateError):  # running
            stream.reopen()
        list(stream)
        stream.close()
        with pytest.raises(panto.StateError, match="closed"):
            stream.reopen()
        with agent.run("Again") as failing:  # fails in the middle of the stream
            with pytest.raises(panto.InvalidRequestError):
                list(failing)
            with pytest.raises(panto.StateError, match="invalid_request"):
                failing.reopen()


def test_reopen_while_another_stream_runs_is_busy() -> None:
    refused = {"status": 400, "error": {"type": "invalid_request_error", "message": "no"}}
    with Emulator(scenario={"responses": [refused, HELLO, HELLO]}) as emu, new_agent(emu) as agent:
        failed = agent.run("Hi")
        with pytest.raises(panto.InvalidRequestError):
            next(failed)
        other = agent.run("Other")
        next(other)  # unfinished
        with pytest.raises(panto.BusyError):
            failed.reopen()
        list(other)
        other.close()
        assert "".join(failed.reopen().text()) == "Hello big world"
        failed.close()


def test_set_config_is_refused_while_busy_and_changes_nothing() -> None:
    with Emulator(scenario={"responses": [HELLO], "repeat_last": True}) as emu:
        with new_agent(emu, thinking="low", cache={"mode": "off"}) as agent:
            stream = agent.run("Hi")
            next(stream)
            with pytest.raises(panto.BusyError) as info:
                agent.set_config(thinking="off")
            assert info.value.code == "busy"
            list(stream)
            stream.close()
            with pytest.raises(panto.ConfigError) as bad:
                agent.set_config(thinking="off", max_tokens=0)  # one bad value: nothing changes
            assert "max_tokens" in bad.value.message
            with pytest.raises(panto.ConfigError, match="thinking"):
                agent.set_config(thinking="lots")
            with pytest.raises(panto.ConfigError, match="no_such_key"):
                agent.set_config(no_such_key=1)
            with pytest.raises(panto.ConfigError, match="tools"):
                agent.set_config(tools=[])
            with pytest.raises(TypeError):
                agent.set_config(retry=3)
            with agent.run("Again") as again:
                list(again)
            bodies = [r["body"] for r in emu.requests()]
            assert [b["thinking"]["budget_tokens"] for b in bodies] == [2048, 2048]
            agent.set_config(thinking="off", system="Be brief", max_tokens=77)
            with agent.run("Third") as third:
                list(third)
            last = emu.requests()[-1]["body"]
            assert "thinking" not in last and last["system"] == "Be brief" and last["max_tokens"] == 77
            agent.set_config(system=None)  # None clears it
            with agent.run("Fourth") as fourth:
                list(fourth)
            assert "system" not in emu.requests()[-1]["body"]


def test_set_config_changes_only_the_named_retry_fields() -> None:
    with Emulator(scenario={"responses": [overloaded()], "repeat_last": True}) as emu:
        with new_agent(emu, retry=panto.RetryPolicy(max_retries=1, initial_delay_ms=1, max_delay_ms=1)) as agent:
            agent.set_config(retry=panto.RetryPolicy(max_retries=3))  # the delays stay 1 ms
            with agent.run("Hi") as stream:
                started = time.monotonic()
                events = []
                with pytest.raises(panto.OverloadedError):
                    for ev in stream:
                        events.append(ev)
            assert [e.attempt for e in events] == [1, 2, 3]
            assert all(e.delay_ms <= 1 for e in events)
            assert time.monotonic() - started < 1.0


THINKING_REQUEST = {
    "anthropic": lambda level: {} if level == "off" else {"thinking": {"type": "enabled", "budget_tokens": {
        "minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}[level]}},
    "openai": lambda level: {} if level == "off" else {"reasoning_effort": level},
}


def test_thinking_levels_change_the_request(provider: str) -> None:
    with Emulator(scenario={"responses": [HELLO], "repeat_last": True}) as emu, new_agent(emu, provider, max_tokens=4000) as agent:
        for level in panto.THINKING_LEVELS:
            agent.set_config(thinking=level)
            with agent.run("Hi") as stream:
                list(stream)
            body = emu.requests()[-1]["body"]
            wanted = THINKING_REQUEST[provider](level)
            assert {k: body[k] for k in ("thinking", "reasoning_effort") if k in body} == wanted, level
            if provider == "anthropic":
                budget = wanted.get("thinking", {}).get("budget_tokens", 0)
                # The budget comes on top of max_tokens when it would not fit under it.
                assert body["max_tokens"] == (4000 + budget if budget >= 4000 else 4000), level


def test_thinking_at_construction() -> None:
    with Emulator(scenario={"responses": [HELLO]}) as emu, new_agent(emu, "openai", thinking="medium") as agent:
        with agent.run("Hi") as stream:
            list(stream)
        assert emu.requests()[0]["body"]["reasoning_effort"] == "medium"
    with pytest.raises(panto.ConfigError, match="thinking"):
        panto.Agent(provider="anthropic", model="m", api_key="k", thinking="extreme")


# ---- thinking blocks -----------------------------------------------------------------------


def test_thinking_blocks_in_events_conversation_and_request() -> None:
    thought = {"message": {"content": [
        {"type": "thinking", "thinking": "Let me think.", "signature": "sig-123"},
        {"type": "text", "text": "Hello"}]}}
    with Emulator(scenario={"responses": [thought, HELLO]}) as emu, new_agent(emu, thinking="low") as agent:
        with agent.run("Hi") as stream:
            events = list(stream)
        assert events[1] == panto.BlockStart(0, "thinking")
        thinking_deltas = [e.text for e in events if isinstance(e, panto.ContentDelta) and e.block_kind == "thinking"]
        assert "".join(thinking_deltas) == "Let me think."
        assert panto.BlockComplete(0, "thinking", "Let me think.") in events
        assert panto.BlockComplete(1, "text", "Hello") in events
        message = agent.conversation[1]
        assert message["stop_reason"] == "end_turn"
        block = message["content"][0]
        assert (block["type"], block["text"]) == ("thinking", "Let me think.")
        assert block.get("signature", "sig-123") == "sig-123"  # shown when the library gives it
        with agent.run("More") as stream:
            list(stream)
        sent = emu.requests()[1]["body"]["messages"][1]["content"]
        assert sent[0] == {"type": "thinking", "thinking": "Let me think.", "signature": "sig-123"}


REDACTED_SSE = "".join(
    f"event: {json.loads(d)['type']}\ndata: {d}\n\n"
    for d in (
        '{"type":"message_start","message":{"id":"msg_r","type":"message","role":"assistant","model":"m",'
        '"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}',
        '{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va"}}',
        '{"type":"content_block_stop","index":0}',
        '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
        '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Done"}}',
        '{"type":"content_block_stop","index":1}',
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}',
        '{"type":"message_stop"}',
    )
)


def test_redacted_thinking() -> None:
    with Emulator(scenario={"responses": [{"body": REDACTED_SSE}, HELLO]}) as emu, new_agent(emu, thinking="low") as agent:
        with agent.run("Hi") as stream:
            events = list(stream)
        assert events[1:3] == [panto.BlockStart(0, "redacted_thinking"),
                               panto.BlockComplete(0, "redacted_thinking", "EmwKAhgBEgy3va")]
        assert not any(isinstance(e, panto.ContentDelta) and e.index == 0 for e in events)
        assert agent.conversation[1]["content"] == [
            {"type": "redacted_thinking", "text": "EmwKAhgBEgy3va"}, {"type": "text", "text": "Done"}]
        with agent.run("More") as stream:
            list(stream)
        sent = emu.requests()[1]["body"]["messages"][1]["content"]
        assert sent[0] == {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}


def test_server_block_events_and_final_message() -> None:
    use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    script = {"responses": [{"message": {"content": [
        {"type": "server", "block": use, "deltas": ['{"query": ', '"zig"}']},
        {"type": "text", "text": "Found."}]}}]}
    with Emulator(scenario=script) as emu, new_agent(emu) as agent:
        with agent.run("Search") as stream:
            events = [e for e in stream if getattr(e, "index", None) == 0]
            final = stream.final_message()
        whole = '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query": "zig"}}'
        assert events == [panto.BlockStart(0, "server_block"),
                          panto.ContentDelta(0, "server_block", '{"query": '),
                          panto.ContentDelta(0, "server_block", '"zig"}'),
                          panto.BlockComplete(0, "server_block", whole, "server_tool_use")]
        assert final.content[0] == panto.ServerBlock("server_tool_use", whole)
        assert final.text == "Found."


# ---- the Python side of the settings -------------------------------------------------------


def test_retry_policy_and_timeouts_serialize() -> None:
    assert panto.RetryPolicy().to_json() == {}
    assert panto.RetryPolicy(max_retries=0, max_delay_ms=10).to_json() == {"max_retries": 0, "max_delay_ms": 10}
    assert panto.Timeouts(idle_ms=5, total_ms=0).to_json() == {"idle_ms": 5, "total_ms": 0}
    assert panto.Timeouts(connect_ms=250).to_json() == {"connect_ms": 250}
    with pytest.raises(TypeError, match="milliseconds"):
        panto.Timeouts(idle_ms=0.5).to_json()  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        panto.Agent(provider="anthropic", model="m", api_key="k", timeouts=30)  # type: ignore[arg-type]
    with pytest.raises(panto.ConfigError, match="unknown retry key"):
        panto.Agent(provider="anthropic", model="m", api_key="k", retry={"tries": 3})
    with pytest.raises(panto.ConfigError, match="timeouts.idle_ms"):
        panto.Agent(provider="anthropic", model="m", api_key="k", timeouts=panto.Timeouts(idle_ms=-1))
    with pytest.raises(panto.ConfigError, match="timeouts.connect_ms"):
        panto.Agent(provider="anthropic", model="m", api_key="k", timeouts={"connect_ms": -1})
    # from_config takes the dataclasses too.
    panto.Agent.from_config({"provider": "anthropic", "model": "m", "api_key": "k",
                             "retry": panto.RetryPolicy(max_retries=1), "timeouts": {"idle_ms": 100}}).close()


def test_names_of_the_new_values(library: _native.Library) -> None:
    assert library.event_kind_name(_native.EVENT_PROVIDER_RETRY) == panto.ProviderRetry(1, 0, None, "").kind
    assert library.block_kind_name(_native.BLOCK_REDACTED_THINKING) == "redacted_thinking"
    assert library.block_kind_name(_native.BLOCK_THINKING) == "thinking"
    assert library.status_name(_native.ERR_STATE) == "state"
    assert panto.StateError("x").code == "state"
    assert panto.errors.error_class(_native.ERR_STATE) is panto.StateError
    assert library.stop_reason_name(8) == "aborted"


# ---- async iteration -----------------------------------------------------------------------


def test_async_iteration() -> None:
    async def main(url: str) -> List[panto.Event]:
        with panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k") as agent:
            async with agent.run("Hi") as stream:
                return [ev async for ev in stream]

    with Emulator(scenario={"responses": [HELLO]}) as emu:
        events = asyncio.run(main(emu.url))
    assert kinds(events) == ["message_start", "block_start", "content_delta", "content_delta", "content_delta",
                             "block_complete", "message_end", "message_complete"]


def test_canceling_the_task_cancels_the_turn() -> None:
    async def main(url: str) -> Dict[str, Any]:
        agent = panto.Agent(provider="anthropic", model="m", base_url=url, api_key="k", retry=NO_RETRY)
        stream = agent.run("Hi")
        seen: List[str] = []

        async def consume() -> None:
            async for ev in stream:
                seen.append(ev.kind)

        task = asyncio.create_task(consume())
        while "content_delta" not in seen:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # blocked on the stall, in the worker thread
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        canceled_in = time.monotonic() - started
        with pytest.raises(panto.CanceledError):  # the turn is canceled too
            await stream.__anext__()
        out = {"canceled_in": canceled_in, "conversation": agent.conversation}
        stream.close()
        async with agent.run("Again") as again:
            out["again"] = "".join([ev.text async for ev in again if isinstance(ev, panto.ContentDelta)])
        agent.close()
        return out

    with Emulator(scenario={"responses": [stalled("anthropic"), HELLO]}) as emu:
        out = asyncio.run(main(emu.url))
    assert out["canceled_in"] < 0.5
    assert blocks_and_stop(out["conversation"]) == [user("Hi"), assistant("Hello ", "aborted")]
    assert out["again"] == "Hello big world"


def test_cancel_and_close_race_with_iteration() -> None:
    # Another thread cancels or closes at random moments while this one iterates: never a
    # crash (a use after free would kill the child), always a clean end, never busy after.
    code = textwrap.dedent(
        """
        import random, sys, threading, time, panto
        from panto.emulator import Emulator
        text = " ".join("w%d" % i for i in range(60))
        answer = {"message": {"content": [{"type": "text", "text": text}]}, "chunk_delay_ms": 1}
        ends = {}
        with Emulator(scenario={"responses": [answer], "repeat_last": True}) as emu:
            agent = panto.Agent(provider="anthropic", model="m", base_url=emu.url, api_key="k")
            rng = random.Random(4)
            for i in range(30):
                stream = agent.run("Hi %d" % i)
                action = rng.choice([stream.cancel, stream.close])
                timer = threading.Timer(rng.uniform(0, 0.03), action)
                timer.start()
                try:
                    for _ in stream:
                        pass
                    end = "done"
                except panto.CanceledError:
                    end = "canceled"
                timer.join()
                stream.close()
                ends[end] = ends.get(end, 0) + 1
                # A turn canceled before it kept anything takes its user message back out, so the
                # conversation may be empty here; otherwise it alternates and ends on an answer.
                conversation = agent.conversation
                roles = [m["role"] for m in conversation]
                assert roles == ["user", "assistant"] * (len(roles) // 2), roles
                if conversation and end == "canceled":
                    last = conversation[-1]
                    assert last["content"] and last.get("stop_reason") in ("aborted", "end_turn"), last
            agent.close()
        print(ends.get("canceled", 0) > 0, sum(ends.values()))
        """
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bindings-py"), PANTO_LIBRARY=_native.LIB.path)  # type: ignore[union-attr]
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "30"]
