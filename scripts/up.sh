#!/usr/bin/env bash
# Sets up and runs paddock on a fresh Debian 12 machine, serving as soon as
# it can:
#   1. prepares the host (Docker engine and image tools from Debian's
#      packages);
#   2. builds what serving needs, side by side: the default sandbox image
#      (scripts/build-images.sh default) and paddock and paddock-shim in
#      ./bin, and the rest of the host's setup (gVisor's runsc for the
#      optional gvisor provider, the clients tests use);
#   3. runs the server in the foreground. It builds the optional images
#      (computer-use, all-harness) in the background once it listens:
#      `paddock image ls` (or GET /api/images) shows how far each is, and a
#      runtime that needs one answers image_building until it is there.
# Extra arguments go to `paddock serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

./scripts/setup-host.sh --serve-only
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
./scripts/build.sh >"$logs/binaries" 2>&1 &
binaries=$!
./scripts/setup-host.sh >"$logs/setup" 2>&1 &
setup=$!
./scripts/build-images.sh default
# finish NAME PID: waits for a job above and shows what it said.
finish() {
	if ! wait "$2"; then
		echo "up: building $1 failed:" >&2
		cat "$logs/$1" >&2
		exit 1
	fi
	cat "$logs/$1"
}
finish binaries "$binaries"
finish setup "$setup"
rm -rf "$logs"

exec ./bin/paddock serve --listen "${PADDOCK_LISTEN:-127.0.0.1:8080}" --data-dir "${PADDOCK_DATA_DIR:-./data}" \
	--image-builder "$PWD/scripts/build-images.sh" "$@"
