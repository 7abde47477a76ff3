# The two commands of the README: `make demo` and `make test`. Both install what they need
# first (scripts/setup.sh), so they work on a fresh machine.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin

ROOT := $(CURDIR)
PY := $(ROOT)/.venv/bin/python
ZIG := $(PY) -m ziglang
LIB := $(ROOT)/zig-out/lib
OPTIMIZE ?= ReleaseSafe
CSTRICT := -std=c99 -Wall -Wextra -Werror -pedantic

# Every test finds the freshly built library, not an installed one.
export PANTO_LIBRARY := $(LIB)/libpanto.so
export LD_LIBRARY_PATH := $(LIB)
export LUA_CPATH := $(LIB)/lua/?.so;;
export PYTHONPATH := $(ROOT)/bindings-py

.PHONY: all setup build test check-version packaging-test test-zig test-c test-python check-abi test-go test-lua conformance conformance-async test-soak test-crash test-durable test-cli soak demo bench bench-latency fuzz clean

all: build

setup:
	@scripts/setup.sh

build: setup
	$(ZIG) build install go-lib -Doptimize=$(OPTIMIZE)

# The Go module's copy of libpanto.a, which its cgo lines link (libpanto-go/lib/<goos>_<goarch>/,
# docs/go.md); `make build` makes it too.
.PHONY: go-lib
go-lib: setup
	$(ZIG) build go-lib -Doptimize=$(OPTIMIZE)

test: build
	@$(MAKE) --no-print-directory check-version test-zig test-c conformance test-python test-go test-lua test-cli test-soak test-crash
	@echo "make test: all suites passed"

# The unit tests are compiled in Debug (safety checks as in ReleaseSafe): four test binaries
# each compile the whole library, and LLVM's optimizer made that the slowest step of a fresh
# `make test` (cold caches, 2 cores: 329 s ReleaseSafe, 152 s Debug). The suites after this
# one run the ReleaseSafe build.
TEST_ZIG_OPTIMIZE ?= Debug
test-zig:
	$(ZIG) build test -Doptimize=$(TEST_ZIG_OPTIMIZE)

test-c:
	@mkdir -p build
	cc $(CSTRICT) -pthread -Iinclude tests/c/test_api.c -L$(LIB) -lpanto -Wl,-rpath,$(LIB) -o build/test_api
	g++ -std=c++20 -Wall -Werror -pedantic -Iinclude -fsyntax-only tests/c/header_cpp.cpp
	build/test_api
	OPTIMIZE=$(OPTIMIZE) tests/c/test_install.sh

test-python: check-abi
	$(PY) -m mypy --strict bindings-py/panto
	$(PY) -m pytest -q tests/python --ignore=tests/python/test_packaging.py

# Every package states the same version (scripts/version.py; `bump X.Y.Z` changes it).
check-version:
	$(PY) scripts/version.py --check
	$(PY) -m pytest -q tests/scripts

# The generated mirror of the header (bindings-py/panto/_abi.py) is current.
check-abi:
	$(PY) scripts/gen_abi.py --check

# The stamp: Go's build cache does not hash libpanto.a (cgo's LDFLAGS only name it), so a define
# that changes with its bytes makes a rebuilt library relink the tests (as run.py does).
test-go: go-lib
	cd libpanto-go && export CGO_CFLAGS="-O2 -g -DPANTO_LIBRARY_STAMP=$$(cat lib/*/libpanto.a | sha256sum | cut -c1-16)" && \
		go vet ./... && go test -race -count=1 ./...

# The `panto` command (tests/cli/): the real binary against the emulator.
test-cli:
	$(PY) -m pytest -q tests/cli

test-lua:
	lua5.4 tests/lua/test_json.lua
	lua5.4 tests/lua/test_rockspec.lua
	lua5.4 tests/lua/test_panto.lua
	lua5.4 tests/lua/test_standalone_require.lua

