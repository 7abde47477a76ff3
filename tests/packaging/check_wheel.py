"""Checks a built panto wheel as PyPI and pip will see it: its file name's tag is
py3-none-manylinux2014_<arch>, it carries the real library for that CPU, `auditwheel show`
finds it consistent with manylinux2014 (glibc 2.17) or older, and the library asks for no
symbol without a version (which auditwheel does not see: an unversioned `statx` passes it, and
fails to load on glibc < 2.28).

Usage: check_wheel.py WHEEL ARCH   (ARCH: x86_64 or aarch64; exit 1 with the reason otherwise)
Also imported by tests/python/test_packaging.py.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from elftools.elf.elffile import ELFFile  # pyelftools, auditwheel's dependency

# ELF e_machine of each CPU the wheels are built for.
ELF_MACHINE = {"x86_64": 62, "aarch64": 183}


def auditwheel_tag(wheel: Path) -> str:
    """The most compatible platform tag `auditwheel show` reports, e.g. manylinux_2_17_x86_64."""
    auditwheel = Path(sys.executable).with_name("auditwheel")
    proc = subprocess.run([str(auditwheel), "show", str(wheel)], capture_output=True, text=True, timeout=120)
    out = " ".join((proc.stdout + proc.stderr).split())
    m = re.search(r'consistent with the following platform tag: "([^"]+)"', out)
    if proc.returncode != 0 or m is None:
        raise AssertionError(f"auditwheel show {wheel.name} (exit {proc.returncode}): {out}")
    return m.group(1)


def unversioned_imports(lib: bytes) -> list[str]:
    """The undefined, non-weak dynamic symbols the library binds without a symbol version."""
    elf = ELFFile(io.BytesIO(lib))
    dynsym, versions = elf.get_section_by_name(".dynsym"), elf.get_section_by_name(".gnu.version")
    if dynsym is None or versions is None:
        return ["(no .dynsym or .gnu.version section)"]
    return [sym.name for i, sym in enumerate(dynsym.iter_symbols())
            if i > 0 and sym["st_shndx"] == "SHN_UNDEF" and sym["st_info"]["bind"] != "STB_WEAK"
            and versions.get_symbol(i)["ndx"] in ("VER_NDX_LOCAL", "VER_NDX_GLOBAL", 0, 1)]


def check(wheel: Path, arch: str) -> str:
    """Raises AssertionError naming what is wrong; returns auditwheel's tag."""
    expected = f"py3-none-manylinux2014_{arch}.whl"
    if not wheel.name.endswith(expected):
        raise AssertionError(f"{wheel.name}: the tag is not {expected}")
    with zipfile.ZipFile(wheel) as zf:
        meta = "".join(zf.read(n).decode() for n in zf.namelist() if n.endswith(".dist-info/WHEEL"))
        lib = zf.read("panto/_lib/libpanto.so")
    if f"Tag: py3-none-manylinux2014_{arch}" not in meta or "Root-Is-Purelib: false" not in meta:
        raise AssertionError(f"{wheel.name}: WHEEL metadata says:\n{meta}")
    if lib[:4] != b"\x7fELF" or int.from_bytes(lib[18:20], "little") != ELF_MACHINE[arch]:
        raise AssertionError(f"{wheel.name}: panto/_lib/libpanto.so is not an {arch} ELF library")
    unversioned = unversioned_imports(lib)
    if unversioned:
        raise AssertionError(f"{wheel.name}: libpanto.so imports without a glibc version: {unversioned}")
    tag = auditwheel_tag(wheel)
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", tag)
    if m is None or (int(m.group(1)), int(m.group(2))) > (2, 17) or m.group(3) != arch:
        raise AssertionError(f"{wheel.name}: auditwheel says {tag}, not manylinux_2_17_{arch} or older")
    return tag


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ELF_MACHINE:
        sys.exit(f"usage: {sys.argv[0]} WHEEL {{{','.join(ELF_MACHINE)}}}")
    try:
        print(f"check_wheel: {Path(sys.argv[1]).name}: auditwheel: {check(Path(sys.argv[1]), sys.argv[2])}")
    except (AssertionError, OSError, KeyError, zipfile.BadZipFile) as e:
        sys.exit(f"check_wheel: {e}")
