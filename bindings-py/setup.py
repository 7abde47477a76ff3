"""Build hook of the panto wheel: builds libpanto.so with the pinned Zig and packs it.

`pip wheel ./bindings-py` (or `pip install`, or `pip wheel panto-X.Y.Z.tar.gz`) runs
`python -m ziglang build shared -Doptimize=ReleaseSafe -Dtarget=... --prefix <tmp>` in the Zig source
tree (the repository root, or the sdist's zig-src/ folder; the build environment gets
ziglang==0.16.0 from [build-system] requires), then copies the real libpanto.so (not its
symlinks) into the wheel's panto/_lib/, where panto/_native.py finds it. The wheel is tagged
py3-none-<platform>: it holds a native library, loaded with ctypes, that does not depend on the
Python ABI.

On Linux x86_64 and aarch64 the library is built for glibc 2.17 (`-Dtarget=<arch>-linux-gnu.2.17`,
the baseline CPU), so the wheel is manylinux2014_<arch>: it runs on any Linux with glibc 2.17 or
later. The image codecs linked into it are the build machine's static archives (Debian:
libpng-dev libjpeg-dev libwebp-dev libgif-dev libstb-dev zlib1g-dev; `:arm64` ones for aarch64).

Knobs (environment): PANTO_TARGET, a Zig target (default: <arch>-linux-gnu.2.17 on Linux
x86_64/aarch64, so `PANTO_TARGET=aarch64-linux-gnu.2.17` cross-builds the aarch64 wheel; the
host's own elsewhere); PANTO_OPTIMIZE (default ReleaseSafe); PANTO_STRIP=0 keeps the debug info
(by default the library is built without it, `-Dstrip=true`). Everything else is in
pyproject.toml.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

try:  # setuptools >= 70.1 ships bdist_wheel itself; older ones use the wheel package's.
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover
    try:
        from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]
    except ImportError:  # no wheel package: an sdist or a plain build needs none
        bdist_wheel = None  # type: ignore[assignment,misc]

HERE = Path(__file__).resolve().parent
LIB_NAMES = {"linux": "libpanto.so", "darwin": "libpanto.dylib", "win32": "panto.dll"}
# What building the C library needs of the repository: copied into the sdist's zig-src/.
ZIG_SOURCES = ("build.zig", "build.zig.zon", "include", "libpanto/src", "libpanto-c/src", "LICENSE")
SDIST_ZIG_DIR = "zig-src"
# Linux CPUs with a manylinux2014 (glibc 2.17) tag, as `uname -m` and Zig name them.
MANYLINUX_ARCHES = ("x86_64", "aarch64")
MANYLINUX_GLIBC = "2.17"


def _lib_name() -> str:
    for prefix, name in LIB_NAMES.items():
        if sys.platform.startswith(prefix):
            return name
    return "libpanto.so"


def zig_target() -> str | None:
    """The Zig target of the library: PANTO_TARGET, else glibc 2.17 on Linux x86_64/aarch64,
    else None (the host)."""
    if os.environ.get("PANTO_TARGET"):
        return os.environ["PANTO_TARGET"]
    machine = platform.machine()
    if sys.platform.startswith("linux") and machine in MANYLINUX_ARCHES:
        return f"{machine}-linux-gnu.{MANYLINUX_GLIBC}"
    return None


def platform_tag() -> str:
    """The wheel's platform tag: manylinux2014_<arch> for a glibc 2.17 Linux target, the
    host's platform otherwise."""
    target = zig_target()
    if target is not None:
        m = re.fullmatch(r"(x86_64|aarch64)-linux-gnu\.2\.17", target)
        if m:
            return f"manylinux2014_{m.group(1)}"
        if target != f"{platform.machine()}-linux-gnu" and not target.startswith("native"):
            raise SystemExit(f"panto: PANTO_TARGET={target}: no wheel tag for it (use x86_64-linux-gnu.2.17 "
                             f"or aarch64-linux-gnu.2.17, or leave PANTO_TARGET unset)")
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def source_tree() -> Path:
    """The Zig sources: the sdist's zig-src/, else the checkout this folder is in."""
    for root in (HERE / SDIST_ZIG_DIR, HERE.parent):
        if (root / "build.zig").is_file() and (root / "libpanto").is_dir():
            return root
    raise SystemExit(
        f"panto: cannot build the native library: no Zig sources (build.zig, libpanto/) in "
        f"{HERE / SDIST_ZIG_DIR} or {HERE.parent}.\n"
        "Build from a checkout (`pip install path/to/panto/bindings-py`) or from the sdist, which "
        "carries them; or build the library yourself (`zig build`) and point PANTO_LIBRARY at "
        "zig-out/lib/libpanto.so."
    )


