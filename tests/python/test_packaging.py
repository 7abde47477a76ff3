"""The Python package as users install it: `pip wheel ./bindings-py` builds a platform wheel
that carries libpanto.so, and the installed package works from any folder with no toolchain,
no PANTO_LIBRARY and no PYTHONPATH. (Import time is a benchmark figure: bench/, not a test.)

Slow-ish (~40 s with a warm pip and Zig cache: pip sets up an isolated build environment with
ziglang, then `zig build` mostly hits the cache). PANTO_SKIP_PACKAGING=1 skips it.

Run: .venv/bin/python -m pytest -q tests/python/test_packaging.py
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDINGS = ROOT / "bindings-py"

pytestmark = pytest.mark.skipif(
    os.environ.get("PANTO_SKIP_PACKAGING") == "1" or not sys.platform.startswith("linux"),
    reason="PANTO_SKIP_PACKAGING=1, or not Linux",
)


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
    # The project venv's pip; build isolation installs setuptools, wheel and ziglang==0.16.0
    # (from pip's cache after the first run). `zig build` reuses the repository's Zig cache.
    run([sys.executable, "-m", "pip", "wheel", str(BINDINGS), "--no-deps", "--disable-pip-version-check",
         "-w", str(out)], timeout=300, env=clean_env(), cwd=ROOT)
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


def test_wheel_is_a_platform_wheel_with_the_library(wheel: Path) -> None:
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    assert wheel.name == f"panto-0.1.0-py3-none-{platform}.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read("panto-0.1.0.dist-info/WHEEL").decode()
        assert "Root-Is-Purelib: false" in meta
        assert f"Tag: py3-none-{platform}" in meta
        # In the wheel's root (platlib), not under panto-0.1.0.data/.
        for name in ("panto/__init__.py", "panto/py.typed", "panto/_lib/libpanto.so",
                     "panto/emulator/__init__.py", "panto/emulator/__main__.py",
                     "panto/emulator/server.py"):
            assert name in names, f"{name} is not in the wheel: {sorted(names)}"
        info = zf.getinfo("panto/_lib/libpanto.so")
        lib = zf.read(info)
    assert lib[:4] == b"\x7fELF", "panto/_lib/libpanto.so is not the real library (a symlink?)"
    assert b"panto_abi_version" in lib
    # Stripped when the build machine has `strip` (a ReleaseSafe build: ~8.6 MB -> ~1.5 MB).
    assert info.file_size < 64 * 1024 * 1024


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
    assert result["version"].startswith("0.1.0")


