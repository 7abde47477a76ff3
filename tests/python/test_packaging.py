"""The Python package as users install it from a checkout: `pip wheel ./bindings-py` builds a
manylinux2014 wheel (libpanto built by Zig for glibc 2.17) that carries libpanto.so, and the
installed package works from any folder with no toolchain, no PANTO_LIBRARY and no PYTHONPATH.
(Import time is a benchmark figure: bench/, not a test.) The sdist and the aarch64 wheel are
tests/packaging/python.sh and aarch64.sh (make packaging-test).

Slow-ish (a warm Zig cache: ~30 s; the first build of the glibc 2.17 target: minutes), so
`make packaging-test` runs it (tests/packaging/python_checkout.sh), not `make test`.
PANTO_SKIP_PACKAGING=1 skips it.

Run: .venv/bin/python -m pytest -q tests/python/test_packaging.py
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import panto

ROOT = Path(__file__).resolve().parents[2]
BINDINGS = ROOT / "bindings-py"
sys.path.insert(0, str(ROOT / "tests" / "packaging"))
import check_wheel  # noqa: E402  (tests/packaging/check_wheel.py: tag, ELF, auditwheel)

pytestmark = pytest.mark.skipif(
    os.environ.get("PANTO_SKIP_PACKAGING") == "1" or not sys.platform.startswith("linux")
    or platform.machine() not in check_wheel.ELF_MACHINE,
    reason="PANTO_SKIP_PACKAGING=1, or not Linux x86_64/aarch64",
)


PIP_WHEEL = ("--no-deps", "--no-build-isolation", "--disable-pip-version-check")


def clean_env() -> dict[str, str]:
    """The environment of a user's shell: no hint where the library or the sources are."""
    env = dict(os.environ)
    for name in ("PANTO_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def run(cmd: list[str], timeout: float, **kw) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
        f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    )
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    # The project venv's pip and build requirements (ziglang==0.16.0, setuptools>=77: the
    # pyproject.toml's, in requirements-dev.txt): an isolated build environment would cost
    # minutes of unpacking ziglang on a busy machine; tests/packaging/python.sh builds that way.
    # `zig build` reuses the repository's Zig cache.
    run([sys.executable, "-m", "pip", "wheel", str(BINDINGS), *PIP_WHEEL, "-w", str(out)],
        timeout=600, env=clean_env(), cwd=ROOT)
    wheels = list(out.glob("panto-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("venv")
    env_dir = base / "env"
    # The base interpreter, not the project venv's: nothing of .venv leaks into the new one.
    base_python = getattr(sys, "_base_executable", sys.executable)
    run([base_python, "-m", "venv", str(env_dir)], timeout=120, env=clean_env())
    python = env_dir / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--no-index", "--no-deps", "--disable-pip-version-check",
         str(wheel)], timeout=120, env=clean_env(), cwd=base)
    return python


def test_wheel_is_manylinux2014_with_the_library(wheel: Path) -> None:
    # Tag py3-none-manylinux2014_<arch>, an ELF of this CPU, auditwheel: manylinux_2_17 or older.
    check_wheel.check(wheel, platform.machine())
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        # In the wheel's root (platlib), not under panto-0.1.0.data/.
        for name in ("panto/__init__.py", "panto/py.typed", "panto/_lib/libpanto.so",
                     "panto/emulator/__init__.py", "panto/emulator/__main__.py",
                     "panto/emulator/server.py", "panto/emulator/README.md"):
            assert name in names, f"{name} is not in the wheel: {sorted(names)}"
        info = zf.getinfo("panto/_lib/libpanto.so")
        lib = zf.read(info)
    assert b"panto_abi_version" in lib
    # Built without debug info (-Dstrip=true: a ReleaseSafe build is ~6 MB, ~25 MB with it).
    assert info.file_size < 16 * 1024 * 1024


def test_check_wheel_sees_an_import_without_a_glibc_version(tmp_path: Path) -> None:
    # What auditwheel misses: libc's statx (glibc 2.28) called from code built for glibc 2.17 is
    # imported with no version; the dynamic loader of an older glibc refuses the library.
    src = tmp_path / "uses_statx.c"
    src.write_text("int statx(void);\nint getpid(void);\nint f(void) { return statx() + getpid(); }\n")
    lib = tmp_path / "libuses_statx.so"
    run([sys.executable, "-m", "ziglang", "cc", "-target", f"{platform.machine()}-linux-gnu.2.17", "-shared",
         "-o", str(lib), str(src)], timeout=600)
    assert check_wheel.unversioned_imports(lib.read_bytes()) == ["statx"]


def failed_build(source: Path, env: dict[str, str], tmp_path: Path) -> str:
    """stderr+stdout of a `pip wheel` of source that must fail."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), *PIP_WHEEL, "-w", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert not list((tmp_path / "out").glob("*.whl"))
    return proc.stdout + proc.stderr


def test_a_target_without_a_wheel_tag_is_refused_before_building(tmp_path: Path) -> None:
    out = failed_build(BINDINGS, {**clean_env(), "PANTO_TARGET": "riscv64-linux-gnu"}, tmp_path)
    assert "PANTO_TARGET=riscv64-linux-gnu: no wheel tag for it" in out, out[-3000:]
    assert "panto: building the library" not in out, "zig build ran for a target the wheel cannot name"


def test_the_package_folder_alone_says_where_the_zig_sources_are_missing(tmp_path: Path) -> None:
    # What issue 19 found: bindings-py copied away from the checkout (and not an sdist, which
    # carries zig-src/) cannot build the library, and says so.
    alone = tmp_path / "bindings-py"
    shutil.copytree(BINDINGS, alone, ignore=shutil.ignore_patterns("_lib", "__pycache__", "*.egg-info", "build"))
    out = failed_build(alone, clean_env(), tmp_path)
    assert f"no Zig sources (build.zig, libpanto/) in {alone / 'zig-src'} or {tmp_path}" in out, out[-3000:]


def test_installed_package_runs_a_turn_from_any_folder(venv: Path, tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({
        "repeat_last": True,
        "responses": [{"message": {
            "model": "panto-emulator",
            "content": [{"type": "text", "text": "Hello from the installed wheel."}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 6},
        }}],
    }))
    script = textwrap.dedent("""
        import json, os, subprocess, sys
        import panto
        lib = panto.library_path()
        pkg = os.path.dirname(os.path.abspath(panto.__file__))
        assert os.path.realpath(lib).startswith(os.path.realpath(pkg) + os.sep), (lib, pkg)
        emu = subprocess.Popen([sys.executable, "-m", "panto.emulator", "--port", "0",
                                "--scenario", sys.argv[1]],
                               stdout=subprocess.PIPE, text=True)
        try:
            line = emu.stdout.readline()
            assert line.startswith("panto-emulator listening on "), line
            url = line.split()[-1]
            with panto.Agent(provider="anthropic", model="claude-test", base_url=url,
                             api_key="test-key", max_tokens=100) as agent:
                text = "".join(agent.run("Hi").text())
        finally:
            emu.terminate()
            emu.wait(10)
        print(json.dumps({"lib": lib, "pkg": pkg, "text": text, "version": panto.library_version(),
                          "sys_path_has_sources": any("bindings-py" in p for p in sys.path)}))
    """)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    proc = run([str(venv), "-c", script, str(scenario)], timeout=60, env=clean_env(), cwd=cwd)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["text"] == "Hello from the installed wheel."
    assert result["lib"].endswith(os.path.join("panto", "_lib", "libpanto.so"))
    assert str(venv.parent.parent) in result["pkg"]
    assert not result["sys_path_has_sources"]
    assert result["version"] == panto.__version__