def build_library(dest_dir: Path) -> Path:
    """Builds the library in a temporary prefix and copies the real file to dest_dir."""
    root = source_tree()
    platform_tag()  # refuses a PANTO_TARGET the wheel cannot be tagged for, before building
    optimize = os.environ.get("PANTO_OPTIMIZE", "ReleaseSafe")
    name = _lib_name()
    target = zig_target()
    with tempfile.TemporaryDirectory(prefix="panto-build-") as prefix:
        # Only the shared C library: no libpanto.a, no Lua module (and so no Lua headers
        # needed), no debug info unless PANTO_STRIP=0.
        strip = "false" if os.environ.get("PANTO_STRIP", "1") == "0" else "true"
        cmd = [sys.executable, "-m", "ziglang", "build", "shared", f"-Doptimize={optimize}", "-Dlua=false",
               f"-Dstrip={strip}", "--prefix", prefix]
        if target is not None:
            cmd.append(f"-Dtarget={target}")
        print(f"panto: building the library: {' '.join(cmd)} (in {root})", flush=True)
        try:
            subprocess.run(cmd, cwd=root, check=True)
        except FileNotFoundError as e:  # pragma: no cover
            raise SystemExit(f"panto: cannot run {sys.executable}: {e}") from e
        except subprocess.CalledProcessError as e:
            raise SystemExit(
                f"panto: `zig build` failed (exit {e.returncode}); see its output above. The "
                "build needs ziglang==0.16.0 (pip installs it into the build environment) and, on "
                "Linux, the image codecs' static libraries of the target's CPU (Debian: "
                "libpng-dev libjpeg-dev libwebp-dev libgif-dev libstb-dev zlib1g-dev, with "
                "`:arm64` for aarch64 after `dpkg --add-architecture arm64`)."
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


class SdistWithZigSources(sdist):
    """An sdist that builds anywhere: the repository's Zig sources go into zig-src/ (MANIFEST.in
    cannot reach above this folder)."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        root = source_tree()
        dest = Path(base_dir, SDIST_ZIG_DIR)
        ignore = shutil.ignore_patterns(".zig-cache", "zig-out", "__pycache__", "*.pyc")
        for rel in ZIG_SOURCES:
            src = root / rel
            if src.is_dir():
                shutil.copytree(src, dest / rel, ignore=ignore, dirs_exist_ok=True)
            elif src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest / rel)
            elif rel != "LICENSE":
                raise SystemExit(f"panto: the sdist needs {src}, which is missing")


class BinaryDistribution(Distribution):
    """Has a native part: installs to platlib (the wheel's root, not .data/purelib)."""

    def has_ext_modules(self) -> bool:
        return True


def license_beside_pyproject() -> None:
    """pyproject's license-files cannot reach above this folder: in a checkout, the
    repository's LICENSE is copied here (gitignored) for the sdist and the wheel; an sdist
    already has it."""
    here = HERE / "LICENSE"
    if here.is_file():
        return
    root_license = source_tree() / "LICENSE"
    if not root_license.is_file():
        raise SystemExit(f"panto: the wheel needs {root_license}, which is missing")
    shutil.copyfile(root_license, here)


license_beside_pyproject()
cmdclass = {"build_py": BuildPyWithLibrary, "sdist": SdistWithZigSources}

if bdist_wheel is not None:

    class PlatformWheel(bdist_wheel):  # type: ignore[misc,valid-type]
        """A platform wheel that fits any Python 3: py3-none-<platform>."""

        def finalize_options(self) -> None:
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):  # type: ignore[no-untyped-def]
            return "py3", "none", platform_tag()

    cmdclass["bdist_wheel"] = PlatformWheel


setup(distclass=BinaryDistribution, cmdclass=cmdclass)
