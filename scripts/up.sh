#!/usr/bin/env bash
# Sets up and runs paddock on a fresh Debian 12 machine, serving as soon as
# it can:
#   1. prepares what serving needs of the host (Docker engine and image
#      tools from Debian's packages: setup-host.sh --serve-only);
#   2. builds, side by side, the default sandbox image
#      (scripts/build-images.sh default) and paddock and paddock-shim in
#      ./bin;
#   3. runs the server in the foreground. Meanwhile the rest of the host's
#      setup (gVisor's runsc for the optional gvisor provider, the clients
#      tests use) goes on in the background, logged to
#      <data-dir>/setup-host.log, and the server builds the optional images
#      (computer-use, all-harness) once it listens: `paddock image ls` (or
#      GET /api/images) shows how far each is, and a runtime that needs one
#      answers image_building until it is there.
# Extra arguments go to `paddock serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
data=${PADDOCK_DATA_DIR:-./data}

./scripts/setup-host.sh --serve-only
log=$(mktemp)
# The binaries build in a process group of their own: if the image's build
# fails, the trap ends it (go build and all).
binaries=
trap 'if [ -n "$binaries" ]; then kill -TERM -- "-$binaries" 2>/dev/null || true; fi; rm -f "$log"' EXIT
setsid ./scripts/build.sh >"$log" 2>&1 &
binaries=$!
./scripts/build-images.sh default
if ! wait "$binaries"; then
	binaries=
	echo "up: building paddock failed:" >&2
	cat "$log" >&2
	exit 1
fi
binaries=
cat "$log"
rm -f "$log"

# Not waited for: only the gvisor provider needs runsc, and its sandboxes
# answer runtime_unavailable until it is registered.
mkdir -p "$data"
setsid -f ./scripts/setup-host.sh --no-wait >>"$data/setup-host.log" 2>&1 </dev/null
echo "up: the rest of the host's setup (runsc, test clients) goes on in the background: $data/setup-host.log"

exec ./bin/paddock serve --listen "${PADDOCK_LISTEN:-127.0.0.1:8080}" --data-dir "$data" \
	--image-builder "$PWD/scripts/build-images.sh" "$@"
