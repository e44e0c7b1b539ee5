#!/usr/bin/env bash
# Builds the web console (scripts/build-console.sh), then paddock, which
# embeds it, and the static paddock-shim into ./bin.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
mkdir -p bin
./scripts/build-console.sh
CGO_ENABLED=0 go build -trimpath -o bin/paddock ./cmd/paddock
CGO_ENABLED=0 go build -trimpath -o bin/paddock-shim ./cmd/paddock-shim
echo "built bin/paddock and bin/paddock-shim"
