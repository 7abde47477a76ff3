"""What type checkers conclude about panto: tests/python/typed_usage.py (ordinary uses, with
the types they must have and the mistakes they must catch) passes `mypy --strict` and pyright's
strict mode."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINDING = ROOT / "bindings-py"
USAGE = pathlib.Path(__file__).with_name("typed_usage.py")
PYRIGHT = pathlib.Path(sys.executable).with_name("pyright")


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MYPYPATH=str(BINDING), PYTHONPATH=str(BINDING))
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload, no-any-return]


def mypy_strict(*paths: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(ROOT / "build" / "mypy-cache"),
                 *map(str, paths)])


def test_mypy_strict_on_typed_usage() -> None:
    result = mypy_strict(USAGE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pyright_strict_on_typed_usage(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "pyrightconfig.json"
    config.write_text(json.dumps({
        "typeCheckingMode": "strict",
        "extraPaths": [str(BINDING)],
        "pythonVersion": "3.9",
        "reportUnnecessaryTypeIgnoreComment": "error",
    }))
    result = _run([str(PYRIGHT), "--project", str(config), str(USAGE)])
    assert result.returncode == 0, result.stdout + result.stderr
