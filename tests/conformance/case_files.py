"""Writing generated case folders (make_recorded_cases.py, make_media_cases.py,
make_conversation_cases.py), or, with --check, listing the files that are out of date.
Python 3.11 standard library only."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable

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


def case_texts(data: dict[str, Any], lines: list[Any]) -> dict[str, str]:
    """The files of a case folder: case.json and expected.jsonl."""
    return {"case.json": json.dumps(data, indent=2, ensure_ascii=False) + "\n",
            "expected.jsonl": "".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines)}


def generate(description: str, script: str, folders: Callable[[], dict[Path, dict[str, str]]]) -> int:
    """The command line of a case generator: writes each folder's files (`folders()`: folder
    -> name -> text), or with --check lists the stale ones and returns 1."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if a generated case differs from the files")
    args = ap.parse_args()
    stale: list[str] = []
    for folder, files in folders().items():
        sync(folder, files, args.check, stale)
    if stale:
        print(f"out of date (run {script}):\n  " + "\n  ".join(stale))
        return 1
    return 0
