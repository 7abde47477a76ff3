"""What type checkers conclude about panto: tests/python/typed_usage.py (ordinary uses, with
the types they must have and the mistakes they must catch) passes `mypy --strict` and pyright's
strict mode; the Literal types name what the library gives."""

from __future__ import annotations

import ast
import json
import os
import pathlib
import subprocess
import sys
import typing
from typing import Any

import panto

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINDING = ROOT / "bindings-py"
USAGE = pathlib.Path(__file__).with_name("typed_usage.py")
PYRIGHT = pathlib.Path(sys.executable).with_name("pyright")


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MYPYPATH=str(BINDING), PYTHONPATH=str(BINDING))
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload, no-any-return]


def mypy_strict(*paths: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(ROOT / "build" / "mypy-cache"),
                 *map(str, paths)])


def test_mypy_strict_on_typed_usage() -> None:
    result = mypy_strict(USAGE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pyright_strict_on_typed_usage(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "pyrightconfig.json"
    config.write_text(json.dumps({
        "typeCheckingMode": "strict",
        "extraPaths": [str(BINDING)],
        "pythonVersion": "3.9",
        "reportUnnecessaryTypeIgnoreComment": "error",
    }))
    result = _run([str(PYRIGHT), "--project", str(config), str(USAGE)])
    assert result.returncode == 0, result.stdout + result.stderr


def _type_checking_literals(path: pathlib.Path) -> dict[str, tuple[str, ...]]:
    """The `Name = Literal[...]` assignments of a module's `if TYPE_CHECKING:` block."""
    found: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript)
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "Literal"):
            values = node.value.slice
            elts = values.elts if isinstance(values, ast.Tuple) else [values]
            found[node.targets[0].id] = tuple(e.value for e in elts)  # type: ignore[attr-defined]
    return found


def test_the_literal_types_are_the_librarys_names(library: Any) -> None:
    """The block kinds and stop reasons a checker is told of are every name the library
    gives (but a block's "none", which no event carries), and the run-time forms say the same."""
    from panto import _abi, events

    stop_reasons = {library.stop_reason_name(v) for k, v in vars(_abi).items() if k.startswith("STOP_")}
    block_kinds = {library.block_kind_name(v) for k, v in vars(_abi).items() if k.startswith("BLOCK_")} - {"none"}
    checked = _type_checking_literals(BINDING / "panto" / "events.py")
    assert set(checked["StopReason"]) == stop_reasons
    assert set(checked["BlockKind"]) == block_kinds
    assert set(checked) == set(events._LITERALS)
    for name, values in checked.items():
        assert typing.get_args(getattr(events, name)) == values, name


def conforms(value: Any, tp: Any) -> bool:
    """Whether a JSON value is of the type `tp` (TypedDicts with exactly their keys, Literal,
    Union, List, Dict and plain classes: what panto.conversation uses)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return True
    if origin is typing.Union:
        return any(conforms(value, a) for a in args)
    if origin is typing.Literal:
        return value in args and isinstance(value, str)
    if origin is list:
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        return (isinstance(value, dict) and tp.__required_keys__ <= value.keys() <= hints.keys()
                and all(conforms(v, hints[k]) for k, v in value.items()))
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, tp)


def test_the_conversation_types_fit_the_documented_format() -> None:
    """docs/conversations.md's example document, and a conversation of a tool turn, are
    valid for the TypedDicts of panto.conversation, and a wrong stop reason or an unknown key
    is not."""
    import re

    from panto.conversation import MessageDict
    from panto.emulator import Emulator

    messages = typing.List[MessageDict]
    doc = (ROOT / "docs" / "conversations.md").read_text()
    example = json.loads(re.search(r"## The format, version 1\n\n```json\n(.*?)```", doc, re.S).group(1))  # type: ignore[union-attr]
    assert len(example["messages"]) == 3 and conforms(example["messages"], messages)

    scenario = json.loads((ROOT / "examples" / "tool_use-scenario.json").read_text())

    @panto.tool
    def get_weather(city: str) -> str:
        """Current weather."""
        return f"Sunny, 21 degrees in {city}"

    with Emulator(scenario=scenario) as emu:
        with panto.Agent(provider="anthropic", model="m", api_key="k", base_url=emu.url, tools=[get_weather]) as agent:
            agent.complete("Weather in Paris?")
            conversation = agent.conversation
    assert [m["role"] for m in conversation] == ["user", "assistant", "user", "assistant"]
    assert conforms(conversation, messages), conversation
    answer = dict(conversation[-1])
    assert not conforms([dict(answer, stop_reason="stop")], messages)
    assert not conforms([dict(answer, extra=1)], messages)


# A fence of README.md or docs/*.md whose previous line is this comment is not type-checked
# (a deliberately partial snippet; keep them rare).
SKIP_MARK = "<!-- typecheck: skip -->"


def python_snippets(page: pathlib.Path) -> list[tuple[int, str]]:
    """The ```python blocks of a page that are type-checked: (line of the fence, code)."""
    import re

    text = page.read_text()
    found = []
    for m in re.finditer(r"^```python[^\n]*\n(.*?)^```", text, re.M | re.S):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if before.strip() != SKIP_MARK:
            found.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    return found


def test_doc_snippets_and_examples_pass_mypy_strict(tmp_path: pathlib.Path) -> None:
    """Every Python snippet of the READMEs and docs/*.md, and every Python example, is what
    `mypy --strict` accepts: the documentation's code is code a user's checker accepts."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), BINDING / "README.md",
             BINDING / "panto" / "emulator" / "README.md"]
    files = []
    for page in pages:
        for line, code in python_snippets(page):
            stem = page.relative_to(ROOT).with_suffix("").as_posix().replace("/", "_").replace("-", "_")
            path = tmp_path / f"{stem}_line{line}.py"  # names the snippet
            path.write_text(code)
            files.append(path)
    assert len(files) >= 10, files  # the extraction finds them
    result = mypy_strict(*files, *sorted((ROOT / "examples" / "python").glob("*.py")))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_snippet_can_be_marked_to_skip(tmp_path: pathlib.Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"```python\nx = 1\n```\n\n{SKIP_MARK}\n```python\nx: int = 'partial'\n```\n")
    assert python_snippets(page) == [(1, "x = 1\n")]


def test_pyright_verifytypes_completeness() -> None:
    """`pyright --verifytypes panto`: at least 98 % of the public symbols have a known type
    (86.7 % before issue 34; 100 % then)."""
    result = _run([str(PYRIGHT), "--verifytypes", "panto", "--ignoreexternal", "--outputjson"])
    report = json.loads(result.stdout)
    score = report["typeCompleteness"]["completenessScore"]
    problems = [f'{d.get("file", "")}:{d.get("range", {}).get("start", {}).get("line", 0) + 1}: {d["message"]}'
                for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert score >= 0.98, f"type completeness {score:.1%}:\n" + "\n".join(problems)
