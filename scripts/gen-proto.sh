#!/usr/bin/env bash
# Regenerates the agent protocol's Go code (internal/agentpb) from
# api/agent/v1/*.proto, and envd's, the in-sandbox API the e2b SDKs call
# (internal/agentpb/envd/...), from api/envd/*/*.proto.
#
#   scripts/gen-proto.sh            regenerate in place
#   scripts/gen-proto.sh OUTDIR     write the tree under OUTDIR instead (used by
#                                   the test that checks the committed code)
#   scripts/gen-proto.sh --install  install the pinned generators first
#   scripts/gen-proto.sh --tools    only install the pinned generators (CI)
#
# Tools: protoc from Debian's protobuf-compiler package (with libprotobuf-dev,
# whose /usr/include holds the well-known types envd's protos import), and the Go plugins
# below, installed with `go install` from the Go module proxy at the versions
# pinned here (the same versions as the runtime libraries in go.mod).
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_CONNECT_GO_VERSION=v1.21.1

tools_only=
if [ "${1:-}" = "--tools" ]; then
	tools_only=1
	set -- --install
fi
if [ "${1:-}" = "--install" ]; then
	shift
	if ! command -v protoc >/dev/null 2>&1 || [ ! -e /usr/include/google/protobuf/timestamp.proto ]; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends protobuf-compiler libprotobuf-dev >/dev/null
	fi
	go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOC_GEN_GO_VERSION}"
	go install "connectrpc.com/connect/cmd/protoc-gen-connect-go@${PROTOC_GEN_CONNECT_GO_VERSION}"
fi
[ -z "$tools_only" ] || exit 0

export PATH="$PATH:$(go env GOPATH)/bin"
for tool in protoc protoc-gen-go protoc-gen-connect-go; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "gen-proto: $tool not found; run scripts/gen-proto.sh --install" >&2
		exit 127
	fi
done
if [ "$(protoc-gen-go --version | awk '{print $2}')" != "$PROTOC_GEN_GO_VERSION" ]; then
	echo "gen-proto: protoc-gen-go is not $PROTOC_GEN_GO_VERSION; run scripts/gen-proto.sh --install" >&2
	exit 1
fi
if [ "$(protoc-gen-connect-go --version)" != "${PROTOC_GEN_CONNECT_GO_VERSION#v}" ]; then
	echo "gen-proto: protoc-gen-connect-go is not $PROTOC_GEN_CONNECT_GO_VERSION; run scripts/gen-proto.sh --install" >&2
	exit 1
fi

out="${1:-.}"
mkdir -p "$out"
if [ "$out" = "." ]; then
	rm -f internal/agentpb/*.pb.go internal/agentpb/agentpbconnect/*.connect.go
	if [ -d internal/agentpb/envd ]; then
		find internal/agentpb/envd \( -name '*.pb.go' -o -name '*.connect.go' \) -delete
	fi
fi
shopt -s nullglob
protoc -I api \
	--go_out="$out" --go_opt=module=github.com/paddockhq/paddock \
	--connect-go_out="$out" --connect-go_opt=module=github.com/paddockhq/paddock \
	api/agent/v1/*.proto api/envd/*/*.proto
