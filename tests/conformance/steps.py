"""The step objects of a case's `turns` (README.md, "Steps"): checking them, the per-cell
session folder ($SESSION_DIR) and the export lines' raw text. Python 3.11 standard library
only."""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any


def is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


# Each step's key, and what its value must be.
STEPS: dict[str, tuple[str, Any]] = {
    "set_config": ("an object", lambda v: isinstance(v, dict)),
    "export": ("true", lambda v: v is True),
    "reimport": ("true", lambda v: v is True),
    "import": ("any JSON value", lambda v: True),
    "import_text": ("a string", lambda v: isinstance(v, str)),
    "truncate": ("a non-negative integer", is_count),
    "drop_last": ("a non-negative integer", is_count),
    "rollback_turn": ("true", lambda v: v is True),
    "compact": ('true, or {"instructions": TEXT}', lambda v: v is True or (
        isinstance(v, dict) and set(v) == {"instructions"} and isinstance(v["instructions"], str))),
    "session_info": ("true", lambda v: v is True),
    "reopen_agent": ("true", lambda v: v is True),
    "second_agent": ("true", lambda v: v is True),
    "fork": ('{"message_count": K, "id": ID}', lambda v: isinstance(v, dict)
             and set(v) == {"message_count", "id"} and is_count(v["message_count"])
             and isinstance(v["id"], str)),
    "list_sessions": ("true", lambda v: v is True),
    "append_to_session": ("a string", lambda v: isinstance(v, str)),
    "count_tokens": ("a string (the input) or null", lambda v: v is None or isinstance(v, str)),
    "list_models": ("true", lambda v: v is True),
    "spent": ("true", lambda v: v is True),
    "pending_round": ("true", lambda v: v is True),
    "resume_turn": ("true", lambda v: v is True),
    "mcp_status": ("true", lambda v: v is True),
}


def is_step(turn: Any) -> bool:
    """Whether a turn is a step object (not a `{"$repeat": ...}` text, nor a turn object with
    an "input")."""
    return isinstance(turn, dict) and "$repeat" not in turn and "input" not in turn


def check_step(turn: dict[str, Any], where: str) -> None:
    """Raises ValueError unless the step holds exactly one known key with a fitting value."""
    if len(turn) != 1 or next(iter(turn)) not in STEPS:
        raise ValueError(f"{where}: a step holds exactly one of {', '.join(STEPS)}")
    key, value = next(iter(turn.items()))
    what, fits = STEPS[key]
    if not fits(value):
        raise ValueError(f"{where}: {key} must be {what}")


SESSION_DIR = "$SESSION_DIR"


def uses_session_dir(data: Any) -> bool:
    return SESSION_DIR in json.dumps(data)


def with_session_dir(value: Any, folder: str) -> Any:
    """value with "$SESSION_DIR" in every string replaced by folder."""
    if isinstance(value, str):
        return value.replace(SESSION_DIR, folder)
    if isinstance(value, dict):
        return {k: with_session_dir(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [with_session_dir(v, folder) for v in value]
    return value


class SessionDir:
    """A fresh empty folder for one cell's sessions, removed on exit."""

    def __enter__(self) -> str:
        self.path = tempfile.mkdtemp(prefix="panto-sessions-")
        return self.path

    def __exit__(self, *exc: Any) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def cell_case_file(driver_path: Path, lang: str, folder: str, mcp_port: str = "") -> Path:
    """A copy of the drivers' case file for one cell, with $SESSION_DIR (and $MCP_PORT, the
    cell's MCP HTTP server's port) resolved."""
    text = json.dumps(with_session_dir(json.loads(driver_path.read_text(encoding="utf-8")), folder),
                      indent=2, ensure_ascii=False)
    path = driver_path.with_name(f"{driver_path.stem}.{lang}.json")
    path.write_text(text.replace(MCP_PORT, mcp_port) + "\n", encoding="utf-8")
    return path


MCP_PORT = "$MCP_PORT"


def after_kill_case_file(case_file: Path, lang: str) -> Path:
    """The case a second driver process runs after the first killed itself: the cell's case
    with its `after_kill` object's `turns` and `approvals` in place of its own."""
    case = json.loads(case_file.read_text(encoding="utf-8"))
    after = case.pop("after_kill")
    case["turns"] = after["turns"]
    case["approvals"] = after.get("approvals", {})
    path = case_file.with_name(f"{case_file.stem}.{lang}.after_kill.json")
    path.write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


class McpHttpServer:
    """The case's `mcp_http_server` (a command run from the repository that serves MCP over
    Streamable HTTP and writes its port as its first stdout line), one per cell, ended after
    it. Entered: the port ("" without a server)."""

    def __init__(self, argv: list[str] | None, repo: Path) -> None:
        self.argv, self.repo, self.proc = argv, repo, None

    def __enter__(self) -> str:
        if not self.argv:
            return ""
        self.proc = subprocess.Popen(self.argv, cwd=self.repo, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        assert self.proc.stdout is not None
        port = self.proc.stdout.readline().decode().strip()
        if not port.isdigit():
            self.__exit__()
            raise RuntimeError(f"mcp_http_server {' '.join(self.argv)} did not say its port")
        return port

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.proc = None


def parse_exports(values: list[Any]) -> list[str]:
    """Turns every export line `{"event": "export", "text": RAW}` of a transcript into
    `{"event": "export", "conversation": <RAW parsed>}` in place; returns the RAW texts in
    order (a RAW that is not JSON becomes the string "NOT JSON: RAW")."""
    raws = []
    for i, v in enumerate(values):
        if isinstance(v, dict) and v.get("event") == "export" and isinstance(v.get("text"), str):
            raw = v["text"]
            raws.append(raw)
            try:
                parsed: Any = json.loads(raw)
            except ValueError:
                parsed = "NOT JSON: " + raw
            values[i] = {"event": "export", "conversation": parsed}
    return raws


def export_differences(reference: tuple[str, list[str]], lang: str, raws: list[str]) -> list[str]:
    """Where a cell's export texts differ, byte for byte, from the reference cell's
    (language, texts) of the same case."""
    ref_lang, ref = reference
    errors = []
    if len(raws) != len(ref):
        errors.append(f"export: {len(raws)} export(s), the {ref_lang} driver printed {len(ref)}")
    for i, (want, got) in enumerate(zip(ref, raws)):
        if want == got:
            continue
        at = next((k for k, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
        errors.append(f"export {i + 1}: the text differs from the {ref_lang} driver's at byte "
                      f"{len(want[:at].encode())}: {want[at:at + 60]!r} vs {got[at:at + 60]!r} "
                      f"({len(want)} vs {len(got)} characters)")
    return errors
