#!/usr/bin/env bash
# Builds the Kubernetes binaries paddock's local test cluster runs
# (scripts/kube-cluster.sh), from the Go module proxy: no registry, no
# release download. Prints the directory that holds them.
#
#   scripts/kube-build.sh            # build what is missing, print the bin dir
#
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and
# kubectl come from k8s.io/kubernetes (a throwaway module that requires
# it, with each of its staging modules replaced by its published
# version); kube-network-policies (SIG Network's NetworkPolicy
# enforcer, the one kind runs) from sigs.k8s.io/kube-network-policies;
# the pause binary from scripts/kube/pause. etcd, containerd and the CNI
# plugins come from Debian (scripts/setup-host.sh --kube installs them).
#
# The binaries are cached under PADDOCK_KUBE_CACHE (default
# /var/cache/paddock-kube), keyed by version: a second run builds
# nothing. A cold build takes about 6 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
root=$(pwd)

KUBE_VERSION=v1.34.4
STAGING_VERSION=v0.34.4
NETPOL_VERSION=v0.8.0
cache=${PADDOCK_KUBE_CACHE:-/var/cache/paddock-kube}
bin=$cache/$KUBE_VERSION-netpol-$NETPOL_VERSION/bin
want=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kube-network-policies pause)

have_all() {
	for b in "${want[@]}"; do
		[ -x "$bin/$b" ] || return 1
	done
}
if have_all; then
	echo "$bin"
	exit 0
fi
mkdir -p "$bin"
work=$cache/build
mkdir -p "$work"

# Kubernetes itself. Its staging modules (k8s.io/api, client-go, …) are
# required at v0.0.0 and replaced by paths in its own tree; here each is
# replaced by its published version. The proxy refuses sample-cli-plugin
# and sample-controller, which nothing built here needs.
staging=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
	cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
	cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
	kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
	mount-utils pod-security-admission sample-apiserver)
k=$work/kubernetes-$KUBE_VERSION
if [ ! -f "$k/go.sum" ]; then
	mkdir -p "$k"
	{
		echo "module paddock.local/kubebuild"
		echo
		echo "go 1.24"
		echo
		echo "require k8s.io/kubernetes $KUBE_VERSION"
		echo
		for s in "${staging[@]}"; do
			echo "replace k8s.io/$s => k8s.io/$s $STAGING_VERSION"
		done
	} >"$k/go.mod"
	cat >"$k/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
	(cd "$k" && GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true)
	(cd "$k" && GOFLAGS=-mod=mod go mod tidy)
fi
# kubectl and the servers parse their own version: stamp it.
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=34 -X $p.gitTreeState=clean -X $p.buildDate=2026-01-01T00:00:00Z"
done
for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
	if [ ! -x "$bin/$b" ]; then
		echo "kube-build: building $b $KUBE_VERSION" >&2
		(cd "$k" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/$b.new" "k8s.io/kubernetes/cmd/$b")
		mv -f "$bin/$b.new" "$bin/$b"
	fi
done

# kube-network-policies, from a module of its own (its go.mod has replace
# directives, which go install @version refuses).
n=$work/netpol-$NETPOL_VERSION
if [ ! -x "$bin/kube-network-policies" ]; then
	mkdir -p "$n"
	if [ ! -f "$n/go.sum" ]; then
		printf 'module paddock.local/netpolbuild\n\ngo 1.24\n\nrequire sigs.k8s.io/kube-network-policies %s\n' "$NETPOL_VERSION" >"$n/go.mod"
		printf '//go:build tools\n\npackage tools\n\nimport _ "sigs.k8s.io/kube-network-policies/cmd"\n' >"$n/tools.go"
		(cd "$n" && GOFLAGS=-mod=mod go mod tidy)
	fi
	echo "kube-build: building kube-network-policies $NETPOL_VERSION" >&2
	(cd "$n" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/kube-network-policies.new" sigs.k8s.io/kube-network-policies/cmd)
	mv -f "$bin/kube-network-policies.new" "$bin/kube-network-policies"
fi

if [ ! -x "$bin/pause" ]; then
	(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/pause.new" ./scripts/kube/pause)
	mv -f "$bin/pause.new" "$bin/pause"
fi
have_all
echo "$bin"
