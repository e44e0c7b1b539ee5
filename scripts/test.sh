#!/usr/bin/env bash
# Runs every paddock test against the real Docker engine and real SQLite.
# Prepares the host first (scripts/setup-host.sh) and builds the sandbox
# images the tests use (scripts/build-images.sh), both idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

./scripts/setup-host.sh
./scripts/build-images.sh all
# The generators the generated-code check needs (protoc from Debian, the Go
# plugins pinned in gen-proto.sh): only tests and code generation use them,
# not running paddock.
export PATH="$PATH:$(go env GOPATH)/bin"
./scripts/gen-proto.sh --tools >/dev/null

# Docker tests must not skip here.
export PADDOCK_REQUIRE_DOCKER=1
go vet ./...
go test -count=1 -timeout 20m ./... "$@"
