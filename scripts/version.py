#!/usr/bin/env python3
"""panto's one version number, in every place that states it.

    scripts/version.py show            print the version (build.zig.zon's)
    scripts/version.py --check         every place agrees with it (make test runs this); exit 1 if not
    scripts/version.py bump X.Y.Z      write X.Y.Z everywhere, rename the rockspec, and start the
                                       CHANGELOG's X.Y.Z section with what Unreleased held

build.zig reads build.zig.zon's version (libpanto.so's soname version, panto.pc); the CLI's
--version prints panto.version; the Lua module's _VERSION and Python's library_version() ask the
library. The places below are the ones that spell the number out.
"""
from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

SEMVER = r"(\d+)\.(\d+)\.(\d+)"

# (file, pattern): group 1 of each match is a version X.Y.Z. build.zig.zon's is the reference.
PLACES = [
    ("build.zig.zon", r'\n    \.version = "(\d+\.\d+\.\d+)"'),
    ("libpanto/src/panto.zig", r'\npub const version = "(\d+\.\d+\.\d+)";'),
    ("include/panto.h", r'\n#define PANTO_VERSION "(\d+\.\d+\.\d+)"'),
    ("bindings-py/pyproject.toml", r'\nversion = "(\d+\.\d+\.\d+)"'),
    ("bindings-py/panto/__init__.py", r'\n__version__ = "(\d+\.\d+\.\d+)"'),
    ("libpanto-go/version.go", r'\nconst Version = "(\d+\.\d+\.\d+)"'),
]
# The header's numeric macros, X, Y and Z of PANTO_VERSION.
HEADER = "include/panto.h"
HEADER_PARTS = ("MAJOR", "MINOR", "PATCH")
# The rockspec: its file name and its version field carry X.Y.Z-REVISION.
ROCKSPEC_GLOB = "libpanto-lua/panto-*.rockspec"
ROCKSPEC_NAME = re.compile(r"panto-(\d+\.\d+\.\d+)-(\d+)\.rockspec")
ROCKSPEC_FIELD = r'\nversion = "(\d+\.\d+\.\d+)-\d+"'
CHANGELOG = "CHANGELOG.md"
# Documents whose examples name the version (file names, tags): bump rewrites every mention.
DOCS = ["README.md", "docs/*.md", "bindings-py/README.md", "libpanto-lua/README.md"]


class VersionError(Exception):
    """A place that does not state the version as expected."""


def read_version(root: Path) -> str:
    return _find(root, *PLACES[0])[0]


def _find(root: Path, rel: str, pattern: str) -> list[str]:
    path = root / rel
    if not path.is_file():
        raise VersionError(f"{rel}: missing")
    found = re.findall(pattern, path.read_text())
    if len(found) != 1:
        raise VersionError(f"{rel}: expected one match of {pattern!r}, found {len(found)}")
    return found


def rockspec(root: Path) -> Path:
    specs = sorted(root.glob(ROCKSPEC_GLOB))
    if len(specs) != 1:
        raise VersionError(f"{ROCKSPEC_GLOB}: expected one rockspec, found {len(specs)}")
    return specs[0]


def mismatches(root: Path) -> list[str]:
    """Each place whose version is not build.zig.zon's, as 'file: found X, want Y'."""
    want = read_version(root)
    problems = []

    def expect(rel: str, got: str) -> None:
        if got != want:
            problems.append(f"{rel}: {got}, want {want}")

    for rel, pattern in PLACES[1:]:
        try:
            expect(rel, _find(root, rel, pattern)[0])
        except VersionError as e:
            problems.append(str(e))
    try:
        header = (root / HEADER).read_text()
        parts = [re.findall(rf"\n#define PANTO_VERSION_{p} (\d+)\n", header) for p in HEADER_PARTS]
        if any(len(p) != 1 for p in parts):
            raise VersionError(f"{HEADER}: expected one #define of each PANTO_VERSION_{'/'.join(HEADER_PARTS)}")
        expect(HEADER + " (PANTO_VERSION_MAJOR.MINOR.PATCH)", ".".join(p[0] for p in parts))
        spec = rockspec(root)
        rel = str(spec.relative_to(root))
        name = ROCKSPEC_NAME.fullmatch(spec.name)
        if not name:
            raise VersionError(f"{rel}: the name is not panto-X.Y.Z-N.rockspec")
        expect(rel + " (file name)", name.group(1))
        expect(rel, _find(root, rel, ROCKSPEC_FIELD)[0])
        if not re.search(rf"\n## {re.escape(want)}\b", (root / CHANGELOG).read_text()):
            problems.append(f"{CHANGELOG}: no '## {want}' section")
    except (VersionError, OSError) as e:
        problems.append(str(e))
    return problems


