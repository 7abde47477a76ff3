"""The ctypes mirror (bindings-py/panto/_native.py) against include/panto.h.

These checks need no built libpanto: they parse the header, compile a small C program against
it with `zig cc`, and load fake libraries. Run with PYTHONPATH=bindings-py.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from panto import _native, errors, events

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "include" / "panto.h"
HEADER_TEXT = HEADER.read_text()
PACKAGE = ROOT / "bindings-py" / "panto"


def header_enums() -> Dict[str, int]:
    return {m[1]: int(m[2], 0) for m in re.finditer(r"^\s*(PANTO_\w+)\s*=\s*(-?(?:0x)?[0-9a-fA-F]+)", HEADER_TEXT, re.M)}


def header_functions() -> Dict[str, Tuple[str, List[str]]]:
    """name -> (return type, [argument types]) of every prototype in the header."""
    found = {}
    for m in re.finditer(r"^([A-Za-z_][\w ]*?\**)\s*(panto_\w+)\(([^)]*)\);", HEADER_TEXT, re.M):
        ret, name, args = m[1].strip(), m[2], m[3].strip()
        arg_types = [] if args == "void" else [re.sub(r"\s*\b\w+$", "", a.strip()) for a in args.split(",")]
        found[name] = (ret, arg_types)
    return found


CTYPES_OF_C = {
    "void": None,
    "int": ctypes.c_int,
    "size_t": ctypes.c_size_t,
    "size_t *": ctypes.POINTER(ctypes.c_size_t),
    "uint32_t": ctypes.c_uint32,
    "const char *": ctypes.c_char_p,
    "PantoAgent *": _native.AgentPtr,
    "const PantoAgent *": _native.AgentPtr,
    "PantoAgent **": ctypes.POINTER(_native.AgentPtr),
    "PantoStream *": _native.StreamPtr,
    "const PantoStream *": _native.StreamPtr,
    "PantoStream **": ctypes.POINTER(_native.StreamPtr),
    "PantoEvent *": ctypes.POINTER(_native.PantoEvent),
    "PantoError *": ctypes.POINTER(_native.PantoError),
    "PantoConnections *": ctypes.POINTER(_native.PantoConnections),
    "PantoString *": ctypes.POINTER(_native.PantoString),
}


def test_every_function_of_the_header_is_declared_with_its_types() -> None:
    functions = header_functions()
    assert len(functions) >= 14, functions  # the regex did find the prototypes
    assert set(functions) == set(_native.SIGNATURES)
    for name, (ret, args) in functions.items():
        restype, argtypes = _native.SIGNATURES[name]
        assert restype is CTYPES_OF_C[ret], name
        assert list(argtypes) == [CTYPES_OF_C[a] for a in args], name


def test_enum_values_match_the_header() -> None:
    enums = header_enums()
    abi = re.search(r"#define PANTO_ABI_VERSION (\d+)", HEADER_TEXT)
    assert abi and int(abi[1]) == _native.ABI_VERSION
    checked = 0
    for name, value in enums.items():
        if name.endswith("FORCE_INT"):
            continue
        short = name[len("PANTO_"):]
        if hasattr(_native, short):
            assert getattr(_native, short) == value, name
            checked += 1
    assert checked >= 28
    for name in ("ERR_STATE", "EVENT_PROVIDER_RETRY", "BLOCK_REDACTED_THINKING"):  # the ABI 2 additions of issue 4
        assert getattr(_native, name) == enums["PANTO_" + name], name
    # Every error code of the header has its own exception class.
    for name, value in enums.items():
        if name.startswith("PANTO_ERR_"):
            cls = errors.error_class(value)
            assert cls is not errors.Error and cls.STATUS == value, name


def _layout_program() -> str:
    fields = {
        "PantoString": [f for f, _ in _native.PantoString._fields_],
        "PantoUsage": [f for f, _ in _native.PantoUsage._fields_],
        "PantoEvent": [f for f, _ in _native.PantoEvent._fields_],
        "PantoError": [f for f, _ in _native.PantoError._fields_],
        "PantoConnections": [f for f, _ in _native.PantoConnections._fields_],
    }
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "panto.h"', "int main(void) {", 'printf("{");']
    for struct, names in fields.items():
        lines.append(f'printf("\\"{struct}\\": [%zu", sizeof({struct}));')
        for f in names:
            lines.append(f'printf(", [\\"{f}\\", %zu, %zu]", offsetof({struct}, {f}), sizeof((({struct} *)0)->{f}));')
        lines.append('printf("], ");')
    lines.append('printf("\\"end\\": 0}\\n"); return 0; }')
    return "\n".join(lines)


def test_struct_layouts_match_the_c_compiler(tmp_path: Path) -> None:
    src = tmp_path / "layout.c"
    src.write_text(_layout_program())
    exe = tmp_path / "layout"
    subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-I", str(ROOT / "include"), "-o", str(exe), str(src)],
        check=True,
        timeout=600,
    )
    c_layout = json.loads(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout)
    for struct in ("PantoString", "PantoUsage", "PantoEvent", "PantoError", "PantoConnections"):
        cls = getattr(_native, struct)
        size, *fields = c_layout[struct]
        assert ctypes.sizeof(cls) == size, struct
        for name, offset, fsize in fields:
            descriptor = getattr(cls, name)
            assert (descriptor.offset, descriptor.size) == (offset, fsize), f"{struct}.{name}"
    # The *_INIT macros: size first.
    assert _native.PantoEvent().size == c_layout["PantoEvent"][0]
    assert _native.PantoError().size == c_layout["PantoError"][0]
    assert _native.PantoConnections().size == c_layout["PantoConnections"][0]


EVENT_CLASSES = {
    "PANTO_EVENT_MESSAGE_START": events.MessageStart,
    "PANTO_EVENT_BLOCK_START": events.BlockStart,
    "PANTO_EVENT_CONTENT_DELTA": events.ContentDelta,
    "PANTO_EVENT_BLOCK_COMPLETE": events.BlockComplete,
    "PANTO_EVENT_MESSAGE_COMPLETE": events.MessageComplete,
    "PANTO_EVENT_MESSAGE_END": events.MessageEnd,
    "PANTO_EVENT_TOOL_DETAILS": events.ToolDetails,
    "PANTO_EVENT_TOOL_CALL_START": events.ToolCallStart,
    "PANTO_EVENT_TOOL_RESULT": events.ToolResult,
    "PANTO_EVENT_PROVIDER_RETRY": events.ProviderRetry,
}


def test_event_kinds_name_their_classes() -> None:
    # Every event kind of the header has its class, whose `kind` is the lower-case name.
    kinds = {n for n in header_enums() if n.startswith("PANTO_EVENT_") and not n.endswith("FORCE_INT")}
    assert kinds == set(EVENT_CLASSES)
    for name, cls in EVENT_CLASSES.items():
        assert cls.__dataclass_fields__["kind"].default == name[len("PANTO_EVENT_"):].lower()
    assert set(EVENT_CLASSES.values()) == set(events.Event.__args__)  # type: ignore[attr-defined]
    ev = events.ContentDelta(0, "text", "hi")
    assert ev.kind == "content_delta"
    retry = events.ProviderRetry(attempt=1, delay_ms=50, http_status=529, reason="overloaded_error: Overloaded")
    assert retry.kind == "provider_retry"
    with pytest.raises(Exception):
        ev.text = "changed"  # type: ignore[misc]


# ---- loading -------------------------------------------------------------------------------


def _package_copy(tmp_path: Path) -> Path:
    """A copy of the package without any packaged library (panto/_lib)."""
    dest = tmp_path / "site"
    shutil.copytree(PACKAGE, dest / "panto", ignore=shutil.ignore_patterns("_lib", "__pycache__"))
    return dest


def _run_python(code: str, pythonpath: Path, library: str) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=str(pythonpath), PANTO_LIBRARY=library)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_missing_library_imports_and_fails_on_first_use(tmp_path: Path) -> None:
    site = _package_copy(tmp_path)
    nowhere = str(tmp_path / "nowhere" / "libpanto.so")
    code = """
