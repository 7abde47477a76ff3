"""The conformance runner's own test: a cell passes only when the driver printed exactly the
expected transcript. A fake driver prints a crafted transcript and run.py's `run_cell` judges
it, as it judges every cell (reading the driver's stdout, cutting it into lines, comparing).

    .venv/bin/python -m pytest -q tests/python/test_conformance_runner.py
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("conformance_run", ROOT / "tests" / "conformance" / "run.py")
assert _spec is not None and _spec.loader is not None
runner: Any = importlib.util.module_from_spec(_spec)
sys.modules["conformance_run"] = runner  # its dataclasses look their module up
_spec.loader.exec_module(runner)

# A driver that prints the file it is given (then ignores the CASE_JSON and BASE_URL the runner
# adds), byte for byte.
PRINT_FILE = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"

USAGE = {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0}
EXPECTED: List[Dict[str, Any]] = [
    {"event": "message_start", "id": "msg_1", "model": "m"},
    {"event": "block_start", "index": 0, "kind": "text"},
    {"event": "content_delta", "index": 0, "kind": "text", "text": "Hello "},
    {"event": "content_delta", "index": 0, "kind": "text", "text": "world"},
    {"event": "block_complete", "index": 0, "kind": "text", "text": "Hello world"},
    {"event": "message_end", "stop_reason": "end_turn", "provider_stop_reason": "end_turn", "usage": USAGE},
    {"event": "message_complete", "stop_reason": "end_turn", "provider_stop_reason": "end_turn", "usage": USAGE},
    {"event": "done"},
    {"event": "done"},
]


class FakeEmulator:
    """What run_cell asks of the emulator: a port, a scenario to load, the requests it got."""

    port = 9

    def load(self, scenario: Any) -> None:
        pass

    def requests(self) -> List[Dict[str, Any]]:
        return []


def judge(tmp_path: Path, expected: List[Any], printed: str) -> Any:
    """run_cell's verdict on a driver that printed `printed` for a case expecting `expected`."""
    out = tmp_path / "stdout.txt"
    out.write_bytes(printed.encode("utf-8"))
    case_json = tmp_path / "case.json"
    data = {"config": {}, "turns": ["Hi"], "script": {"responses": []}}
    case_json.write_text(json.dumps(data))
    case = runner.Case("fake", case_json, data, expected, scenario=data["script"], driver_path=case_json)
    driver = runner.Driver("fake", [sys.executable, "-c", PRINT_FILE, str(out)])
    return runner.run_cell(case, driver, FakeEmulator(), verbose=False)


def lines(values: List[Any]) -> str:
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values)


def test_the_expected_transcript_passes(tmp_path: Path) -> None:
    result = judge(tmp_path, EXPECTED, lines(EXPECTED))
    assert result.ok, result.report
    # Key order and spacing are not the transcript's.
    reordered = "".join(json.dumps(dict(reversed(list(v.items()))), indent=None, separators=(" ,", " : ")) + "\n" for v in EXPECTED)
    result = judge(tmp_path, EXPECTED, reordered)
    assert result.ok, result.report


@pytest.mark.parametrize("where", [0, 3, len(EXPECTED) - 1])
def test_a_missing_line_fails_the_cell(tmp_path: Path, where: int) -> None:
    got = EXPECTED[:where] + EXPECTED[where + 1 :]
    result = judge(tmp_path, EXPECTED, lines(got))
    assert not result.ok
    assert "-" + runner.canon(EXPECTED[where]) in result.report


def test_a_transcript_cut_short_fails_the_cell(tmp_path: Path) -> None:
    result = judge(tmp_path, EXPECTED, lines(EXPECTED[:4]))
    assert not result.ok
    assert not judge(tmp_path, EXPECTED, "").ok


@pytest.mark.parametrize("where", [0, 3, len(EXPECTED)])
def test_an_extra_line_fails_the_cell(tmp_path: Path, where: int) -> None:
    extra = {"event": "content_delta", "index": 0, "kind": "text", "text": "again"}
    got = EXPECTED[:where] + [extra] + EXPECTED[where:]
    result = judge(tmp_path, EXPECTED, lines(got))
    assert not result.ok
    assert "+" + runner.canon(extra) in result.report


@pytest.mark.parametrize(
    "change",
    [
        {"text": "Hello"},  # a changed value
        {"index": 1},
        {"index": 0.5},
        {"index": True},  # true is not 1
        {"text": None},
        {"extra": "field"},  # a key more
    ],
)
def test_a_changed_field_fails_the_cell(tmp_path: Path, change: Dict[str, Any]) -> None:
    got = [dict(v) for v in EXPECTED]
    got[2].update(change)
    result = judge(tmp_path, EXPECTED, lines(got))
    assert not result.ok
    assert "+" + runner.canon(got[2]) in result.report


def test_a_missing_field_fails_the_cell(tmp_path: Path) -> None:
    got = [dict(v) for v in EXPECTED]
    del got[5]["usage"]
    assert not judge(tmp_path, EXPECTED, lines(got)).ok
    got = [dict(v) for v in EXPECTED]
    got[5]["usage"] = dict(USAGE, reasoning_tokens=1)  # inside a nested object
    assert not judge(tmp_path, EXPECTED, lines(got)).ok


