#!/usr/bin/env python3
"""`make fuzz`: coverage-guided fuzzing of panto's input paths with libFuzzer (README.md here).

    .venv/bin/python libpanto/fuzz/run.py [--seconds N] [--targets sse,config] [--jobs 2] [--strict]

Installs clang (Debian's, for its libFuzzer) when missing, builds the targets (`zig build
fuzz`), links one binary per target into build/fuzz/bin/, and runs each for --seconds (default
600) over its seeds, its kept inputs and its growing corpus (build/fuzz/corpus/NAME/). A crash,
hang or memory blow-up stops libFuzzer; this script then minimizes the input, keeps it in
tests/fuzz/pending/NAME/ unless an input there crashes the same way already, and starts
libFuzzer again for the time left. The figures go to build/fuzz.json. The exit status is 1 when
any target crashed (or libFuzzer could not run).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import threading
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "libpanto" / "fuzz"
BUILD = ROOT / "build" / "fuzz"
KEPT = ROOT / "tests" / "fuzz"
ZIG = [str(ROOT / ".venv" / "bin" / "python"), "-m", "ziglang"]
TARGETS: dict[str, Any] = {k: v for k, v in json.loads((HERE / "targets.json").read_text()).items() if k != "//"}

# libFuzzer's limits: per input (seconds), memory (MB), and the largest input it makes. Inputs
# over their size are cut to it; the recorded streams and deep nestings fit.
TIMEOUT_S = 10
RSS_LIMIT_MB = 2048
MAX_LEN = {"sse": 8192, "anthropic": 65536, "openai": 65536, "responses": 65536, "gemini": 65536,
           "bedrock": 65536, "tool_input": 32768, "config": 32768, "media": 65536}
# A libFuzzer run that ends this many times in a row on a crash it knows gives up the target.
MAX_RESTARTS = 200


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("FUZZ_SECONDS") or 600),
                        help="fuzzing time per target (default $FUZZ_SECONDS or 600)")
    parser.add_argument("--targets", default=os.environ.get("FUZZ_TARGETS") or ",".join(TARGETS),
                        help="comma-separated targets (default $FUZZ_TARGETS or all)")
    parser.add_argument("--minimize-seconds", type=int, default=30, help="time to minimize one crash")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("FUZZ_JOBS") or 1),
                        help="targets fuzzed at once, one core each (default $FUZZ_JOBS or 1)")
    parser.add_argument("--strict", action="store_true", default=os.environ.get("FUZZ_STRICT") == "1",
                        help="also check the order of events (see README.md, Findings)")
    args = parser.parse_args()
    names = [t for t in re.split(r"[,\s]+", args.targets) if t]
    unknown = [t for t in names if t not in TARGETS]
    if unknown:
        print(f"fuzz: unknown target(s) {', '.join(unknown)}; targets: {', '.join(TARGETS)}", file=sys.stderr)
        return 2

    ensure_libfuzzer()
    build(names)
    env = dict(os.environ, PANTO_FUZZ_ROOT=str(BUILD / "root"), PANTO_FUZZ_STRICT="1" if args.strict else "0")
    report: dict[str, Any] = {
        "engine": "libFuzzer (Debian clang 14) over Zig's -ffuzz coverage instrumentation",
        "seconds_per_target": args.seconds,
        "strict": args.strict,
        "limits": {"timeout_s": TIMEOUT_S, "rss_mb": RSS_LIMIT_MB, "live_heap_mb": 256, "max_len": {t: MAX_LEN[t] for t in names}},
        "targets": {},
    }
    lock = threading.Lock()

    def run_one(name: str) -> None:
        result = fuzz_target(name, args.seconds, args.minimize_seconds, env)
        with lock:
            report["targets"][name] = result
            write_report(report)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for done in [pool.submit(run_one, name) for name in names]:
            done.result()
    report["targets"] = {name: report["targets"][name] for name in names}  # in the order asked
    write_report(report)
    crashes = sum(t["crashes"] for t in report["targets"].values())
    errors = sum(1 for t in report["targets"].values() if "error" in t)
    print(f"fuzz: wrote {(BUILD.parent / 'fuzz.json').relative_to(ROOT)}; {crashes} crash(es)")
    return 1 if crashes or errors else 0


# ---- building ---------------------------------------------------------------------------------


def ensure_libfuzzer() -> None:
    """Installs Debian's clang (which carries libFuzzer) unless a clang that links
    -fsanitize=fuzzer is there already."""
    if links_libfuzzer():
        return
    print("fuzz: installing Debian's clang, for libFuzzer")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "clang"], check=True,
                   env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), stdout=subprocess.DEVNULL)
    if not links_libfuzzer():
        sys.exit("fuzz: clang cannot link -fsanitize=fuzzer programs; install clang with its compiler-rt (libclang-rt-dev)")


def links_libfuzzer() -> bool:
    if shutil.which("clang") is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "t.c"
        source.write_text("#include <stdint.h>\n#include <stddef.h>\n"
                          "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
        result = subprocess.run(["clang", "-fsanitize=fuzzer", str(source), "-o", str(Path(tmp) / "t")],
                                capture_output=True)
        return result.returncode == 0


def build(names: list[str]) -> None:
    """zig build fuzz, then one binary per target: entry.c (not instrumented) + the library."""
    subprocess.run(ZIG + ["build", "fuzz", "-Doptimize=ReleaseSafe"], cwd=ROOT, check=True)
    library = ROOT / "zig-out" / "fuzz" / "libpanto_fuzz.a"
    (BUILD / "bin").mkdir(parents=True, exist_ok=True)
    for name in names:
        obj = BUILD / "bin" / f"{name}.o"
        subprocess.run(["clang", "-c", "-O1", f"-DTARGET=panto_fuzz_{name}", str(HERE / "entry.c"), "-o", str(obj)], check=True)
        subprocess.run(["clang", "-fsanitize=fuzzer", str(obj), str(library), "-o", str(BUILD / "bin" / name)], check=True)
        obj.unlink()


# ---- fuzzing ----------------------------------------------------------------------------------


def fuzz_target(name: str, seconds: int, minimize_seconds: int, env: dict[str, str]) -> dict[str, Any]:
    binary = BUILD / "bin" / name
    corpus = BUILD / "corpus" / name
    artifacts = BUILD / "artifacts" / name
    log_path = BUILD / "logs" / f"{name}.log"
    for d in (corpus, artifacts, log_path.parent):
        d.mkdir(parents=True, exist_ok=True)
    seeds = [KEPT / "seeds" / name, KEPT / "regressions" / name] + [ROOT / s for s in TARGETS[name]["seeds"]]
    kept = {digest(p.read_bytes()): p for d in seeds if d.is_dir() for p in d.iterdir() if p.is_file()}
    pending = KEPT / "pending" / name
    known = {}
    for p in sorted(pending.glob("*")) if pending.is_dir() else []:
        signature = crash_signature(run_once(binary, p, env))
        if signature:
            known.setdefault(signature, p)

    result: dict[str, Any] = {"seconds": 0.0, "executions": 0, "coverage": {}, "corpus": 0, "crashes": 0,
                              "crash_events": 0, "restarts": 0, "found": []}
    start = time.monotonic()
    log_path.write_text("")
    print(f"fuzz: {name}: {seconds} s (log: {log_path.relative_to(ROOT)})", flush=True)
    while True:
        left = seconds - (time.monotonic() - start)
        if left < 1 or result["restarts"] > MAX_RESTARTS:
            break
        cmd = [str(binary), f"-max_total_time={int(left)}", f"-timeout={TIMEOUT_S}", f"-rss_limit_mb={RSS_LIMIT_MB}",
               f"-max_len={MAX_LEN[name]}", f"-dict={HERE / 'dict' / (name + '.dict')}", "-print_final_stats=1",
               f"-artifact_prefix={artifacts}/", str(corpus)] + [str(d) for d in seeds if d.is_dir()]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, errors="replace").stderr
        with log_path.open("a") as log:
            log.write(f"$ {' '.join(cmd)}\n{out}\n")
        stats = parse_stats(out)
        result["executions"] += stats["executions"]
        if stats["coverage"]:
            result["coverage"] = stats["coverage"]
        if stats["instrumented"]:
            result["coverage"]["instrumented_counters"] = stats["instrumented"]
        artifact = stats["artifact"]
        if artifact is None:
            if not re.search(r"^Done \d+ runs", out, re.M):
                result["error"] = "libFuzzer stopped without finishing: " + " | ".join(out.strip().splitlines()[-3:])
                print(f"fuzz: {name}: {result['error']}", file=sys.stderr)
            break  # the time is up
        result["crash_events"] += 1
        result["restarts"] += 1
        data = Path(artifact).read_bytes()
        if digest(data) in kept:
            print(f"fuzz: {name}: the kept input {kept[digest(data)].relative_to(ROOT)} fails: fix it, or move it to tests/fuzz/pending/",
                  file=sys.stderr)
            result["found"].append({"signature": crash_signature(out), "input": str(kept[digest(data)].relative_to(ROOT)), "new": False, "kept": True})
            break
        (corpus / digest(data)).unlink(missing_ok=True)  # a unit from an older build that fails now
        signature = crash_signature(out) or f"{stats['kind']}: (no panic message)"
        if signature in known:
            if not any(f["signature"] == signature for f in result["found"]):
                result["found"].append({"signature": signature, "input": str(known[signature].relative_to(ROOT)), "new": False})
            continue
        kept_path = keep_crash(name, binary, Path(artifact), signature, stats["kind"], minimize_seconds, env)
        known[signature] = kept_path
        result["found"].append({"signature": signature, "input": str(kept_path.relative_to(ROOT)), "new": True})
        print(f"fuzz: {name}: NEW {signature}\n      kept as {kept_path.relative_to(ROOT)}", flush=True)
    result["seconds"] = round(time.monotonic() - start, 1)
    result["corpus"] = sum(1 for _ in corpus.iterdir())
    result["crashes"] = len(result["found"])
    result["executions_per_second"] = round(result["executions"] / max(result["seconds"], 1))
    cov = result["coverage"]
    print(f"fuzz: {name}: {result['seconds']} s, {result['executions']} executions, coverage {cov.get('edges', 0)} edges / "
          f"{cov.get('features', 0)} features, {result['crashes']} crash(es)", flush=True)
    return result


def keep_crash(name: str, binary: Path, artifact: Path, signature: str, kind: str, seconds: int, env: dict[str, str]) -> Path:
    """Minimizes a crashing input (when the crash reproduces) and keeps it in tests/fuzz/pending/."""
    data = artifact.read_bytes()
    if kind == "crash":
        minimized = artifact.with_name(artifact.name + ".min")
        subprocess.run([str(binary), "-minimize_crash=1", f"-max_total_time={seconds}", f"-timeout={TIMEOUT_S}",
                        f"-exact_artifact_path={minimized}", str(artifact)], env=env, capture_output=True)
        if minimized.is_file() and crash_signature(run_once(binary, minimized, env)) == signature:
            data = minimized.read_bytes()
    folder = KEPT / "pending" / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{kind}-{digest(data)[:16]}"
    path.write_bytes(data)
    return path


def run_once(binary: Path, input_path: Path, env: dict[str, str]) -> str:
    result = subprocess.run([str(binary), f"-timeout={TIMEOUT_S}", f"-rss_limit_mb={RSS_LIMIT_MB}", str(input_path)],
                            env=env, capture_output=True, text=True, errors="replace")
    return result.stderr if result.returncode != 0 else ""


# ---- reading libFuzzer's output -----------------------------------------------------------------


def parse_stats(out: str) -> dict[str, Any]:
    status = re.findall(r"cov: (\d+) ft: (\d+)", out)
    executions = re.findall(r"stat::number_of_executed_units: (\d+)", out)
    runs = re.findall(r"^#(\d+)\s", out, re.M)
    instrumented = re.search(r"\((\d+) inline 8-bit counters\)", out)
    artifact = re.search(r"Test unit written to (\S+)", out)
    kind = "crash"
    if "ERROR: libFuzzer: timeout" in out:
        kind = "timeout"
    elif "ERROR: libFuzzer: out-of-memory" in out:
        kind = "oom"
    return {
        "executions": int(executions[-1]) if executions else (int(runs[-1]) if runs else 0),
        "coverage": {"edges": int(status[-1][0]), "features": int(status[-1][1])} if status else {},
        "instrumented": int(instrumented.group(1)) if instrumented else 0,
        "artifact": artifact.group(1) if artifact else None,
        "kind": kind,
    }


def crash_signature(out: str) -> str:
    """What tells one crash from another: the panic message (numbers and quoted values left
    out) and the first frame in panto's own code."""
    if not out:
        return ""
    if "ERROR: libFuzzer: timeout" in out:
        head = "timeout"
    elif "ERROR: libFuzzer: out-of-memory" in out:
        head = "out-of-memory"
    else:
        panic = re.search(r"panic: (.*)", out)
        # Panic messages say what broke, then ": " and the details of this input.
        head = (panic.group(1).split(": ")[0] if panic else "deadly signal")[:160]
    frame = re.search(r"in (\S+) \S*/libpanto/src/([\w./]+:\d+)", out)
    return f"{head} at {frame.group(2)} ({frame.group(1)})" if frame else head


def digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def write_report(report: dict[str, Any]) -> None:
    targets = report["targets"].values()
    report["totals"] = {
        "seconds": round(sum(t["seconds"] for t in targets), 1),
        "executions": sum(t["executions"] for t in targets),
        "crashes": sum(t["crashes"] for t in targets),
        "new_crashes": sum(1 for t in targets for f in t["found"] if f["new"]),
    }
    path = BUILD.parent / "fuzz.json"
    path.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
