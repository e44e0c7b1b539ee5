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
# newEnough: the node on PATH is 20.19 or later.
newEnough() {
	node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=19)?0:1)' 2>/dev/null
}
# Without one (Debian 12's own nodejs is 18), the Node.js and npm that
# scripts/node.sh pins, from the npm registry, unpacked once into
# web/.node (gitignored) and checked against their pinned hashes.
if ! newEnough; then
	log() { echo "build-console: $*" >&2; }
	. ../scripts/node.sh
	dir="$PWD/.node/$NODE_VERSION"
	if [ ! -x "$dir/bin/node" ]; then
		case "$(uname -m)" in
		x86_64) arch=x64 integrity=$NODE_INTEGRITY_X64 ;;
		aarch64) arch=arm64 integrity=$NODE_INTEGRITY_ARM64 ;;
		*)
			log "no Node.js 20.19 or later here, and none is pinned for $(uname -m); install one, or set PADDOCK_SKIP_CONSOLE=1"
			exit 1
			;;
		esac
		NPM_TARBALLS=${PADDOCK_NPM_TARBALLS:-$PWD/.node/tarballs}
		tgz=$(npm_fetch "node-linux-$arch" "$NODE_VERSION" "$integrity")
		npmtgz=$(npm_fetch npm "$NPM_VERSION" "$NPM_INTEGRITY")
		rm -rf "$dir.part" && mkdir -p "$dir.part/lib/node_modules/npm"
		tar -xzf "$tgz" -C "$dir.part" --strip-components=1 --no-same-owner package/bin
		tar -xzf "$npmtgz" -C "$dir.part/lib/node_modules/npm" --strip-components=1 --no-same-owner
		ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir.part/bin/npm"
		ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$dir.part/bin/npx"
		mv "$dir.part" "$dir"
		log "using Node.js $NODE_VERSION from the npm registry (web/.node)"
	fi
	export PATH="$dir/bin:$PATH"
	newEnough || { log "Node.js $NODE_VERSION in $dir does not run"; exit 1; }
fi
# npm ci again only when the lock file changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.lock-installed; then
	npm ci --no-audit --no-fund --loglevel=error
	cp package-lock.json node_modules/.lock-installed
fi
npm run --silent build >/dev/null
echo "built the console into internal/console/dist/app"
