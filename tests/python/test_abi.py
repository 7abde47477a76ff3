"""The ctypes mirror (bindings-py/panto/_native.py) against include/panto.h.

The mirror is generated (scripts/gen_abi.py; `make test-python` checks it is current) from the
library's Zig definitions, which `zig build test` checks against the header. These checks need
no built libpanto: they compare ctypes' layouts with the Zig compiler's, compile a small C
program against the header with `zig cc`, and load fake libraries. Run with
PYTHONPATH=bindings-py.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from panto import _abi, _native, errors, events

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "bindings-py" / "panto"


def abi_constants(prefix: str) -> Dict[str, int]:
    """The generated constants (bindings-py/panto/_abi.py, from the library's Zig definitions)
    whose names start with `prefix`."""
    return {n: v for n, v in vars(_abi).items() if n.startswith(prefix) and isinstance(v, int)}


def test_ctypes_lays_out_every_struct_as_the_library_does() -> None:
    # LAYOUT is what the Zig compiler gave the library's structs (abi.zig, itself checked
    # against include/panto.h by `zig build test`); ctypes computes its own from _fields_.
    assert {"PantoEvent", "PantoError", "PantoString", "PantoUsage", "PantoConnections"} <= set(_abi.LAYOUT)
    for struct, (size, fields) in _abi.LAYOUT.items():
        cls = getattr(_native, struct)
        assert ctypes.sizeof(cls) == size, struct
        assert [f for f, _ in cls._fields_] == list(fields), struct
        for name, (offset, fsize) in fields.items():
            descriptor = getattr(cls, name)
            assert (descriptor.offset, descriptor.size) == (offset, fsize), f"{struct}.{name}"
        if "size" in fields:  # a growable struct: its *_INIT sets the size
            assert cls().size == size, struct


def _c_prototype_checks() -> str:
    """A C program that assigns every function the library exports, typed as the library's Zig
    declares it, to a pointer of that type: the compiler refuses one the header declares
    otherwise (or not at all)."""
    dump = json.loads(
        subprocess.run(
            [sys.executable, "-m", "ziglang", "build", "abi-dump"], cwd=ROOT, check=True, capture_output=True, text=True, timeout=900
        ).stdout
    )
    lines = ['#include "panto.h"', "int main(void) {"]
    for i, f in enumerate(dump["functions"]):
        params = ", ".join(f["params"]) or "void"
        lines.append(f"    {f['returns']} (*f{i})({params}) = {f['name']}; (void)f{i};")
    lines.append("    return 0;\n}")
    assert len(dump["functions"]) == len(_abi.SIGNATURES) >= 20
    return "\n".join(lines)


def test_the_exported_functions_have_the_header_prototypes(tmp_path: Path) -> None:
    src = tmp_path / "prototypes.c"
    src.write_text(_c_prototype_checks())
    proc = subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-std=c99", "-Werror", "-Wall", "-Wincompatible-pointer-types",
         "-I", str(ROOT / "include"), "-c", "-o", str(tmp_path / "prototypes.o"), str(src)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr


def test_every_error_code_has_its_exception_class() -> None:
    codes = abi_constants("ERR_")
    assert len(codes) >= 20 and codes["ERR_CANCELED"] == -20
    for name, value in codes.items():
        cls = errors.error_class(value)
        assert cls is not errors.Error and cls.STATUS == value, name


EVENT_CLASSES = {
    "EVENT_MESSAGE_START": events.MessageStart,
    "EVENT_BLOCK_START": events.BlockStart,
    "EVENT_CONTENT_DELTA": events.ContentDelta,
    "EVENT_BLOCK_COMPLETE": events.BlockComplete,
    "EVENT_MESSAGE_COMPLETE": events.MessageComplete,
    "EVENT_MESSAGE_END": events.MessageEnd,
    "EVENT_TOOL_DETAILS": events.ToolDetails,
    "EVENT_TOOL_CALL_START": events.ToolCallStart,
    "EVENT_TOOL_RESULT": events.ToolResult,
    "EVENT_PROVIDER_RETRY": events.ProviderRetry,
    "EVENT_COMPACTION_START": events.CompactionStart,
    "EVENT_COMPACTION_END": events.CompactionEnd,
    "EVENT_TOOL_PROGRESS": events.ToolProgress,
    "EVENT_APPROVAL_REQUEST": events.ApprovalRequest,
    "EVENT_USER_MESSAGE": events.UserMessage,
}


def test_event_kinds_name_their_classes() -> None:
    # Every event kind of the header has its class, whose `kind` is the lower-case name.
    kinds = set(abi_constants("EVENT_"))
    assert kinds == set(EVENT_CLASSES)
    for name, cls in EVENT_CLASSES.items():
        assert cls.__dataclass_fields__["kind"].default == name[len("EVENT_"):].lower()
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
