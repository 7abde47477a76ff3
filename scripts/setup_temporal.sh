#!/usr/bin/env bash
# The Temporal CLI, for `make test-durable`'s development server (tests/durable/): built from its Go
# module (pinned here) into build/temporal-cli/. A few minutes on 2 cores the first time; only
# `make test-durable` needs it, so `make test`'s setup (scripts/setup.sh) does not build it.
set -euo pipefail
cd "$(dirname "$0")/.."

temporal_version=v1.5.1
temporal_stamp=build/temporal-cli/.version
if [ "$(cat "$temporal_stamp" 2>/dev/null)" != "$temporal_version" ] || [ ! -x build/temporal-cli/temporal ]; then
    echo "setup: building the temporal CLI $temporal_version into build/temporal-cli (go install)"
    mkdir -p build/temporal-cli
    GOBIN="$PWD/build/temporal-cli" go install "github.com/temporalio/cli/cmd/temporal@$temporal_version"
    echo "$temporal_version" > "$temporal_stamp"
fi
