"""The package's modules import one another without a cycle.

Every import counts: at the top, inside a function, or under TYPE_CHECKING (mypy and readers
follow those too). A cycle means two modules that each need the other: what they share belongs
in a third (as the stream handle is in _handle.py, used by agent.py and stream.py).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).resolve().parents[2] / "bindings-py" / "panto"


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, modules: Set[str]) -> Set[str]:
    """The package's modules that the module at `path` imports."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            if node.level:
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:  # from . import _native: the module _native
                    found.add(sub)
                elif base in modules:  # from .stream import Stream: the module stream
                    found.add(base)
    found.discard(name)
    return found


def import_graph() -> Dict[str, Set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """One cycle through each module that is on one (depth-first search)."""
    found: List[List[str]] = []
    done: Set[str] = set()

    def visit(node: str, path: List[str]) -> None:
        if node in path:
            found.append(path[path.index(node):] + [node])
            return
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, path + [node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])
    return found


def test_the_graph_is_read() -> None:
    graph = import_graph()
    assert "panto._native" in graph["panto.errors"]
    assert "panto.stream" in graph["panto.agent"]
    assert "panto.tools" in graph["panto.agent"]  # an import inside a function counts
    assert "panto.events" in graph["panto.stream"]


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_module_of_the_package_imports_one_that_imports_it_back() -> None:
    found = cycles(import_graph())
    assert found == [], "import cycles: " + "; ".join(" -> ".join(c) for c in found)
