"""What a provider renderer needs to know about the call it answers."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, NamedTuple


@dataclass(frozen=True)
class Call:
    """One provider call that reached the script.

    `number` counts the scripted responses served since the scenario was loaded (1, 2, ...);
    default message and tool ids are built from it, so they are unique within a scenario and
    the same every time the scenario runs.
    """

    number: int
    request: dict[str, Any]  # the parsed request body
    request_id: str


class Rejection(NamedTuple):
    """A request refused before it reached the script, as the real API would refuse it."""

    status: int
    type: str
    message: str
    code: str | None = None  # OpenAI's error.code
    param: str | None = None  # OpenAI's error.param


def bearer_key(headers: Mapping[str, str]) -> str:
    """The key of an `Authorization: Bearer KEY` header (lower-case names), or ""."""
    auth = headers.get("authorization", "")
    return auth[7:].strip() if auth.startswith("Bearer ") else ""
