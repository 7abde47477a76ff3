#!/usr/bin/env python3
"""Writes bindings-py/panto/_abi.py, the ctypes mirror of include/panto.h, from the C ABI as
libpanto-c's Zig definitions give it (`zig build abi-dump`, libpanto-c/src/abi_dump.zig).

    scripts/gen_abi.py           # regenerate the file
    scripts/gen_abi.py --check   # exit 1, with a diff, when the checked-in file is not current

abi.zig's own test checks the Zig definitions against the header, so the mirror follows the
header without restating it by hand.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from typing import Any, Dict, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bindings-py", "panto", "_abi.py")

# The prefix of an enum's values in the header (PANTO_EVENT_CONTENT_DELTA), as abi.zig's layout
# test spells them; an enum not listed here gets its name in upper snake case (ToolFormat:
# TOOL_FORMAT_). Status is apart: PANTO_OK, PANTO_ERR_CANCELED.
ENUM_PREFIXES = {"EventKind": "EVENT_", "BlockKind": "BLOCK_", "StopReason": "STOP_", "PartKind": "PART_", "WaitEvents": "WAIT_", "McpState": "MCP_", "McpTransport": "MCP_"}

SCALARS = {
    "void": "None",
    "int": "c_int",
    "int32_t": "c_int32",
    "uint32_t": "c_uint32",
    "int64_t": "c_int64",
    "uint64_t": "c_uint64",
    "size_t": "c_size_t",
    "double": "c_double",
    "const char *": "c_char_p",
    "char *": "c_char_p",
    "const uint8_t *": "c_void_p",
    "const void *": "c_void_p",
}


def abi_dump() -> Dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "ziglang", "build", "abi-dump"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        sys.exit(f"gen_abi: `zig build abi-dump` failed:\n{proc.stderr}")
    dump: Dict[str, Any] = json.loads(proc.stdout)
    return dump


def upper_snake(name: str) -> str:
    return "".join("_" + c if c.isupper() and i else c for i, c in enumerate(name)).upper()


def enum_lines(enum: Dict[str, Any]) -> List[str]:
    name = enum["name"]
    lines = [f"# {name}."]
    for v in enum["values"]:
        if name == "Status":
            prefix = "ERR_" if v["value"] < 0 else ""
        else:
            prefix = ENUM_PREFIXES.get(name, upper_snake(name) + "_")
        const = prefix + v["name"].upper()
        if not const.endswith("FORCE_INT"):
            lines.append(f"{const} = {v['value']}")
    return lines


def handle_pointer(c_name: str) -> str:
    """PantoAgent -> AgentPtr."""
    return c_name[len("Panto"):] + "Ptr"


def in_use_order(structs: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The structs in the dump's order, except that a struct comes after the structs its
    fields use (a PantoEvent points to PantoPartInfo): Python defines a class before use."""
    names = {s["name"] for s in structs}
    done: List[str] = []
    by_name = {s["name"]: s for s in structs}

    def visit(name: str) -> None:
        if name in done:
            return
        for f in by_name[name]["fields"]:
            used = f["type"].replace("const ", "").rstrip("* ").strip()
            if used in names and used != name:
                visit(used)
        done.append(name)

    for s in structs:
        visit(s["name"])
    return [by_name[n] for n in done]


def generate(dump: Dict[str, Any]) -> str:
    dump = dict(dump, structs=in_use_order(dump["structs"]))
    structs = {s["name"]: s for s in dump["structs"]}
    handles: List[str] = []

    def ctype(c: str) -> str:
        c = c.strip()
        if c in SCALARS:
            return SCALARS[c]
        if c.endswith("*"):
            inner = c[:-1].strip()
            if inner.startswith("const "):
                inner = inner[len("const "):]
            if inner.startswith("Panto") and inner not in structs and not inner.endswith("*"):  # an opaque handle
                if inner not in handles:
                    handles.append(inner)
                return handle_pointer(inner)
            return f"POINTER({ctype(inner)})"
        if c in structs:
            return c
        sys.exit(f"gen_abi: no ctypes mapping for the C type {c!r}: add it to SCALARS")

    body: List[str] = []
    for s in dump["structs"]:
        body += ["", "", f"class {s['name']}(Structure):", "    _fields_ = ["]
        body += [f"        (\"{f['name']}\", {ctype(f['type'])})," for f in s["fields"]]
        body.append("    ]")
        if s["fields"] and s["fields"][0]["name"] == "size":
            init = "PANTO_" + upper_snake(s["name"][len("Panto"):]) + "_INIT"
            body += [
                "",
                f"    def __init__(self) -> None:  # {init}",
                "        super().__init__()",
                f"        self.size: int = ctypes.sizeof({s['name']})",
            ]
    # Mapped before the handles are written: mapping finds them.
    signatures = [f"    \"{f['name']}\": ({ctype(f['returns'])}, [{', '.join(ctype(p) for p in f['params'])}])," for f in dump["functions"]]
    layout = [
        f"    \"{s['name']}\": ({s['size']}, {{{', '.join(json.dumps(f['name']) + ': (' + str(f['offset']) + ', ' + str(f['size']) + ')' for f in s['fields'])}}}),"
        for s in dump["structs"]
    ]
    head = [
        '"""The C ABI of include/panto.h for ctypes: constants, structs, handles, signatures.',
        "",
        "Generated by scripts/gen_abi.py from `zig build abi-dump`; do not edit (`make test` fails",
        "when it is not current). The hand-written part of the ctypes layer is _native.py.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import ctypes",
        "from ctypes import POINTER, Structure, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t, c_uint32, c_uint64, c_void_p",
        "",
        "TYPE_CHECKING = False",
        "if TYPE_CHECKING:",
        "    from typing import Any, Dict, List, Tuple",
        "",
        "# The PANTO_ABI_VERSION of the library these definitions come from.",
        f"ABI_VERSION = {dump['abi_version']}",
    ]
    for enum in dump["enums"]:
        head += [""] + enum_lines(enum)
    tail = ["", "", "# Opaque handles: distinct pointer types, so ctypes refuses a stream where an agent is due."]
    for h in handles:
        tail += [f"class _{h}(Structure):", "    pass", "", "", f"{handle_pointer(h)} = POINTER(_{h})", "", ""]
    tail += ["# Every function of the header: name -> (restype, argtypes).", "SIGNATURES: Dict[str, Tuple[Any, List[Any]]] = {"]
    tail += signatures + ["}", ""]
    tail += ["# Each struct's size and its fields' (offset, size), as the library was built.", "LAYOUT: Dict[str, Tuple[int, Dict[str, Tuple[int, int]]]] = {"]
    tail += layout + ["}", ""]
    return "\n".join(head + body + tail)


def main(argv: List[str]) -> int:
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        print(__doc__, file=sys.stderr)
        return 2
    text = generate(abi_dump())
    try:
        with open(OUT, encoding="utf-8") as f:
            current = f.read()
    except FileNotFoundError:
        current = ""
    if check:
        if current == text:
            return 0
        diff = difflib.unified_diff(current.splitlines(True), text.splitlines(True), "bindings-py/panto/_abi.py (checked in)", "(generated now)")
        sys.stdout.writelines(diff)
        print("\ngen_abi: bindings-py/panto/_abi.py is not current: run scripts/gen_abi.py", file=sys.stderr)
        return 1
    if current != text:
        with open(OUT, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
