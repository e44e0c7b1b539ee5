#!/usr/bin/env bash
# Builds paddock and the static paddock-shim into ./bin.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
mkdir -p bin
CGO_ENABLED=0 go build -trimpath -o bin/paddock ./cmd/paddock
CGO_ENABLED=0 go build -trimpath -o bin/paddock-shim ./cmd/paddock-shim
echo "built bin/paddock and bin/paddock-shim"
