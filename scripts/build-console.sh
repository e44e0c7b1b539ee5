#!/usr/bin/env bash
# Builds the web console (web/) into internal/console/dist/app, which the
# paddock binary embeds. Its packages come from the npm registry, pinned by
# web/package-lock.json (npm ci); the TypeScript types of the API are
# generated from api/openapi.yaml first. Needs Node.js 20.19 or later and
# npm (Debian's nodejs and npm where missing).
set -euo pipefail
cd "$(dirname "$0")/../web"
if ! command -v npm >/dev/null; then
	apt-get install -y nodejs npm >/dev/null
fi
# npm ci again only when the lock file changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.lock-installed; then
	npm ci --no-audit --no-fund --loglevel=error
	cp package-lock.json node_modules/.lock-installed
fi
npm run --silent build >/dev/null
echo "built the console into internal/console/dist/app"
