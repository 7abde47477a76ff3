"""The checker loop that the request fidelity tests of the providers checked against one
SDK type per member (test_request_fidelity_bedrock.py, _gemini.py) share: a scenario's
requests, and the bodies of the last conformance run."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

from test_request_fidelity import CONFORMANCE_LOG

Problems = Callable[[dict[str, Any]], list[str]]


def check_turns(name: str, requests: list[dict[str, Any]], turns: list[Any], covers: list[str],
                problems_of: Problems) -> None:
    """Every turn made a request, the requests hold each of `covers`, and `problems_of` finds
    nothing wrong with any request (an entry of the emulator's request log)."""
    assert len(requests) >= len(turns), requests
    dump = json.dumps([r["body"] for r in requests], ensure_ascii=False)
    for text in covers:
        assert text in dump, f"{name}: the requests do not hold {text}"
    for i, r in enumerate(requests):
        problems = problems_of(r)
        assert not problems, f"{name}: request {i + 1}: " + "\n".join(problems)


def check_conformance_log(provider: str, matches: Callable[[dict[str, Any]], bool],
                          problems_of: Problems) -> None:
    """The last conformance run's requests that `matches` picks, checked by `problems_of`;
    skipped when there was no run, or no case of this provider in it."""
    if not CONFORMANCE_LOG.is_file():
        pytest.skip("no conformance run yet")
    entries = [json.loads(line) for line in CONFORMANCE_LOG.read_text("utf-8").split("\n")
               if line.strip()]
    chosen = [e for e in entries if matches(e)]
    if not chosen:
        pytest.skip(f"the conformance run had no {provider} case")
    problems = [f"{e.get('case')} [{e.get('lang')}]: {p}" for e in chosen for p in problems_of(e)]
    assert not problems, "\n".join(problems[:40])
