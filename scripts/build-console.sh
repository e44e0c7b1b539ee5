#!/usr/bin/env bash
# Builds the web console (web/) into internal/console/dist/app, which the
# paddock binary embeds. Its packages come from the npm registry, pinned by
# web/package-lock.json (npm ci); the TypeScript types of the API are
# generated from api/openapi.yaml first. It needs Node.js 20.19 or later
# (Vite's floor): the one on PATH, else the pinned one of scripts/node.sh.
# PADDOCK_SKIP_CONSOLE=1 skips it: the binary then serves a page that says
# how to build the console.
set -euo pipefail
cd "$(dirname "$0")/../web"
if [ "${PADDOCK_SKIP_CONSOLE:-}" = 1 ]; then
	echo "build-console: skipped (PADDOCK_SKIP_CONSOLE=1)"
	exit 0
fi
# A Node.js 20.19 or later (Vite's floor): the host's, else the pinned one
# of scripts/node.sh, unpacked once into web/.node (gitignored).
log() { echo "build-console: $*" >&2; }
. ../scripts/node.sh
use_node "$PWD/.node" || exit 1
# npm ci again only when the lock file changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.lock-installed; then
	npm ci --no-audit --no-fund --loglevel=error
	cp package-lock.json node_modules/.lock-installed
fi
npm run --silent build >/dev/null
echo "built the console into internal/console/dist/app"