def bump(root: Path, new: str, today: datetime.date) -> list[str]:
    """Writes `new` into every place; returns the files changed. Checks everything first."""
    if not re.fullmatch(SEMVER, new):
        raise VersionError(f"{new!r} is not a version X.Y.Z")
    problems = mismatches(root)
    if problems:
        raise VersionError("the places disagree already; fix them first:\n  " + "\n  ".join(problems))
    old = read_version(root)
    if tuple(map(int, new.split("."))) <= tuple(map(int, old.split("."))):
        raise VersionError(f"{new} is not after the current version {old}")
    changelog = (root / CHANGELOG).read_text()
    if "\n## Unreleased\n" not in changelog:
        raise VersionError(f"{CHANGELOG}: no '## Unreleased' section to release as {new}")

    changed = []

    def rewrite(rel: str, pattern: str, value: str) -> None:
        path = root / rel
        text = path.read_text()
        m = re.search(pattern, text)
        assert m is not None  # mismatches() found each one
        path.write_text(text[: m.start(1)] + value + text[m.end(1):])
        changed.append(rel)

    for rel, pattern in PLACES:
        rewrite(rel, pattern, new)
    header = root / HEADER
    text = header.read_text()
    for part, number in zip(HEADER_PARTS, new.split(".")):
        text = re.sub(rf"(\n#define PANTO_VERSION_{part} )\d+\n", rf"\g<1>{number}\n", text)
    header.write_text(text)
    # The rockspec: every mention of the old version (its field, the tag, usage comments),
    # revision 1 of the new one, under the new name.
    spec = rockspec(root)
    text = re.sub(rf"{re.escape(old)}-\d+", f"{new}-1", spec.read_text())
    text = re.sub(rf"(?<![\d.]){re.escape(old)}(?![\d.])", new, text)  # the tag, comments
    spec.unlink()
    renamed = spec.with_name(f"panto-{new}-1.rockspec")
    renamed.write_text(text)
    changed += [str(spec.relative_to(root)), str(renamed.relative_to(root))]
    mention = re.compile(rf"(?<![\d.]){re.escape(old)}(?![\d.])")
    for doc in sorted({p for pattern in DOCS for p in root.glob(pattern)}):
        text = doc.read_text()
        if mention.search(text):
            doc.write_text(mention.sub(new, text))
            changed.append(str(doc.relative_to(root)))
    (root / CHANGELOG).write_text(changelog.replace(
        "\n## Unreleased\n", f"\n## Unreleased\n\n## {new} — {today.isoformat()}\n", 1))
    changed.append(CHANGELOG)
    return changed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--check", action="store_true", help="every place states the same version")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("show", help="print the version")
    b = sub.add_parser("bump", help="write a new version everywhere")
    b.add_argument("version")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problems = mismatches(args.root)
            for p in problems:
                print(f"version.py: {p}", file=sys.stderr)
            if problems:
                return 1
            print(f"version.py: {read_version(args.root)} everywhere")
        if args.command == "show":
            print(read_version(args.root))
        elif args.command == "bump":
            for rel in bump(args.root, args.version, datetime.date.today()):
                print(f"version.py: {rel}")
        elif not args.check:
            parser.print_usage(sys.stderr)
            return 2
    except VersionError as e:
        print(f"version.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
