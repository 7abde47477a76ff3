"""The checked-in model catalog (libpanto/src/catalog/data.zig) is what scripts/gen_catalog.py
makes from the pinned litellm wheel, which `make setup` fetches into build/catalog/
(scripts/gen_catalog.py --fetch, its sha256 checked). A test downloads nothing: without the
wheel it skips."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import gen_catalog  # noqa: E402


def test_the_checked_in_catalog_is_what_the_pinned_source_generates() -> None:
    wheel = Path(gen_catalog.CACHE) / gen_catalog.WHEEL
    if not wheel.exists():
        pytest.skip(f"the pinned wheel is not in {gen_catalog.CACHE} (scripts/gen_catalog.py fetches it)")
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_catalog.py"), "--check", "--wheel", str(wheel)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_catalog_names_its_source_and_is_never_the_compromised_release() -> None:
    text = (ROOT / "libpanto" / "src" / "catalog" / "data.zig").read_text()
    assert f'pub const source = "litellm {gen_catalog.VERSION}";' in text
    assert gen_catalog.VERSION != "1.107.0"
