"""The image pipeline of `make bench` (`--only images`): time and peak memory to fit a
4000x3000 JPEG, PNG and WEBP into 2000x2000 with libpanto's media pipeline (`media_fit`, a Zig
program calling media.fit) and with Pillow (`clients/pillow_fit.py`: thumbnail, then save in
the same format), each run its own process started through build/bench/spawn so that its peak
RSS is its own. The pictures are made here (Pillow, deterministic): smooth gradients with a
little noise, as a photo has.

Targets (issue 15): panto at least as fast as Pillow on each format, and its peak RSS under 3x
the decoded image (4000 x 3000 x 3 bytes = 36 MB)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build", "bench")
IMAGES = os.path.join(BUILD, "images")
SIZE = (4000, 3000)
DECODED_MB = SIZE[0] * SIZE[1] * 3 / 1e6
RSS_FACTOR = 3
FORMATS = {"jpeg": "JPEG", "png": "PNG", "webp": "WEBP"}


def make_images() -> Dict[str, str]:
    """The three 4000x3000 inputs, made once (Pillow in the bench venv)."""
    from PIL import Image, ImageChops

    os.makedirs(IMAGES, exist_ok=True)
    paths = {fmt: os.path.join(IMAGES, f"photo_4000x3000.{fmt}") for fmt in FORMATS}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    w, h = SIZE
    red = Image.linear_gradient("L").resize(SIZE)
    green = Image.radial_gradient("L").resize(SIZE)
    blue = Image.linear_gradient("L").rotate(90).resize(SIZE)
    noise = Image.effect_noise(SIZE, 12)
    photo = Image.merge("RGB", [ImageChops.add(c, noise, 1, -128) for c in (red, green, blue)])
    for fmt, path in paths.items():
        options = {"quality": 92} if fmt in ("jpeg", "webp") else {}
        photo.save(path, FORMATS[fmt], **options)
    return paths


def run_once(argv: List[str], log) -> dict:
    rusage = os.path.join(BUILD, "images.rusage")
    proc = subprocess.run([os.path.join(BUILD, "spawn"), rusage] + argv, capture_output=True, text=True, timeout=120)
    log.write(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}\n")
    result = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not result:
        raise RuntimeError(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    _, seconds, width, height, size, media_type = result[-1].split()
    code, maxrss_kb, user_s, sys_s = open(rusage).read().split()
    return dict(seconds=float(seconds), width=int(width), height=int(height), bytes=int(size), media_type=media_type,
                rss_mb=int(maxrss_kb) / 1024, cpu_s=float(user_s) + float(sys_s))


def measure(reps: int, media_fit: str, python: str, log, say) -> dict:
    paths = make_images()
    results: Dict[str, dict] = {}
    failed: Dict[str, str] = {}
    for fmt, path in paths.items():
        consumers = {
            f"panto/{fmt}": [media_fit, path, os.path.join(IMAGES, f"out_panto.{fmt}")],
            f"pillow/{fmt}": [python, os.path.join(HERE, "clients", "pillow_fit.py"), path,
                              os.path.join(IMAGES, f"out_pillow.{fmt}"), FORMATS[fmt]],
        }
        for name, argv in consumers.items():
            try:
                runs = [run_once(argv, log) for _ in range(reps)]
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                failed[name] = str(e)
                say(f"bench: images: {name} failed: {e}")
                continue
            last = runs[-1]
            results[name] = {
                "image_fit_ms": round(statistics.median(r["seconds"] for r in runs) * 1000, 1),
                "image_cpu_ms": round(statistics.median(r["cpu_s"] for r in runs) * 1000, 1),
                "image_peak_rss_mb": round(statistics.median(r["rss_mb"] for r in runs), 1),
                "image_out": f"{last['width']}x{last['height']} {last['media_type']} {last['bytes']:,} bytes",
            }
            say(f"bench: images: {name}: {results[name]['image_fit_ms']} ms, {results[name]['image_peak_rss_mb']} MB, {results[name]['image_out']}")
    return {"results": results, "failed": failed, "reps": reps}


def targets(m: dict) -> List[dict]:
    rows = []
    res = m["results"]
    for fmt in FORMATS:
        p, q = res.get(f"panto/{fmt}"), res.get(f"pillow/{fmt}")
        if p is None or q is None:
            rows.append({"target": f"image fit, {fmt}: panto at least as fast as Pillow", "measured": "not measured", "status": "not measured"})
        else:
            ok = p["image_fit_ms"] <= q["image_fit_ms"]
            rows.append({"target": f"image fit, {fmt}: panto at least as fast as Pillow",
                         "measured": f"panto {p['image_fit_ms']:.0f} ms, Pillow {q['image_fit_ms']:.0f} ms", "status": "met" if ok else "not met"})
        if p is not None:
            limit = RSS_FACTOR * DECODED_MB
            rows.append({"target": f"image fit, {fmt}: panto peak RSS under {RSS_FACTOR}x the decoded image ({limit:.0f} MB)",
                         "measured": f"{p['image_peak_rss_mb']:.1f} MB (Pillow {q['image_peak_rss_mb']:.1f} MB)" if q else f"{p['image_peak_rss_mb']:.1f} MB",
                         "status": "met" if p["image_peak_rss_mb"] < limit else "not met"})
    return rows


def markdown(m: dict) -> List[str]:
    lines = ["", "## Images: fitting a 4000x3000 picture into 2000x2000", "",
             f"Median of {m['reps']}; time from reading the file to the output written, in the process; "
             "peak RSS of the process (Pillow's includes the Python interpreter, ~10 MB).", "",
             "| consumer | fit ms | CPU ms | peak RSS MB | output |", "|---|---:|---:|---:|---|"]
    for name, r in sorted(m["results"].items()):
        lines.append(f"| {name} | {r['image_fit_ms']:.0f} | {r['image_cpu_ms']:.0f} | {r['image_peak_rss_mb']:.1f} | {r['image_out']} |")
    for name, why in m["failed"].items():
        lines.append(f"| {name} | failed: {why} | | | |")
    return lines


if __name__ == "__main__":  # a quick look: python bench/images.py MEDIA_FIT
    print(measure(1, sys.argv[1], sys.executable, sys.stderr, print))
