#!/usr/bin/env bash
# Times a first run as a fresh machine sees it, as far as one host allows
# (docs/BENCHMARKS.md): ./scripts/up.sh in a fresh clone of this checkout's
# HEAD, against a Docker engine of its own with an empty data root (no
# images), with empty Go build and module caches and no npm tarballs, to
# the first answer of /health. The host's Debian packages and the Go
# toolchain are what is already installed; time those apart in a fresh
# root. Needs root and dockerd; the engine, the clone and the server are
# stopped and removed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
port=${PADDOCK_BENCH_PORT:-18080}
d=$(mktemp -d /tmp/paddock-first-run.XXXXXX)
cat >"$d/daemon.json" <<JSON
{"runtimes": {"runsc": {"path": "/usr/local/bin/runsc", "runtimeArgs": ["--host-uds=create", "--overlay2=none"]}}}
JSON
dockerd --host "unix://$d/docker.sock" --data-root "$d/docker" --exec-root "$d/exec" \
	--pidfile "$d/dockerd.pid" --config-file "$d/daemon.json" \
	--bridge none --iptables=false --ip6tables=false --ip-masq=false >"$d/dockerd.log" 2>&1 &
engine=$!
up=
cleanup() {
	[ -n "$up" ] && { kill -TERM -- "-$up" 2>/dev/null || true; sleep 2; kill -KILL -- "-$up" 2>/dev/null || true; }
	kill "$engine" 2>/dev/null || true
	wait "$engine" 2>/dev/null || true
	grep -F " $d/" /proc/self/mountinfo | awk '{print $5}' | sort -r | xargs -r -n1 umount 2>/dev/null || true
	rm -rf "$d"
}
trap cleanup EXIT
export DOCKER_HOST="unix://$d/docker.sock"
for _ in $(seq 1 300); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
git clone -q "$root" "$d/src"
cd "$d/src"
export GOCACHE="$d/gocache" GOMODCACHE="$d/gomod" GOFLAGS=-modcacherw PADDOCK_NPM_TARBALLS="$d/npm"
export PADDOCK_LISTEN="127.0.0.1:$port" PADDOCK_DATA_DIR="$d/data"
# The engine has no iptables of its own here, so the egress networks (and
# their firewall) are left out; the SSH gateway on a port of its own.
export PADDOCK_EGRESS_DISABLED=true PADDOCK_SSH_LISTEN=127.0.0.1:0
start=$(date +%s.%N)
setsid ./scripts/up.sh >"$d/up.log" 2>&1 &
up=$!
until curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
	if ! kill -0 "$up" 2>/dev/null; then
		echo "bench-first-run: up.sh exited before serving:" >&2
		tail -n 30 "$d/up.log" >&2
		exit 1
	fi
	sleep 0.5
done
end=$(date +%s.%N)
grep -E '^build-images: built|^built|listening' "$d/up.log" || true
awk -v s="$start" -v e="$end" 'BEGIN { printf "bench-first-run: serving %.1f s after up.sh started\n", e - s }'
