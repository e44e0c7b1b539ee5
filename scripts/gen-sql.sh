#!/usr/bin/env bash
# Regenerates each store dialect's Go from its queries (queries/*.sql) and
# schema (migrations/*.sql) with sqlc: internal/store/postgres/pgdb and
# internal/store/sqlite/litedb.
#
#   scripts/gen-sql.sh            regenerate in place
#   scripts/gen-sql.sh OUTDIR     write the generated packages to
#                                 OUTDIR/<dialect> instead (used by the test
#                                 that checks the committed files)
#   scripts/gen-sql.sh --install  install the pinned generator first
#   scripts/gen-sql.sh --tools    only install the pinned generator (CI)
#
# Tool: sqlc, installed with `go install` from the Go module proxy at the
# version pinned here (it builds PostgreSQL's parser with cgo: gcc, about a
# minute the first time). Its options are in each dialect's sqlc.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."

SQLC_VERSION=v1.31.1

tools_only=
if [ "${1:-}" = "--tools" ]; then
	tools_only=1
	set -- --install
fi
if [ "${1:-}" = "--install" ]; then
	shift
	if [ "$(sqlc version 2>/dev/null || "$(go env GOPATH)/bin/sqlc" version 2>/dev/null || true)" != "$SQLC_VERSION" ]; then
		CGO_ENABLED=1 go install "github.com/sqlc-dev/sqlc/cmd/sqlc@${SQLC_VERSION}"
	fi
fi
[ -z "$tools_only" ] || exit 0

export PATH="$PATH:$(go env GOPATH)/bin"
if ! command -v sqlc >/dev/null 2>&1; then
	echo "gen-sql: sqlc not found; run scripts/gen-sql.sh --install" >&2
	exit 127
fi
if [ "$(sqlc version)" != "$SQLC_VERSION" ]; then
	echo "gen-sql: sqlc is not $SQLC_VERSION; run scripts/gen-sql.sh --install" >&2
	exit 1
fi

out="${1:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for dialect in postgres:pgdb sqlite:litedb; do
	src="internal/store/${dialect%%:*}"
	pkg="${dialect##*:}"
	if [ -z "$out" ]; then
		# sqlc leaves files of queries that are gone: start empty.
		rm -f "$src/$pkg"/*.go
		(cd "$src" && sqlc generate)
		continue
	fi
	# Generate in a copy, so the committed files stay as they are.
	mkdir -p "$tmp/$pkg" "$out/${dialect%%:*}"
	cp -r "$src/sqlc.yaml" "$src/queries" "$src/migrations" "$tmp/$pkg/"
	(cd "$tmp/$pkg" && sqlc generate)
	cp "$tmp/$pkg/$pkg"/*.go "$out/${dialect%%:*}/"
done
