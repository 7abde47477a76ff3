"""Google-style docstrings read for a tool's description and its parameters' descriptions."""

from __future__ import annotations

import inspect
import re
from typing import Dict, List, Optional, Tuple

_SECTIONS = {
    "args", "arguments", "parameters", "params", "attributes", "keyword args", "keyword arguments",
    "kwargs", "returns", "return", "yields", "yield", "raises", "exceptions", "example",
    "examples", "note", "notes", "see also", "warning", "warnings", "todo", "references",
}
_PARAM_SECTIONS = {"args", "arguments", "parameters", "params", "attributes", "keyword args", "keyword arguments", "kwargs"}
_SECTION_RE = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_ENTRY_RE = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


def parse_docstring(doc: Optional[str]) -> Tuple[str, Dict[str, str]]:
    """(description, {parameter: description}) of a Google-style docstring: the description is
    the text before the first section; parameters come from `Args:` (or `Arguments:`,
    `Parameters:`, `Attributes:`) entries `name: text` or `name (type): text`, with indented
    continuation lines."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    description: List[str] = []
    params: Dict[str, str] = {}
    section: Optional[str] = None
    entry_indent: Optional[int] = None
    current: Optional[str] = None
    for line in lines:
        m = _SECTION_RE.match(line)
        if m and m[1].strip().lower() in _SECTIONS:
            section = m[1].strip().lower()
            entry_indent = None
            current = None
            continue
        if section is None:
            description.append(line)
            continue
        if section not in _PARAM_SECTIONS or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if entry_indent is None:
            entry_indent = indent
        if indent <= entry_indent:
            e = _ENTRY_RE.match(line.strip())
            if e:
                current = e[1]
                params[current] = e[3].strip()
            else:
                current = None
        elif current is not None:
            params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(description).strip(), params
