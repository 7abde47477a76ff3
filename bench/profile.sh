#!/usr/bin/env bash
# Where the time goes for one panto consumer: profiles it streaming N deltas from the bench
# server. Run `make bench` (or bench/bench.sh --only panto-c) once first: it builds what this
# uses.
#
#   bench/profile.sh c|py|go|lua [anthropic|openai|openai-responses|gemini|bedrock] [N] [perf|callgrind|cprofile]
#
#   perf       (default) `perf record -g`, then the hottest symbols, by library and by symbol
#   callgrind  C only: instruction counts per function, inclusive (valgrind; use N <= 100000)
#   cprofile   Python only: cProfile of the binding, sorted by own time
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
lang=${1:?usage: bench/profile.sh c|py|go|lua [anthropic|openai|openai-responses|gemini|bedrock] [N] [perf|callgrind|cprofile]}
provider=${2:-anthropic}
n=${3:-1000000}
tool=${4:-perf}
lib=$root/build/bench/zig-out/lib
out=$root/build/bench/profile
mkdir -p "$out"
export LD_LIBRARY_PATH=$lib PANTO_LIBRARY=$lib/libpanto.so LUA_CPATH="$lib/lua/?.so;;" PYTHONPATH=$root/bindings-py
# Bedrock signs with fixed keys, as in run.py (AWS_ENV).
[ "$provider" != bedrock ] || export AWS_ACCESS_KEY_ID=AKIDEXAMPLE \
    AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY AWS_REGION=us-east-1

log=$out/server.log
build/bench-venv/bin/python bench/sse_server.py --n "$n" >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 200); do grep -q listening "$log" && break; sleep 0.05; done
url="$(awk '{print $2}' "$log")/n/$n"

case $lang in
    c) cmd=("$root/build/bench/panto_c" "$provider" "$url") ;;
    py) cmd=("$root/build/bench-venv/bin/python" "$root/bench/clients/panto_py.py" "$provider" "$url") ;;
    go) cmd=("$root/build/bench/go-panto" "$provider" "$url") ;;
    lua) cmd=(lua5.4 "$root/bench/clients/panto_lua.lua" "$provider" "$url") ;;
    *) echo "profile: unknown language $lang" >&2; exit 2 ;;
esac

case $tool in
    perf)
        command -v perf >/dev/null || { echo "profile: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
        (cd bench/clients && perf record -q -g -o "$out/perf.data" "${cmd[@]}" >/dev/null)
        echo "== $lang/$provider N=$n: share of samples by object"
        perf report -i "$out/perf.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep '%' | head -8
        echo "== by symbol"
        perf report -i "$out/perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null | grep '%' | head -40
        echo "(perf report -i $out/perf.data for the call graphs)"
        ;;
    callgrind)
        [ "$lang" = c ] || { echo "profile: callgrind is for the C consumer" >&2; exit 2; }
        command -v valgrind >/dev/null || { echo "profile: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
        valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" "${cmd[@]}" >/dev/null 2>"$out/valgrind.log"
        callgrind_annotate --inclusive=yes "$out/callgrind.out" | sed -n '/file:function/,$p' | head -40 | cut -c1-200
        echo "== own instructions"
        callgrind_annotate "$out/callgrind.out" | sed -n '/file:function/,$p' | head -30 | cut -c1-200
        ;;
    cprofile)
        [ "$lang" = py ] || { echo "profile: cprofile is for the Python consumer" >&2; exit 2; }
        (cd bench/clients && build_py="$root/build/bench-venv/bin/python" && \
            "$build_py" -m cProfile -s tottime panto_py.py "$provider" "$url" | head -40)
        ;;
    *) echo "profile: unknown tool $tool" >&2; exit 2 ;;
esac
