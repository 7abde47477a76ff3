#!/usr/bin/env bash
# Zig, as docs/zig.md says: the package as a tarball of build.zig.zon's paths (what a release
# would publish), then the example consumer (tests/zig-consumer) in folders outside the tree,
# depending on it once by a relative path to the unpacked package and once by `zig fetch --save`
# of the tarball (.url and .hash); each streams a turn against the emulator.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
zig=("$root/.venv/bin/python" -m ziglang)
# Kept between runs, and the same paths each time, so that Zig's caches stay warm.
work=${PANTO_PACKAGING_DIR:-${TMPDIR:-/tmp}/panto-packaging}/zig
cache=$work/cache
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
version=$("$root/.venv/bin/python" "$root/scripts/version.py" show)
rm -rf "$work/panto" "$work/by-path" "$work/by-fetch" "$work"/panto-*.tar.gz
mkdir -p "$work" "$cache"

# The package: the files of build.zig.zon's .paths (git's, untracked ones included).
tarball=$work/panto-$version.tar.gz
mapfile -t paths < <(sed -n '/\.paths = \.{/,/}/p' "$root/build.zig.zon" | grep -o '"[^"]*"' | tr -d '"')
(cd "$root" && git ls-files --cached --others --exclude-standard -- "${paths[@]}" |
    tar -czf "$tarball" --transform "s,^,panto-$version/," -T -)
mkdir "$work/panto" && tar -xzf "$tarball" -C "$work/panto" --strip-components=1

consumer() {
    mkdir -p "$1"
    cp -r "$root/tests/zig-consumer/build.zig" "$root/tests/zig-consumer/src" "$1/"
    # The example's build.zig.zon without its dependency (which points into the tree).
    sed '/\.panto = \.{/d; /Another project would use/d' "$root/tests/zig-consumer/build.zig.zon" >"$1/build.zig.zon"
    grep -q '\.dependencies = \.{' "$1/build.zig.zon" || { fail "tests/zig-consumer/build.zig.zon has no .dependencies"; return 1; }
}
add_dependency() { # folder, the dependency's fields
    sed -i "s|\.dependencies = \.{|.dependencies = .{\n        .panto = .{ $2 },|" "$1/build.zig.zon"
}

consumer "$work/by-path"
add_dependency "$work/by-path" '.path = "../panto"'

consumer "$work/by-fetch"
(cd "$work/by-fetch" && "${zig[@]}" fetch --save=panto "$tarball" >/dev/null) || fail "zig fetch --save of $tarball"
grep -q '\.hash = "panto-' "$work/by-fetch/build.zig.zon" || fail "zig fetch --save wrote no hash: $(cat "$work/by-fetch/build.zig.zon")"

for dir in by-path by-fetch; do
    out=$(cd "$work/$dir" && env -u LD_LIBRARY_PATH -u PANTO_LIBRARY "$root/scripts/with-emulator.sh" \
        sh -c '"$@" build run --cache-dir "'"$cache"'" -- "$PANTO_BASE_URL"' sh "${zig[@]}" 2>&1) || fail "$dir: $out"
    case "$out" in *"[zig] Hello from panto!"*"(end_turn, 17 tokens out)"*) ;; *) fail "$dir printed: $out" ;; esac
done

[ "$failed" = 0 ] || { echo "packaging zig: $failed failed"; exit 1; }
echo "packaging zig: passed"
