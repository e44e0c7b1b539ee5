#!/usr/bin/env bash
# Installs the npm packages of the JavaScript projects the tests run
# (npm ci, pinned by each one's package-lock.json; again only when its lock
# file changed): the e2b SDK's compatibility tests, the TypeScript SDK and
# the MCP client the MCP tests drive. It needs Node.js 20.19 or later: the
# one on PATH, else the pinned one of scripts/node.sh (in web/.node, shared
# with the console's build; testenv.NodeBin finds it).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "js-deps: $*" >&2; }
. scripts/node.sh
use_node "$PWD/web/.node" || exit 1
# The projects, one directory each (a package.json and its lock file).
PROJECTS=(
	internal/e2e/sdks/e2b
	sdk/typescript
	internal/e2e/sdks/mcpclient
)
for p in "${PROJECTS[@]}"; do
	if [ ! -f "$p/node_modules/.package-lock.json" ] || ! cmp -s "$p/package-lock.json" "$p/node_modules/.lock-installed"; then
		(cd "$p" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.lock-installed)
	fi
done
echo "js-deps: installed ${#PROJECTS[@]} projects' packages"
