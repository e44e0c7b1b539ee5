#!/usr/bin/env bash
# Runs every paddock test against the real Docker engine, real SQLite,
# a real PostgreSQL (throwaway clusters the tests start themselves) and a
# real two-node Kubernetes cluster (scripts/kube-cluster.sh).
# Prepares the host first (scripts/setup-host.sh, which installs Docker,
# PostgreSQL and Chromium where missing), builds the sandbox images the
# tests use (scripts/build-images.sh) and the web console
# (scripts/build-console.sh, with the host's Node.js 20.19 or later, else
# the pinned one of scripts/node.sh), all idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

./scripts/setup-host.sh --kube
./scripts/build-images.sh all
# The local Kubernetes cluster: its binaries, built from the Go module
# proxy once and cached by version (minutes cold, nothing warm), then the
# cluster itself, left running for the next run (a running one is kept).
./scripts/kube-build.sh >/dev/null
./scripts/kube-cluster.sh up
# The web console, embedded in the binaries the tests build: its browser
# tests (internal/e2e/browser, in Chromium) drive it.
./scripts/build-console.sh
# The npm packages of what the SDK and compatibility tests run in Node.js
# (internal/e2e/sdks): the e2b SDK, the TypeScript SDK, an MCP client.
./scripts/js-deps.sh
# The generators the generated-code checks need (protoc from Debian, the Go
# plugins pinned in gen-proto.sh, oapi-codegen pinned in gen-openapi.sh,
# sqlc pinned in gen-sql.sh):
# only tests and code generation use them, not running paddock.
export PATH="$PATH:$(go env GOPATH)/bin"
./scripts/gen-proto.sh --tools >/dev/null
./scripts/gen-openapi.sh --tools >/dev/null
./scripts/gen-sql.sh --tools >/dev/null

# Docker, PostgreSQL, Kubernetes and the console's browser tests must not
# skip here.
export PADDOCK_REQUIRE_DOCKER=1 PADDOCK_REQUIRE_POSTGRES=1 PADDOCK_REQUIRE_CONSOLE=1 PADDOCK_REQUIRE_KUBE=1
go vet ./...
# -timeout is each package's net against a hang, not a bound on speed: the
# end-to-end package takes about 17 minutes on a 2-core machine, and one
# busier or slower than that must not fail for being so.
go test -count=1 -timeout 45m ./... "$@"
# The end-to-end tests once more on the gVisor provider (the docker provider
# with runtime runsc), so runc and gVisor pass the same suite side by side;
# the provider conformance suite already runs on both in the run above.
# The console's browser tests (./internal/e2e/browser) are not repeated:
# what they check is the console and the API, whichever runtime runs the
# sandboxes.
PADDOCK_TEST_PROVIDER=gvisor go test -count=1 -timeout 45m -skip '^TestReadme$' ./internal/e2e/ "$@"
