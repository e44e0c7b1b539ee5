#!/usr/bin/env bash
# Regenerates the API's Go wire types (pkg/client/wire.gen.go) from
# api/openapi.yaml, the one source of the HTTP contract.
#
#   scripts/gen-openapi.sh            regenerate in place
#   scripts/gen-openapi.sh OUTFILE    write the file to OUTFILE instead (used
#                                     by the test that checks the committed
#                                     file)
#   scripts/gen-openapi.sh --install  install the pinned generator first
#   scripts/gen-openapi.sh --tools    only install the pinned generator (CI)
#
# Tool: oapi-codegen, types only, installed with `go install` from the Go
# module proxy at the version pinned here. Its options are in
# pkg/client/oapi-codegen.yaml; the spec's x-go-* extensions name the Go
# types and fields where its defaults would differ, and its overlay,
# pkg/client/oapi-codegen-overlay.yaml, adds for the generator alone what
# only Go needs and the served document must not show. The generator reads a
# copy of the spec that internal/apigen writes with x-order on every schema
# property, numbered in the order they are written, so that the struct
# fields, and the keys of every JSON body, keep the document's order.
set -euo pipefail
cd "$(dirname "$0")/.."

OAPI_CODEGEN_VERSION=v2.8.2

tools_only=
if [ "${1:-}" = "--tools" ]; then
	tools_only=1
	set -- --install
fi
if [ "${1:-}" = "--install" ]; then
	shift
	go install "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@${OAPI_CODEGEN_VERSION}"
fi
[ -z "$tools_only" ] || exit 0

export PATH="$PATH:$(go env GOPATH)/bin"
if ! command -v oapi-codegen >/dev/null 2>&1; then
	echo "gen-openapi: oapi-codegen not found; run scripts/gen-openapi.sh --install" >&2
	exit 127
fi
if [ "$(oapi-codegen -version | tail -n 1)" != "$OAPI_CODEGEN_VERSION" ]; then
	echo "gen-openapi: oapi-codegen is not $OAPI_CODEGEN_VERSION; run scripts/gen-openapi.sh --install" >&2
	exit 1
fi

out="${1:-pkg/client/wire.gen.go}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go run ./internal/apigen api/openapi.yaml "$tmp/openapi.yaml"
oapi-codegen -config pkg/client/oapi-codegen.yaml -o "$out" "$tmp/openapi.yaml"
