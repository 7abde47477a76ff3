"""Bedrock request bodies checked against botocore's own ConverseStream input shape, as
test_request_fidelity.py checks the other providers' against their SDKs': botocore's
ParamValidator (the check boto3 makes before it sends) reads the body as the operation's
parameters, the model id taken from the path; an unknown or misspelled member, a wrong type or
a missing required member is a problem, and so is a value outside its shape's enum (checked
here: the validator does not). Blobs come as base64 text
(as the REST body carries them), which the validator takes as it takes str.

And panto's SigV4 signature checked against botocore's: a request panto signed (AWS_* in the
environment) signed again by botocore's SigV4Auth with the same date gives the same
authorization header.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

import pytest

botocore_loaders = pytest.importorskip("botocore.loaders")

import botocore.auth  # noqa: E402
import botocore.awsrequest  # noqa: E402
import botocore.credentials  # noqa: E402
import botocore.model  # noqa: E402
import botocore.validate  # noqa: E402

import panto  # noqa: E402
from panto.emulator import Emulator  # noqa: E402
from fidelity_checks import check_conformance_log, check_turns  # noqa: E402
from test_request_fidelity import (  # noqa: E402
    FAILING, MEDIA_TURN, SCREENSHOT, WEATHER, _answer, _run_turns, _text)

_SERVICE = botocore.model.ServiceModel(
    botocore_loaders.create_loader().load_service_model("bedrock-runtime", "service-2"))
CONVERSE_STREAM = _SERVICE.operation_model("ConverseStream").input_shape


def validate_bedrock(path: str, body: Any) -> list[str]:
    """What is wrong with a ConverseStream request (path and JSON body) as botocore sees it."""
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    if "modelId" in body:
        return ["modelId is in the path, not the body"]
    params = dict(body, modelId=unquote(path.split("/")[2]))
    report = botocore.validate.ParamValidator().validate(params, CONVERSE_STREAM)
    problems = [report.generate_report()] if report.has_errors() else []
    return problems + list(_outside_enums(params, CONVERSE_STREAM, "body"))


def _outside_enums(value: Any, shape: Any, where: str) -> Any:
    """The strings whose shape is an enum and that are not one of its values (botocore's
    validator does not check enums; the service does)."""
    if shape.type_name == "structure" and isinstance(value, dict):
        for key, member in value.items():
            if key in shape.members:
                yield from _outside_enums(member, shape.members[key], f"{where}.{key}")
    elif shape.type_name == "list" and isinstance(value, list):
        for i, member in enumerate(value):
            yield from _outside_enums(member, shape.member, f"{where}[{i}]")
    elif shape.type_name == "string" and shape.enum and value not in shape.enum:
        yield f"{where}: {value!r} is not one of {', '.join(shape.enum)}"


MODEL = "anthropic.claude-test-v1:0"
B = {"provider": "bedrock", "model": MODEL}
PATH = "/model/anthropic.claude-test-v1%3A0/converse-stream"
SIGNED_CALLS = _answer({"type": "thinking", "thinking": "Look first.", "signature": "c2lnLXQ="},
                       {"type": "tool_use", "name": "screenshot", "input": {}},
                       {"type": "tool_use", "name": "get_weather", "input": {"city": "Oslo"}},
                       {"type": "tool_use", "name": "lookup", "input": {}})
SCENARIOS = [
    ("bedrock_media_thinking_tool_round",
     dict(B, thinking={"budget_tokens": 2048}, system="Be brief.", max_tokens=4096),
     [MEDIA_TURN, "And now?"],
     {"responses": [SIGNED_CALLS, _answer({"type": "thinking", "thinking": "Done.",
                                           "signature": "c2lnLTI="}, _text("Seen.")),
                    _answer(_text("Still."))]},
     [SCREENSHOT, WEATHER, FAILING],
     ['"image"', '"document"', '"format": "pdf"', '"signature": "c2lnLXQ="', '"toolResult"',
      '"status": "error"', "Sunny in Oslo", '"budget_tokens": 2048', '"system"']),
    ("bedrock_request_params",
     dict(B, temperature=0.5, top_p=0.9, top_k=40, stop=["END"],
          tool_choice={"name": "get_weather"}),
     ["Weather?"], {"responses": [_answer(_text("Cold."))]}, [WEATHER],
     ['"topP": 0.9', '"stopSequences": ["END"]', '"tool": {"name": "get_weather"}',
      '"top_k": 40', '"toolSpec"']),
]


@pytest.fixture(scope="module")
def emulator():
    with Emulator() as emu:
        yield emu


@pytest.mark.parametrize("name,config,turns,scenario,tools,covers", SCENARIOS,
                         ids=[s[0] for s in SCENARIOS])
def test_representative_turns(emulator: Emulator, name: str, config: dict[str, Any],
                              turns: list[Any], scenario: dict[str, Any], tools: list[Any],
                              covers: list[str]) -> None:
    requests = _run_turns(emulator, config, turns, scenario, tools)
    assert all(r["path"] == PATH for r in requests), [r["path"] for r in requests]
    check_turns(name, requests, turns, covers, lambda r: validate_bedrock(r["path"], r["body"]))


def test_conformance_requests() -> None:
    """The Bedrock bodies of the last conformance run (tests/conformance/run.py), if any."""
    check_conformance_log(
        "bedrock", lambda e: str(e.get("path")).endswith("/converse-stream") and e.get("body") is not None,
        lambda e: validate_bedrock(str(e["path"]), e["body"]))


def test_the_validator_catches_mistakes() -> None:
    good = {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}
    assert validate_bedrock(PATH, good) == []
    assert validate_bedrock(PATH, {"messages": [{"role": "user", "content": [{"txt": "Hi"}]}]})
    assert validate_bedrock(PATH, dict(good, inferenceConfig={"max_tokens": 5}))
    assert validate_bedrock(PATH, {"messages": [{"role": "model", "content": [{"text": "Hi"}]}]})
    assert validate_bedrock(PATH, dict(good, contents=[]))


def test_panto_signs_as_botocore_signs(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """SigV4 over the request as sent: botocore, given the same credentials, date, headers and
    body, makes the same authorization (the model id's `%3A` signed as `%253A`)."""
    for name, value in {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
                        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                        "AWS_SESSION_TOKEN": "session-token", "AWS_REGION": "eu-west-3"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    emulator.load({"responses": [_answer(_text("Hi."))]})
    with panto.Agent(provider="bedrock", model=MODEL, base_url=emulator.url) as agent:
        agent.run("Hello").final_message()
    (request,) = emulator.requests()
    headers = request["headers"]
    raw = json.dumps(request["body"], ensure_ascii=False, separators=(",", ":"))
    again = botocore.awsrequest.AWSRequest(
        method="POST", url=f"{emulator.url}{request['path']}", data=raw.encode(),
        headers={"content-type": headers["content-type"], "x-amz-date": headers["x-amz-date"]})
    credentials = botocore.credentials.Credentials(
        "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token")
    signer = botocore.auth.SigV4Auth(credentials, "bedrock", "eu-west-3")
    # add_auth with panto's date instead of now (add_auth reads the clock).
    again.context["timestamp"] = headers["x-amz-date"]
    signer._modify_request_before_signing(again)
    signature = signer.signature(signer.string_to_sign(again, signer.canonical_request(again)),
                                 again)
    assert headers["authorization"].endswith(f", Signature={signature}")
    assert headers["authorization"].startswith(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/" + headers["x-amz-date"][:8]
        + "/eu-west-3/bedrock/aws4_request, ")
