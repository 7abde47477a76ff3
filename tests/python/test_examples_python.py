"""The Python-only programs of examples/python/ (issue 34's "six programs a new user writes"):
a streaming REPL, typed tools with Pydantic, structured output into a Pydantic model, a
FastAPI SSE endpoint, a session resumed and switched to another provider; images in and out
is examples/python/image.py, run in every language by test_docs.py. Each runs as a user runs
it, against the emulator playing examples/<scenario>-scenario.json, and the test checks what
it printed and what reached the provider."""
import concurrent.futures
import http.client
import json
import pathlib
import socket
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple

from panto.emulator import Emulator

from test_docs import _env, _scenario

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _run(name: str, scenario: str, *, stdin: str = "", args: Tuple[str, ...] = ()) -> Tuple[str, List[Dict[str, Any]]]:
    with Emulator(scenario=_scenario(scenario), base_dir=EXAMPLES) as emu:
        result = subprocess.run([sys.executable, str(EXAMPLES / "python" / f"{name}.py"), *args], input=stdin,
                                cwd=ROOT, env=_env(PANTO_BASE_URL=emu.url, PANTO_API_KEY="demo-key"),
                                capture_output=True, text=True, timeout=60)
        requests = emu.requests()
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout, requests


def _roles(request: Dict[str, Any]) -> List[str]:
    return [m["role"] for m in request["body"]["messages"]]


def test_repl_streams_each_answer_and_undo_takes_a_turn_back() -> None:
    out, requests = _run("repl", "repl", stdin="Hi, I am Ada.\nWhat is my name?\n/undo\nWhat is my name?\n")
    assert out == ("Hello Ada, nice to meet you.\nYour name is Ada.\n[python] 2 messages left\n"
                   "I do not know your name.\n[python] bye after 4 messages\n"), out
    assert [_roles(r) for r in requests] == [["user"], ["user", "assistant", "user"], ["user", "assistant", "user"]]
    assert requests[1]["body"]["messages"][2]["content"][0]["text"] == "What is my name?"
    assert requests[0]["body"]["system"][0]["text"] == "You are a concise assistant."


def test_typed_tools_check_input_before_the_handler_and_return_models() -> None:
    out, requests = _run("typed_tools", "typed_tools")
    lines = out.splitlines()
    assert lines[0] == "Booking it.", out
    assert lines[2] == ('[python] <- error: Invalid input for tool book_flight: missing required property '
                        '"request.passengers[1].name"'), out
    assert lines[4] == '[python] <- {"reference": "CDGLIS42", "seats": 2, "price_eur": 360.0}', out
    assert lines[6] == "[python] <- recorded 360.00 EUR (flights CDG-LIS); total 360.00 EUR", out
    assert lines[7] == "Booked CDGLIS42 for two, 360 EUR, recorded in the ledger.", out
    assert len(requests) == 4
    tools = {t["name"]: t for t in requests[0]["body"]["tools"]}
    assert sorted(tools) == ["book_flight", "ledger"]
    request_schema = json.dumps(tools["book_flight"]["input_schema"])
    assert '"economy"' in request_schema and '"business"' in request_schema  # the Literal
    refused = requests[1]["body"]["messages"][-1]["content"][0]
    assert refused["type"] == "tool_result" and refused["is_error"] is True, refused


def test_structured_output_returns_a_validated_pydantic_model() -> None:
    out, requests = _run("structured_output", "structured_output_pydantic")
    assert out == ("[python] Lisbon, Portugal: 545,796 people\n"
                   "[python]   Belem Tower (monument, 1519)\n"
                   "[python]   Gulbenkian Museum (museum, year unknown)\n"
                   "[python] not a City: 'Atlantis is a legend; it has no capital.'\n"
                   "[python] conversation: 4 messages\n"), out
    schema = json.dumps(requests[0]["body"]["output_config"])
    assert "landmarks" in schema and "monument" in schema, schema


def test_resume_in_a_later_run_and_switch_to_openai() -> None:
    out, requests = _run("resume_switch", "resume_switch")
    assert out.splitlines() == [
        "[python] anthropic: Noted: Lisbon in May.",
        "[python] resumed trip with 2 messages",
        "[python] openai: You are going to Lisbon, in May.",
        "[python] answers by: anthropic, openai",
        "[python] trip: 4 messages, first: 'I am planning a trip to Lisbon in May. Remember that.'",
    ], out
    first, second = requests
    assert first["path"] == "/v1/messages" and first["headers"]["x-api-key"] == "demo-key"
    assert second["path"] == "/v1/chat/completions" and second["headers"]["authorization"] == "Bearer demo-key"
    assert [m["role"] for m in second["body"]["messages"]] == ["user", "assistant", "user"]
    assert "Lisbon in May" in json.dumps(second["body"]["messages"][1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _post(port: int, body: Dict[str, Any]) -> Tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", "/chat", json.dumps(body), {"content-type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def _sse_events(text: str) -> List[Tuple[str, Dict[str, Any]]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_fastapi_sse_endpoint_serves_concurrent_clients() -> None:
    scenario = _scenario("fastapi_sse")
    expected = scenario["responses"][0]["message"]["content"][0]["text"]
    port = _free_port()
    with Emulator(scenario=scenario) as emu:
        server = subprocess.Popen([sys.executable, str(EXAMPLES / "python" / "fastapi_sse.py"), "--port", str(port)],
                                  cwd=ROOT, env=_env(PANTO_BASE_URL=emu.url, PANTO_API_KEY="demo-key"),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(300):  # until it listens (uvicorn imports take a moment)
                if server.poll() is not None:
                    raise AssertionError(server.communicate()[1])
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            with concurrent.futures.ThreadPoolExecutor(20) as pool:
                answers = list(pool.map(lambda i: _post(port, {"message": f"Hello {i}"}), range(20)))
            for status, body in answers:
                assert status == 200, body
                events = _sse_events(body)
                assert "".join(data["text"] for kind, data in events if kind == "text") == expected, body
                assert events[-1] == ("done", {"stop_reason": "end_turn", "output_tokens": 9}), body
            assert sorted(r["body"]["messages"][0]["content"][0]["text"] for r in emu.requests()) == \
                sorted(f"Hello {i}" for i in range(20))
            status, body = _post(port, {"message": ""})
            assert status == 422 and "string_too_short" in body, body  # Pydantic refused it
        finally:
            server.terminate()
            server.wait(timeout=10)