# Cases run two at a time (each worker with its own emulator): the matrix's cells mostly wait
# on a driver process or a scripted delay, so a second worker shortens the run on 2 cores.
CONFORMANCE_JOBS ?= 2
conformance:
	$(PY) tests/conformance/make_recorded_cases.py --check
	$(PY) tests/conformance/make_media_cases.py --check
	$(PY) tests/conformance/make_conversation_cases.py --check
	$(PY) tests/conformance/make_tool_cases.py --check
	$(PY) tests/conformance/make_mcp_cases.py --check
	$(PY) tests/conformance/make_approval_cases.py --check
	$(PY) tests/conformance/make_switch_every_api_case.py --check
	$(PY) tests/conformance/make_cancel_cases.py --check
	$(PY) tests/conformance/make_error_cases.py --check
	$(PY) tests/conformance/make_stop_cases.py --check
	$(PY) tests/conformance/make_user_media_cases.py --check
	$(PY) tests/conformance/make_spent_cases.py --check
	$(PY) tests/conformance/make_count_cases.py --check
	$(PY) tests/conformance/make_steer_cases.py --check
	$(PY) tests/conformance/make_list_cases.py --check
	$(PY) tests/conformance/run.py --jobs $(CONFORMANCE_JOBS)

# The same cases through the stepped, non-blocking path (the C, Python and Lua drivers' --async
# mode, tests/conformance/README.md): about 8 minutes on 2 cores, so not part of `make test`.
conformance-async:
	$(PY) tests/conformance/run.py --async --jobs $(CONFORMANCE_JOBS)

# Turns canceled or timed out at random instants, each followed by a full turn on the same
# agent (tests/soak/README.md): 1,000 in C, 300 in each other language and in c-stepped (the C
# driver stepping its turns, canceled from its loop's thread or another). SOAK_SEED=N replays a run.
test-soak:
	$(PY) tests/soak/cancel_soak.py --turns 300 --turns c=1000

# Sessions killed with SIGKILL at random instants mid-turn, then loaded and checked
# (tests/crash/README.md): 100 kills per language. CRASH_SEED=N replays a run.
test-crash:
	$(PY) tests/crash/crash_test.py --kills 100

# panto.temporal against a real Temporal development server on loopback (tests/durable/, docs/durable.md):
# turns as workflows, a worker killed mid-turn, 100 workflows on two workers, a cancel. Not part of
# `make test` (it starts a server and worker processes); .ci/run runs it after make test.
# The Go module libpanto-go/temporal (its own go.mod: the base module does not pull the SDK).
test-durable: build
	scripts/setup_temporal.sh
	$(PY) -m pytest -q tests/durable
	cd libpanto-go/temporal && export CGO_CFLAGS="-O2 -g -DPANTO_LIBRARY_STAMP=$$(cat ../lib/*/libpanto.a | sha256sum | cut -c1-16)" && \
		go vet ./... && go test -count=1 ./...

# Each package installed outside the tree (the README's Install section), a turn run with it
# against the emulator: tests/packaging/*.sh, one a language (PACKAGES="c zig" for some).
# Not part of `make test` (about 100 s warm, 7-10 min more after a change to libpanto: it is
# built again for glibc 2.17 and for aarch64); .ci/run runs it after make test.
packaging-test: build
	tests/packaging/run.sh $(PACKAGES)

# Not part of `make test`: the same soak, longer, in every language (SOAK_TURNS a language,
# default 5000).
soak: build
	$(PY) tests/soak/cancel_soak.py --turns $(or $(SOAK_TURNS),5000)

demo: build
	@scripts/demo.sh

# Not part of `make test`: panto against the official SDKs (bench/README.md).
bench: build
	bench/bench.sh

# The latency benchmark alone (part of `make bench`): results in build/bench/.
bench-latency: build
	bench/bench.sh --only latency

# Not part of `make test`: coverage-guided fuzzing with libFuzzer (libpanto/fuzz/README.md),
# FUZZ_SECONDS per target (default 600), FUZZ_TARGETS="sse config" for some, FUZZ_STRICT=1 to
# check the order of events too, FUZZ_JOBS=2 for two targets at once. Writes build/fuzz.json.
fuzz: setup
	$(PY) libpanto/fuzz/run.py $(if $(FUZZ_SECONDS),--seconds $(FUZZ_SECONDS)) \
		$(if $(FUZZ_TARGETS),--targets "$(FUZZ_TARGETS)") $(if $(filter 1,$(FUZZ_STRICT)),--strict) \
		$(if $(FUZZ_JOBS),--jobs $(FUZZ_JOBS))

clean:
	rm -rf zig-out .zig-cache build