def test_a_line_that_is_not_json_fails_the_cell(tmp_path: Path) -> None:
    printed = lines(EXPECTED).replace('"done"}', '"done"', 1)
    result = judge(tmp_path, EXPECTED, printed)
    assert not result.ok
    assert any(line.startswith("+NOT JSON: ") for line in result.report)


def test_lines_are_cut_at_line_feeds_only(tmp_path: Path) -> None:
    # U+2028, U+2029 and U+0085, which str.splitlines() cuts at, are text inside a JSON
    # string: a driver may print them as they are.
    text = "a\u2028b\u2029c\u0085d"
    expected = [dict(v) for v in EXPECTED]
    expected[3]["text"] = text
    expected[4]["text"] = "Hello " + text
    printed = lines(expected)
    assert "\u2028" in printed  # as it is, not escaped
    result = judge(tmp_path, expected, printed)
    assert result.ok, result.report


def test_a_driver_that_fails_fails_the_cell_even_with_the_right_transcript(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    out.write_text(lines(EXPECTED))
    case_json = tmp_path / "case.json"
    data = {"config": {}, "turns": ["Hi"], "script": {"responses": []}}
    case_json.write_text(json.dumps(data))
    case = runner.Case("fake", case_json, data, EXPECTED, scenario={}, driver_path=case_json)
    driver = runner.Driver("fake", [sys.executable, "-c", PRINT_FILE + "; sys.exit(3)", str(out)])
    result = runner.run_cell(case, driver, FakeEmulator(), verbose=False)
    assert not result.ok
    assert "driver exited with status 3" in result.report


def test_matchers_match_only_what_they_say(tmp_path: Path) -> None:
    expected = [dict(v) for v in EXPECTED]
    expected[4] = dict(expected[4], text={"$prefix": "Hello"})
    assert judge(tmp_path, expected, lines(EXPECTED)).ok
    got = [dict(v) for v in EXPECTED]
    got[4]["text"] = "Goodbye"
    assert not judge(tmp_path, expected, lines(got)).ok


# ---- steps (README.md "Steps") ---------------------------------------------------------------


def judge_exports(tmp_path: Path, case: Any, lang: str, raws: List[str]) -> Any:
    """run_cell's verdict on a driver of `lang` that printed one export line per raw text, for
    `case` (which remembers the first cell's texts)."""
    out = tmp_path / f"stdout-{lang}.txt"
    out.write_bytes(lines([{"event": "export", "text": r} for r in raws]).encode("utf-8"))
    driver = runner.Driver(lang, [sys.executable, "-c", PRINT_FILE, str(out)])
    return runner.run_cell(case, driver, FakeEmulator(), verbose=False)


def test_export_lines_are_compared_parsed_and_byte_for_byte_across_languages(tmp_path: Path) -> None:
    case_json = tmp_path / "case.json"
    data = {"config": {}, "turns": [{"export": True}], "script": {"responses": []}}
    case_json.write_text(json.dumps(data))
    document = {"version": 1, "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]}
    expected = [{"event": "export", "conversation": document}]
    case = runner.Case("fake", case_json, data, expected, scenario={}, driver_path=case_json)
    raw = json.dumps(document, separators=(",", ":"))
    assert judge_exports(tmp_path, case, "c", [raw]).ok  # the first cell: the reference
    assert judge_exports(tmp_path, case, "python", [raw]).ok
    # The same document in other bytes: equal as JSON, but not the C driver's text.
    result = judge_exports(tmp_path, case, "go", [json.dumps(document)])
    assert not result.ok
    assert any("differs from the c driver's at byte 11" in line for line in result.report), result.report
    # Another document fails as any line would.
    other = json.dumps({"version": 1, "messages": []}, separators=(",", ":"))
    assert not judge_exports(tmp_path, case, "lua", [other]).ok


@pytest.mark.parametrize("step", [
    {"truncate": -1}, {"truncate": True}, {"export": False}, {"fork": {"message_count": 1}},
    {"import_text": 3}, {"export": True, "reimport": True}, {"bogus": True}, {},
])
def test_malformed_steps_are_refused(step: Dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        runner.resolve_turns(["Hi", step])


def test_session_dir_is_a_fresh_folder_per_cell(tmp_path: Path) -> None:
    driver_path = tmp_path / "fake.json"
    driver_path.write_text(json.dumps({"config": {"session": {"dir": "$SESSION_DIR", "id": "s"}},
                                       "turns": [{"append_to_session": "x $SESSION_DIR"}]}))
    with runner.steps.SessionDir() as a, runner.steps.SessionDir() as b:
        assert a != b and Path(a).is_dir() and not list(Path(a).iterdir())
        cell = json.loads(runner.steps.cell_case_file(driver_path, "python", a).read_text())
        assert cell["config"]["session"]["dir"] == a
        assert cell["turns"] == [{"append_to_session": f"x {a}"}]
    assert not Path(a).exists() and not Path(b).exists()
