#!/usr/bin/env bash
# Builds the web console (web/) into internal/console/dist/app, which the
# paddock binary embeds. Its packages come from the npm registry, pinned by
# web/package-lock.json (npm ci); the TypeScript types of the API are
# generated from api/openapi.yaml first. Needs Node.js 20.19 or later and
# npm (Vite's floor). PADDOCK_SKIP_CONSOLE=1 skips it: the binary then
# serves a page that says how to build the console.
set -euo pipefail
cd "$(dirname "$0")/../web"
if [ "${PADDOCK_SKIP_CONSOLE:-}" = 1 ]; then
	echo "build-console: skipped (PADDOCK_SKIP_CONSOLE=1)"
	exit 0
fi
if ! command -v npm >/dev/null && command -v apt-get >/dev/null; then
	apt-get install -y nodejs npm >/dev/null
fi
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=19)?0:1)' 2>/dev/null; then
	echo "build-console: the console needs Node.js 20.19 or later with npm (found: $(node --version 2>/dev/null || echo none))." >&2
	echo "build-console: install a newer Node.js, or set PADDOCK_SKIP_CONSOLE=1 to build paddock without its console." >&2
	exit 1
fi
# npm ci again only when the lock file changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.lock-installed; then
	npm ci --no-audit --no-fund --loglevel=error
	cp package-lock.json node_modules/.lock-installed
fi
npm run --silent build >/dev/null
echo "built the console into internal/console/dist/app"
