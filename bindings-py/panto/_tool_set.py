"""The core's tool rules, for tools declared in Python: a PantoTools set (panto_tools_*) checks
a spec (its name, its schema's shape, its keys) and exports specs in a provider's format, with
the capability filter. tools.py turns type hints into specs; every rule about a spec is here,
in the library.
"""

from __future__ import annotations

import ctypes
import json

from . import _native
from .errors import Error, LibraryNotFound, error_class, from_native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any, Dict, List, Optional


def check_spec(spec: Mapping[str, Any]) -> None:
    """Raises panto.ConfigError, with the library's reason, when it refuses the spec."""
    export([spec], "panto")


def export(specs: Iterable[Mapping[str, Any]], format: str, capabilities: Optional[Iterable[str]] = None) -> List[Dict[str, Any]]:
    """The specs as a JSON list in `format` ("anthropic", "openai" or "panto"); with
    `capabilities` (the capabilities granted), only the tools that require none beyond them.
    Raises panto.ConfigError when the library refuses a spec (a bad name, a name given twice)."""
    lib = _native.LIB
    if lib is None:
        raise LibraryNotFound(_native.LOOKED_IN)
    tool_format = _native.tool_format(format)
    caps = None if capabilities is None else json.dumps(list(capabilities)).encode("utf-8")
    out = _native.ToolsPtr()
    rc = lib.tools_new(ctypes.byref(out))
    if rc < 0:
        raise error_class(rc)(lib.status_name(rc), status=rc, code=lib.status_name(rc))
    try:
        for spec in specs:
            raw = json.dumps(spec, allow_nan=False).encode("utf-8")
            rc = lib.tools_add(out, _native.string(raw))
            if rc < 0:
                raise _error(lib, out, rc)
        exported = _native.PantoString()
        rc = lib.tools_export(out, tool_format, _native.PantoString() if caps is None else _native.string(caps), ctypes.byref(exported))
        if rc < 0:
            raise _error(lib, out, rc)
        result: List[Dict[str, Any]] = json.loads(_native.copy_string(exported))
        return result
    finally:
        lib.tools_free(out)


def _error(lib: _native.Library, tools: Any, rc: int) -> Error:
    detail = _native.PantoError()
    lib.tools_error(tools, ctypes.byref(detail))
    return from_native(lib, detail, rc)
