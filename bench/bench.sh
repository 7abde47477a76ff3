#!/usr/bin/env bash
# make bench: sets up what the benchmark needs (idempotent; a second run only checks), builds
# the consumers, then runs bench/run.py. BENCH_QUICK=1 for a ~1 minute run; arguments are
# passed to run.py (e.g. `bench/bench.sh --only panto-c`, `bench/bench.sh --only latency`).
#
# What it sets up, all under build/ (never in .venv):
#   build/tls                   the test certificates (tests/net/make_certs.sh), for the latency
#                               benchmark's HTTPS links (bench/latency.py makes them)
#   build/bench-venv            python venv with bench/requirements.txt (anthropic, openai, httpx,
#                               google-genai, boto3, matplotlib), pinned
#   build/bench/zig-out         libpanto built from this checkout with -Doptimize=$BENCH_OPTIMIZE
#                               (default ReleaseSafe, as `make build`), so a Debug zig-out/ left by
#                               someone's `zig build` does not skew the figures
#   build/bench/panto_c         the C consumer (and panto_c_turns, its latency workload, and
#                               tool_round_c, the tool round's client)
#   build/bench/go-panto        the Go consumer (bench/go-panto, panto.dev/panto by replace)
#   build/bench/anthropic-go, openai-go   the Go SDK peers (bench/go-peers, versions in its go.sum)
#   bindings-py/panto/__pycache__   panto's bytecode (the peers' packages got theirs from pip)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$PATH:/usr/local/go/bin"
out=build/bench
mkdir -p "$out/logs"

[ -x .venv/bin/python ] || scripts/setup.sh

# 1. The peers' venv.
stamp=build/bench-venv/.setup-done
if [ ! -f "$stamp" ] || [ bench/requirements.txt -nt "$stamp" ]; then
    echo "bench: installing the peers into build/bench-venv (bench/requirements.txt)"
    [ -x build/bench-venv/bin/python ] || python3 -m venv build/bench-venv
    build/bench-venv/bin/python -m pip install --quiet --disable-pip-version-check -r bench/requirements.txt
    touch "$stamp"
fi

# 2. curl, the physical limit.
if ! command -v curl >/dev/null; then
    echo "bench: installing Debian's curl"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq curl >/dev/null
fi

# 3. libpanto, optimized, into its own prefix.
optimize=${BENCH_OPTIMIZE:-ReleaseSafe}
export BENCH_OPTIMIZE=$optimize
echo "bench: building libpanto ($optimize) into $out/zig-out"
# (An absolute prefix: panto.pc names it, for the Go consumer's pkg-config.)
.venv/bin/python -m ziglang build -Doptimize="$optimize" -p "$root/$out/zig-out"
.venv/bin/python -m ziglang build media-fit -Doptimize="$optimize" -p "$out/zig-out"  # images.py
.venv/bin/python -m ziglang build session-bench -Doptimize="$optimize" -p "$out/zig-out"  # sessions.py
lib=$root/$out/zig-out/lib

# 4. The consumers.
cc -O2 -std=c99 -Wall -Wextra -Werror bench/clients/spawn.c -o "$out/spawn"
cc -O2 -std=c99 -Wall -Wextra -Werror -pthread -Iinclude bench/clients/panto_c.c \
    -L"$lib" -lpanto -Wl,-rpath,"$lib" -o "$out/panto_c"
cc -O2 -std=c99 -Wall -Wextra -Werror -Iinclude bench/clients/panto_c_turns.c \
    -L"$lib" -lpanto -Wl,-rpath,"$lib" -o "$out/panto_c_turns"
cc -O2 -std=c99 -Wall -Wextra -Werror -pthread -Iinclude bench/clients/tool_round_c.c \
    -L"$lib" -lpanto -Wl,-rpath,"$lib" -o "$out/tool_round_c"
# The Go module links its own static copy of libpanto by default (docs/go.md): the bench
# links this optimized build through pkg-config instead, dynamically, as the C consumers do.
(cd bench/go-panto && PKG_CONFIG_PATH="$lib/pkgconfig" go build -tags panto_pkgconfig -o "$root/$out/go-panto" .)
if [ ! -x "$out/anthropic-go" ] || [ ! -x "$out/openai-go" ] || \
   [ -n "$(find bench/go-peers -newer "$out/openai-go" -name '*.go' -o -newer "$out/openai-go" -name 'go.*' | head -n1)" ]; then
    echo "bench: building the Go SDK peers (the first build takes a few minutes)"
    (cd bench/go-peers && go mod download && go build -o "$root/$out/" ./cmd/anthropic-go ./cmd/openai-go)
fi

# The Go consumer links libpanto with a run path to zig-out/lib; LD_LIBRARY_PATH (set by
# run.py for every consumer) points it at the optimized copy instead: check that it does.
linked=$(LD_LIBRARY_PATH=$lib ldd "$out/go-panto")
if [[ "$linked" != *"$lib/libpanto.so"* ]]; then
    echo "bench: $out/go-panto does not load $lib/libpanto.so under LD_LIBRARY_PATH" >&2
    exit 1
fi

# 5. panto's Python package byte-compiled, as `pip install` does for the peers' packages: with
#    PYTHONDONTWRITEBYTECODE set, it would otherwise be compiled from source at every start.
build/bench-venv/bin/python -m compileall -q bindings-py/panto

# 6. The panto command's start-up (bench/startup.py): -p to its first byte, beside Python's and
#    Node's start. Written to build/bench/startup.json.
build/bench-venv/bin/python bench/startup.py --panto "$out/zig-out/bin/panto" --python build/bench-venv/bin/python

# 7. The durable part (`--only durable`, bench/durable.py) needs the temporal CLI, and its Go
#    worker is libpanto-go/temporal's test binary (a worker process with PANTO_TEMPORAL_WORKER
#    set), linked with the optimized libpanto as go-panto is.
case " $* " in *" durable "*)
    scripts/setup_temporal.sh
    (cd libpanto-go/temporal && PKG_CONFIG_PATH="$lib/pkgconfig" go test -c -tags panto_pkgconfig -o "$root/$out/temporal-worker.test" .)
    ;;
esac

BENCH_LIB_DIR=$lib exec build/bench-venv/bin/python bench/run.py "$@"
