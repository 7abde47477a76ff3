#!/usr/bin/env python3
"""Writes libpanto/src/catalog/data.zig, the model catalog, from the model table litellm ships
in its wheel (litellm/model_prices_and_context_window_backup.json), pinned by version and the
wheel's sha256, for the providers panto speaks: Anthropic, OpenAI (Chat Completions and
Responses), Gemini and Bedrock.

    scripts/gen_catalog.py           # fetch the pinned wheel (pip download) and regenerate
    scripts/gen_catalog.py --check   # exit 1, with a diff, when the checked-in file differs
    scripts/gen_catalog.py --wheel PATH   # use this copy of the pinned wheel

The wheel is kept in build/catalog/ (fetched with `pip download litellm==VERSION --no-deps`
for the pinned platform, so every machine gets the same file); nothing in it is run, only
the JSON is read. Bumping the source: change VERSION, WHEEL and SHA256 together.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "libpanto", "src", "catalog", "data.zig")
CACHE = os.path.join(ROOT, "build", "catalog")

# litellm 1.107.0 was a compromised release: never pin it.
VERSION = "1.110.2"
WHEEL = "litellm-1.110.2-cp310-abi3-manylinux_2_28_x86_64.whl"
SHA256 = "9d94d1c7d524b6fd10c14f9c8c6c4f0ac31705f9964ac59dcfd8337c046d8917"
MEMBER = "litellm/model_prices_and_context_window_backup.json"

# The catalog's family of a litellm entry, by its litellm_provider; entries of other
# providers (Azure, Vertex, resellers) are left out.
FAMILIES = {
    "anthropic": "anthropic",
    "openai": "openai",
    "gemini": "gemini",
    "bedrock": "bedrock",
    "bedrock_converse": "bedrock",
}
# Text models only: embeddings, images, audio and the like are not turns.
MODES = {"chat", "responses"}

# Prices, per token in the source, per million tokens in the catalog.
PRICES = [
    ("input", "input_cost_per_token"),
    ("output", "output_cost_per_token"),
    ("cache_read", "cache_read_input_token_cost"),
    ("cache_write_5m", "cache_creation_input_token_cost"),
    ("cache_write_1h", "cache_creation_input_token_cost_above_1hr"),
    ("reasoning", "output_cost_per_reasoning_token"),
]
# The long-context tier: the prices once the prompt passes a threshold ("above_200k_tokens").
TIER = re.compile(r"^input_cost_per_token_above_(\d+)k_tokens$")
TIER_PRICES = [
    ("input", "input_cost_per_token_above_{k}k_tokens"),
    ("output", "output_cost_per_token_above_{k}k_tokens"),
    ("cache_read", "cache_read_input_token_cost_above_{k}k_tokens"),
    ("cache_write_5m", "cache_creation_input_token_cost_above_{k}k_tokens"),
    ("cache_write_1h", "cache_creation_input_token_cost_above_1hr_above_{k}k_tokens"),
]
ABILITIES = [
    ("tools", "supports_function_calling"),
    ("images", "supports_vision"),
    ("pdfs", "supports_pdf_input"),
    ("thinking", "supports_reasoning"),
    ("structured_output", "supports_response_schema"),
    ("caching", "supports_prompt_caching"),
]


def wheel_path(given: Optional[str]) -> str:
    if given:
        return given
    path = os.path.join(CACHE, WHEEL)
    if not os.path.exists(path):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"litellm=={VERSION}", "--no-deps",
             "--only-binary=:all:", "--platform", "manylinux_2_28_x86_64", "--python-version", "3.10",
             "-d", CACHE],
            check=True,
        )
    return path


def read_source(path: str) -> Dict[str, Any]:
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != SHA256:
        sys.exit(f"{path}: sha256 {digest}, pinned {SHA256}")
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read(MEMBER))


def per_million(v: Any) -> Optional[str]:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return None
    # Ten significant digits hide the per-token float's noise (3e-06 * 1e6 = 2.9999999999999996).
    text = format(float(v) * 1e6, ".10g")
    return text if ("." in text or "e" in text) else text + ".0"


def model_name(key: str, family: str) -> Optional[str]:
    if family == "gemini":
        return key[len("gemini/"):] if key.startswith("gemini/") else None
    # A key with a path (a region, "invoke/", a provider prefix) names a route, not a model.
    return None if "/" in key else key


def zig_string(s: str) -> str:
    return json.dumps(s)  # the names are ASCII without escapes Zig reads differently


def entry(family: str, name: str, v: Dict[str, Any]) -> str:
    fields = [f".family = .{family}", f".name = {zig_string(name)}"]
    for field, key in (("max_input", "max_input_tokens"), ("max_output", "max_output_tokens")):
        n = v.get(key)
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            fields.append(f".{field} = {n}")
    prices = [f".{f} = {p}" for f, k in PRICES if (p := per_million(v.get(k))) is not None]
    if prices:
        fields.append(".price = .{ " + ", ".join(prices) + " }")
    tiers = sorted(int(m.group(1)) for k in v if (m := TIER.match(k)))
    if tiers:
        k = tiers[0]
        tier = [f".{f} = {p}" for f, key in TIER_PRICES if (p := per_million(v.get(key.format(k=k)))) is not None]
        fields.append(f".long = .{{ .above = {k * 1000}, " + ", ".join(tier) + " }")
    can = [f".{f} = true" for f, k in ABILITIES if v.get(k) is True]
    if can:
        fields.append(".can = .{ " + ", ".join(can) + " }")
    return "    .{ " + ", ".join(fields) + " },"


def generate(source: Dict[str, Any]) -> str:
    rows: List[Tuple[str, str, str]] = []
    for key, v in source.items():
        if not isinstance(v, dict) or v.get("mode") not in MODES:
            continue
        family = FAMILIES.get(v.get("litellm_provider", ""))
        if family is None:
            continue
        name = model_name(key, family)
        if name is None:
            continue
        rows.append((family, name, entry(family, name, v)))
    rows.sort(key=lambda r: (r[0], r[1]))
    seen = set()
    lines = []
    for family, name, line in rows:
        if (family, name) in seen:  # bedrock and bedrock_converse may both list a model
            continue
        seen.add((family, name))
        lines.append(line)
    head = [
        f"// Generated by scripts/gen_catalog.py from litellm {VERSION} ({WHEEL},",
        f"// sha256 {SHA256}): do not edit; regenerate.",
        "const Model = @import(\"model.zig\").Model;",
        "",
        f"pub const source = \"litellm {VERSION}\";",
        "",
        "/// Sorted by family, then name. Prices are USD per million tokens.",
        "pub const models = [_]Model{",
    ]
    return "\n".join(head + lines + ["};", ""])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the checked-in file instead of writing it")
    ap.add_argument("--wheel", help="a copy of the pinned wheel")
    ap.add_argument("--fetch", action="store_true", help="only fetch the pinned wheel into build/catalog/ and check its sha256 (make setup)")
    args = ap.parse_args()
    if args.fetch:
        read_source(wheel_path(None))
        return 0
    text = generate(read_source(wheel_path(args.wheel)))
    if args.check:
        with open(OUT, encoding="utf-8") as f:
            current = f.read()
        if current != text:
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True), OUT, "generated"))
            return 1
        return 0
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
