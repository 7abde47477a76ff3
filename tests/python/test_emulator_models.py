"""The emulator's model lists (emulator/models.py): Anthropic's and OpenAI's `GET /v1/models`
(told apart by `anthropic-version`), Gemini's `GET /v1beta/models` and Bedrock's
`GET /foundation-models` answer outside the scenario; Anthropic's and Gemini's pages hold at
most two models whatever is asked, with the cursor of the next; no key is refused as the
provider refuses it."""

from __future__ import annotations

import http.client
import json
from typing import Any, Iterator

import pytest

from panto.emulator import Emulator

ANTHROPIC = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def get(emu: Emulator, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    try:
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator(scenario={"responses": []}) as e:
        yield e


def test_anthropic_pages_of_two_after_the_last_id(emu: Emulator) -> None:
    status, first = get(emu, "/v1/models?limit=1000", ANTHROPIC)
    assert status == 200 and first["has_more"] is True
    assert [m["id"] for m in first["data"]] == ["claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"]
    status, second = get(emu, f"/v1/models?limit=1000&after_id={first['last_id']}", ANTHROPIC)
    assert status == 200 and second["has_more"] is False
    assert [m["id"] for m in second["data"]] == ["claude-emulator-1"]


def test_openai_gemini_and_bedrock(emu: Emulator) -> None:
    status, openai = get(emu, "/v1/models", {"authorization": "Bearer k"})
    assert status == 200 and [m["id"] for m in openai["data"]] == ["gpt-4o", "gpt-4o-mini", "emulator-model-1"]
    status, gemini = get(emu, "/v1beta/models?pageSize=1000", {"x-goog-api-key": "k"})
    assert status == 200 and gemini["nextPageToken"] == "page-2" and len(gemini["models"]) == 2
    status, rest = get(emu, "/v1beta/models?pageSize=1000&pageToken=page-2", {"x-goog-api-key": "k"})
    assert status == 200 and "nextPageToken" not in rest and rest["models"][0]["name"] == "models/gemini-emulator-1"
    status, bedrock = get(emu, "/foundation-models", {"authorization": "Bearer k"})
    assert status == 200 and bedrock["modelSummaries"][1]["modelId"] == "amazon.nova-pro-v1:0"


def test_no_key_is_refused_as_the_provider_refuses_it(emu: Emulator) -> None:
    status, body = get(emu, "/v1/models", {"anthropic-version": "2023-06-01"})
    assert status == 401 and body["error"]["type"] == "authentication_error"
    status, _ = get(emu, "/v1beta/models", {})
    assert status == 403
