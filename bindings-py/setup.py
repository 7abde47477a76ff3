"""Build hook of the panto wheel: builds libpanto.so with the pinned Zig and packs it.

`pip install ./bindings-py` (or `pip wheel ./bindings-py`) runs `python -m ziglang build
-Doptimize=ReleaseSafe --prefix <tmp>` in the repository root (the folder above this one; the
build environment gets ziglang==0.16.0 from [build-system] requires), then copies the real
libpanto.so (not its symlinks) into the wheel's panto/_lib/, where panto/_native.py finds it.
The wheel is tagged py3-none-<platform>: it holds a native library, loaded with ctypes, that
does not depend on the Python ABI.

Knobs (environment): PANTO_OPTIMIZE (default ReleaseSafe); PANTO_STRIP=0 keeps the debug
info (by default the library is built without it, `-Dstrip=true`; PANTO_STRIP=0 keeps it).
Everything else is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 ships bdist_wheel itself; older ones use the wheel package's.
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover
    try:
        from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]
    except ImportError:  # no wheel package: an sdist or a plain build needs none
        bdist_wheel = None  # type: ignore[assignment,misc]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LIB_NAMES = {"linux": "libpanto.so", "darwin": "libpanto.dylib", "win32": "panto.dll"}


def _lib_name() -> str:
    for prefix, name in LIB_NAMES.items():
        if sys.platform.startswith(prefix):
            return name
    return "libpanto.so"


def _source_tree() -> Path:
    if not (ROOT / "build.zig").is_file() or not (ROOT / "libpanto").is_dir():
        raise SystemExit(
            f"panto: cannot build the native library: the panto source tree (build.zig, "
            f"libpanto/) is not at {ROOT}.\n"
            "The Python package is built from a checkout of the repository: "
            "`pip install path/to/panto/bindings-py` (an sdist alone does not carry the Zig "
            "sources). Or build the library yourself (`zig build`) and point PANTO_LIBRARY at "
            "zig-out/lib/libpanto.so."
        )
    return ROOT


def build_library(dest_dir: Path) -> Path:
    """Builds the library in a temporary prefix and copies the real file to dest_dir."""
    root = _source_tree()
    optimize = os.environ.get("PANTO_OPTIMIZE", "ReleaseSafe")
    name = _lib_name()
    with tempfile.TemporaryDirectory(prefix="panto-build-") as prefix:
        # Only the C library: no Lua module (and so no Lua headers needed), no debug info
        # unless PANTO_STRIP=0.
        strip = "false" if os.environ.get("PANTO_STRIP", "1") == "0" else "true"
        cmd = [sys.executable, "-m", "ziglang", "build", f"-Doptimize={optimize}", "-Dlua=false",
               f"-Dstrip={strip}", "--prefix", prefix]
        print(f"panto: building the library: {' '.join(cmd)} (in {root})", flush=True)
        try:
            subprocess.run(cmd, cwd=root, check=True)
        except FileNotFoundError as e:  # pragma: no cover
            raise SystemExit(f"panto: cannot run {sys.executable}: {e}") from e
        except subprocess.CalledProcessError as e:
            raise SystemExit(
                f"panto: `zig build` failed (exit {e.returncode}); see its output above. The "
                "build needs ziglang==0.16.0 (pip installs it into the build environment)."
            ) from e
        built = Path(prefix, "bin" if sys.platform == "win32" else "lib", name)
        if not built.exists():
            raise SystemExit(f"panto: `zig build` did not produce {built}")
        real = built.resolve()  # libpanto.so -> libpanto.so.0 -> libpanto.so.0.1.0
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = dest_dir / name
        if dest.is_symlink() or dest.exists():
            dest.unlink()
        shutil.copyfile(real, dest)
        os.chmod(dest, 0o755)
    return dest


class BuildPyWithLibrary(build_py):
    """build_py, then the native library into <build_lib>/panto/_lib/."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            # `pip install -e`: the package runs from the source folder; put the library there.
            build_library(HERE / "panto" / "_lib")
        else:
            build_library(Path(self.build_lib) / "panto" / "_lib")


class BinaryDistribution(Distribution):
    """Has a native part: installs to platlib (the wheel's root, not .data/purelib)."""

    def has_ext_modules(self) -> bool:
        return True


cmdclass = {"build_py": BuildPyWithLibrary}

if bdist_wheel is not None:

    class PlatformWheel(bdist_wheel):  # type: ignore[misc,valid-type]
        """A platform wheel that fits any Python 3: py3-none-<platform>."""

        def finalize_options(self) -> None:
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):  # type: ignore[no-untyped-def]
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = PlatformWheel


setup(distclass=BinaryDistribution, cmdclass=cmdclass)
