"""scripts/version.py: --check finds every place that disagrees; bump writes them all."""
from __future__ import annotations

import datetime
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "version.py"
spec = importlib.util.spec_from_file_location("version_script", SCRIPT)
assert spec and spec.loader
version = importlib.util.module_from_spec(spec)
spec.loader.exec_module(version)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of just the files that state the version."""
    files = [rel for rel, _ in version.PLACES] + [version.CHANGELOG, "README.md"]
    files.append(str(version.rockspec(ROOT).relative_to(ROOT)))
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), *args], capture_output=True, text=True)


def test_the_repository_agrees() -> None:
    assert version.mismatches(ROOT) == []


def test_check_names_each_place_that_disagrees(tree: Path) -> None:
    current = version.read_version(tree)
    go = tree / "libpanto-go/version.go"
    go.write_text(go.read_text().replace(f'"{current}"', '"9.9.9"'))
    header = tree / "include/panto.h"
    header.write_text(header.read_text().replace("#define PANTO_VERSION_MINOR ", "#define PANTO_VERSION_MINOR 7"))
    result = run(tree, "--check")
    assert result.returncode == 1
    assert f"libpanto-go/version.go: 9.9.9, want {current}" in result.stderr
    assert "include/panto.h (PANTO_VERSION_MAJOR.MINOR.PATCH)" in result.stderr
    assert "pyproject" not in result.stderr


def test_a_missing_place_is_reported(tree: Path) -> None:
    (tree / "bindings-py/panto/__init__.py").write_text("# no version here\n")
    result = run(tree, "--check")
    assert result.returncode == 1
    assert "bindings-py/panto/__init__.py: expected one match" in result.stderr


def test_bump_writes_every_place_and_starts_the_changelog_section(tree: Path) -> None:
    old = version.read_version(tree)
    result = run(tree, "bump", "7.8.9")
    assert result.returncode == 0, result.stderr
    assert run(tree, "show").stdout == "7.8.9\n"
    assert version.mismatches(tree) == []
    header = (tree / "include/panto.h").read_text()
    assert "#define PANTO_VERSION_MAJOR 7\n" in header and "#define PANTO_VERSION_PATCH 9\n" in header
    spec = tree / "libpanto-lua/panto-7.8.9-1.rockspec"
    assert spec.exists() and not (tree / f"libpanto-lua/panto-{old}-1.rockspec").exists()
    assert old not in spec.read_text()
    assert "panto-7.8.9-1.rockspec" in (tree / "README.md").read_text()
    changelog = (tree / "CHANGELOG.md").read_text()
    today = datetime.date.today().isoformat()
    assert changelog.index("## Unreleased") < changelog.index(f"## 7.8.9 — {today}") < changelog.index(f"## {old}")


@pytest.mark.parametrize("bad", ["1.2", "v1.2.3", "0.0.1"])
def test_bump_refuses_a_bad_or_older_version_and_changes_nothing(tree: Path, bad: str) -> None:
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    result = run(tree, "bump", bad)
    assert result.returncode == 1
    assert "version.py: " in result.stderr
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before


def test_bump_refuses_when_the_places_disagree(tree: Path) -> None:
    py = tree / "bindings-py/pyproject.toml"
    py.write_text(py.read_text().replace(f'version = "{version.read_version(tree)}"', 'version = "0.0.9"'))
    result = run(tree, "bump", "5.0.0")
    assert result.returncode == 1
    assert "disagree already" in result.stderr and "pyproject.toml: 0.0.9" in result.stderr
    assert version.read_version(tree) != "5.0.0"
