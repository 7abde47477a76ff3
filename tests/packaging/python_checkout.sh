#!/usr/bin/env bash
# The Python package built from the checkout (`pip wheel ./bindings-py`), as
# tests/python/test_packaging.py checks it: the manylinux2014 wheel and its contents, the
# installed package running a turn from any folder, the unversioned-symbol check, and the
# builds refused with a clear message. Here rather than in `make test`: the wheel's library is
# a glibc 2.17 build of its own, minutes on a cold cache.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
PANTO_LIBRARY=$root/zig-out/lib/libpanto.so PYTHONPATH=$root/bindings-py \
    "$root/.venv/bin/python" -m pytest -q -p no:cacheprovider tests/python/test_packaging.py
