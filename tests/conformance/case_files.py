"""Writing generated case folders (make_recorded_cases.py, make_media_cases.py), or, with
--check, listing the files that are out of date. Python 3.11 standard library only."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def sync(case_dir: Path, files: dict[str, str], check: bool, stale: list[str]) -> None:
    """Writes each file of `files` (name -> text) into case_dir when it differs; with `check`,
    writes nothing and appends the differing files' paths to `stale`."""
    for fname, text in files.items():
        path = case_dir / fname
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if check:
            stale.append(str(path.relative_to(REPO)))
        else:
            case_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(REPO)}")
