#!/usr/bin/env bash
# Sets up and runs paddock on a fresh Debian 12 machine: prepares the host
# (Docker engine and image tools from Debian's packages), builds the sandbox
# images offline, builds paddock and paddock-shim into ./bin, then runs the
# server in the foreground. Extra arguments go to `paddock serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

./scripts/setup-host.sh
./scripts/build-images.sh all
./scripts/build.sh

exec ./bin/paddock serve --listen "${PADDOCK_LISTEN:-127.0.0.1:8080}" --data-dir "${PADDOCK_DATA_DIR:-./data}" "$@"