import sys, panto
assert "panto.emulator" not in sys.modules
try:
    panto.Agent(provider="anthropic", model="m")
except panto.LibraryNotFound as e:
    assert isinstance(e, panto.Error) and isinstance(e, ImportError)
    assert e.code == "library_not_found"
    print(e)
    print("LOOKED", e.looked_in)
else:
    raise SystemExit("no LibraryNotFound")
try:
    panto.library_version()
except panto.LibraryNotFound:
    print("VERSION-RAISES")
"""
    proc = _run_python(code, site, nowhere)
    assert proc.returncode == 0, proc.stderr
    assert nowhere in proc.stdout
    assert str(site / "panto" / "_lib" / "libpanto.so") in proc.stdout
    assert "PANTO_LIBRARY" in proc.stdout
    assert "VERSION-RAISES" in proc.stdout


def _fake_library(tmp_path: Path, body: str) -> Path:
    src = tmp_path / "fake.c"
    src.write_text("#include <stdint.h>\n" + body)
    lib = tmp_path / "libfake.so"
    subprocess.run([sys.executable, "-m", "ziglang", "cc", "-shared", "-o", str(lib), str(src)], check=True, timeout=600)
    return lib


IMPORT = """
try:
    import panto
except ImportError as e:
    print(e)
    raise SystemExit(3)
"""


def test_abi_mismatch_fails_the_import(tmp_path: Path) -> None:
    lib = _fake_library(tmp_path, "uint32_t panto_abi_version(void) { return 999; }\n")
    proc = _run_python(IMPORT, _package_copy(tmp_path), str(lib))
    assert proc.returncode == 3, proc.stderr
    assert "ABI version 999" in proc.stdout and f"ABI version {_native.ABI_VERSION}" in proc.stdout
    assert str(lib) in proc.stdout


def test_a_library_that_is_not_panto_fails_the_import(tmp_path: Path) -> None:
    lib = _fake_library(tmp_path, "int not_panto(void) { return 1; }\n")
    proc = _run_python(IMPORT, _package_copy(tmp_path), str(lib))
    assert proc.returncode == 3, proc.stderr
    assert "not a panto library" in proc.stdout


def test_a_file_that_does_not_load_fails_the_import(tmp_path: Path) -> None:
    bogus = tmp_path / "libpanto.so"
    bogus.write_text("not an ELF file")
    proc = _run_python(IMPORT, _package_copy(tmp_path), str(bogus))
    assert proc.returncode == 3, proc.stderr
    assert "cannot load the shared library" in proc.stdout
