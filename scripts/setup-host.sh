#!/usr/bin/env bash
# Makes a Debian 12 machine ready to run and test paddock: installs what is
# missing from Debian's packages, installs gVisor's runsc and registers it
# with the Docker engine, and starts the engine if it is not running.
# Idempotent; fast when everything is already there.
#
#   scripts/setup-host.sh [--serve-only] [--kube] [--no-wait]
#
# --serve-only sets up only what serving needs, leaving out gVisor's runsc
# (only the gvisor provider needs it) and the clients tests use: up.sh
# serves sooner, running this script again once the server's own builds
# are done, for the rest.
#
# --kube adds what the local Kubernetes test cluster
# (scripts/kube-cluster.sh) takes from Debian: etcd (its etcd-server
# package) and the CNI plugins; containerd comes with docker.io.
#
# One run at a time on a machine: a run waits for the one under way, or
# with --no-wait leaves the work to it and exits 0.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
with_runsc=1 with_kube=0 wait_lock=1
for arg in "$@"; do
	case "$arg" in
	--serve-only) with_runsc=0 ;;
	--kube) with_kube=1 ;;
	--no-wait) wait_lock=0 ;;
	*)
		echo "usage: $0 [--serve-only] [--kube] [--no-wait]" >&2
		exit 2
		;;
	esac
done
exec 8>/var/lock/paddock-setup-host.lock
if [ "$wait_lock" = 1 ]; then
	flock 8
elif ! flock -n 8; then
	echo "setup-host: another run is under way; leaving the setup to it"
	exit 0
fi

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
[ -x /bin/busybox ] || need+=(busybox-static)
command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
# Workspace disk quotas: an ext4 image per workspace, loop-mounted.
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
command -v mount >/dev/null 2>&1 || need+=(mount)
# Egress networks: firewall rules (iptables comes with docker.io) and, in
# tests, network namespaces.
command -v ip >/dev/null 2>&1 || need+=(iproute2)
# Merging the runsc runtime into dockerd's daemon.json.
command -v jq >/dev/null 2>&1 || need+=(jq)
# curl fetches the pinned Node.js from the npm registry (scripts/node.sh:
# the images' own, and the web console's build where the host has no
# Node.js 20.19 or later; Debian 12's is 18). Preview URLs, the SSH gateway and the web console are
# tested with real clients: curl, the OpenSSH client (ssh, scp, sftp) and
# Debian's Chromium, headless (the console's browser tests drive it; none
# is downloaded).
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ "$with_runsc" = 1 ]; then
	command -v ssh >/dev/null 2>&1 && command -v sftp >/dev/null 2>&1 || need+=(openssh-client)
	command -v chromium >/dev/null 2>&1 || need+=(chromium)
	# The ssh provider's tests run a real sshd of their own (in the
	# network namespace of a dedicated engine); the system's is not used.
	[ -x /usr/sbin/sshd ] || need+=(openssh-server)
fi
# The README's local package index (python3 -m http.server) and its pty
# (script, in util-linux).
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v script >/dev/null 2>&1 || need+=(util-linux)
# The Python SDK (sdk/python) and its tests: httpx, pytest, and PyYAML for
# its model generator, from Debian (for Debian's python3, /usr/bin/python3).
if [ "$with_runsc" = 1 ]; then
	/usr/bin/python3 -c 'import httpx' 2>/dev/null || need+=(python3-httpx)
	/usr/bin/python3 -c 'import pytest' 2>/dev/null || need+=(python3-pytest)
	/usr/bin/python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
fi
# PostgreSQL's server binaries: tests start throwaway clusters of their own
# (internal/testenv), and scripts/postgres.sh one for trying replicas.
# Debian's package would create and start a "main" cluster on port 5432;
# createcluster.d tells it not to.
if [ "$with_runsc" = 1 ] && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
	mkdir -p /etc/postgresql-common/createcluster.d
	echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/paddock.conf
	need+=(postgresql)
fi
# The Kubernetes test cluster: etcd for its control plane, containerd for
# each node (its own instance, beside Docker's), the ptp, host-local and
# loopback CNI plugins. Debian's etcd-server would also start a system
# etcd; the cluster runs its own, on other ports.
new_etcd=0
if [ "$with_kube" = 1 ]; then
	command -v etcd >/dev/null 2>&1 || { need+=(etcd-server) && new_etcd=1; }
	command -v containerd >/dev/null 2>&1 || need+=(containerd)
	[ -x /usr/lib/cni/ptp ] || need+=(containernetworking-plugins)
	command -v nsenter >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 || need+=(util-linux)
	command -v openssl >/dev/null 2>&1 || need+=(openssl)
fi
if [ ${#need[@]} -gt 0 ]; then
	echo "setup-host: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ "$new_etcd" = 1 ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
	systemctl disable --now etcd >/dev/null 2>&1 || true
fi
if ! command -v go >/dev/null 2>&1; then
	echo "setup-host: Go 1.26 or newer is needed (go.mod); install it at /usr/local/go" >&2
	exit 1
fi

# gVisor (the "gvisor" provider: a docker provider with runtime runsc).
#
# runsc is built from gVisor's Go module at a pinned version, not taken from
# Debian's package. Debian's (0.0~20221219) has --host-uds=create, which the
# agent's socket needs to appear on the host, but its own network stack
# cannot start on this kernel (an old root-namespace test misfires), which
# leaves --network=none (no proxy or open sandboxes) or --network=host (the
# host kernel's network stack serving the sandbox, the largest part of the
# kernel gVisor exists to keep away). The current build runs gVisor's
# netstack behind Docker's bridges, so proxy and open sandboxes work under
# the same firewall rules as runc's; it has the faster systrap platform and
# three more years of fixes. It must be static (CGO_ENABLED=0): a dynamic
# runsc fails inside its own chroot. Building takes about a minute, once:
# the binary records its module version, so a re-run with the same pin
# does nothing.
RUNSC_VERSION=v0.0.0-20260905035102-160fafc42237
RUNSC=/usr/local/bin/runsc
if [ "$with_runsc" = 1 ] && ! go version -m "$RUNSC" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+gvisor.dev/gvisor[[:space:]]+$RUNSC_VERSION[[:space:]]"; then
	echo "setup-host: building runsc $RUNSC_VERSION (about a minute)"
	gobin=$(mktemp -d)
	trap 'rm -rf "$gobin"' EXIT
	(cd / && CGO_ENABLED=0 GOBIN="$gobin" go install "gvisor.dev/gvisor/runsc@$RUNSC_VERSION")
	# Replaced by a rename: running sandboxes keep the binary they started.
	install -m 0755 "$gobin/runsc" "$RUNSC.new"
	mv -f "$RUNSC.new" "$RUNSC"
fi

# The runtime as dockerd must know it, merged into daemon.json over
# whatever else is there. The flags the docker provider relies on (see
# internal/providers/docker/gvisor.go): --host-uds=create so the agent's
# socket in its bind-mounted run directory appears on the host;
# --overlay2=none so a writable root's changes land in the container's own
# layer, where snapshots (docker commit) find them. Never --platform=kvm:
# it hangs on this machine.
DAEMON_JSON=/etc/docker/daemon.json
want_runtime=$(jq -cn --arg path "$RUNSC" '{path: $path, runtimeArgs: ["--host-uds=create", "--overlay2=none"]}')
mkdir -p /etc/docker
current='{}'
[ -s "$DAEMON_JSON" ] && current=$(cat "$DAEMON_JSON")
merged=$(jq --argjson rt "$want_runtime" '.runtimes.runsc = $rt' <<<"$current") || {
	echo "setup-host: $DAEMON_JSON is not valid JSON; fix it and run again" >&2
	exit 1
}
if [ "$with_runsc" = 1 ] && [ "$merged" != "$(jq . <<<"$current")" ]; then
	echo "setup-host: registering runsc in $DAEMON_JSON"
	printf '%s\n' "$merged" >"$DAEMON_JSON.new"
	mv -f "$DAEMON_JSON.new" "$DAEMON_JSON"
fi

if ! docker info >/dev/null 2>&1; then
	echo "setup-host: starting dockerd"
	mkdir -p /var/log
	nohup dockerd >/var/log/paddock-dockerd.log 2>&1 8>&- &
	for _ in $(seq 1 100); do
		docker info >/dev/null 2>&1 && break
		sleep 0.2
	done
	if ! docker info >/dev/null 2>&1; then
		echo "setup-host: dockerd did not start; its log:" >&2
		tail -n 50 /var/log/paddock-dockerd.log >&2
		exit 1
	fi
fi

# A running engine reads runtimes again on SIGHUP, without touching its
# containers, so it is never restarted for them, whoever manages it.
registered() {
	[ "$(docker info --format '{{json .Runtimes.runsc}}' 2>/dev/null | jq -c '{path, runtimeArgs}')" = "$want_runtime" ]
}
if [ "$with_runsc" = 1 ] && ! registered; then
	pid=$(cat /var/run/docker.pid 2>/dev/null || true)
	if [ -z "$pid" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != dockerd ]; then
		echo "setup-host: cannot find the running dockerd (/var/run/docker.pid) to reload its runtimes" >&2
		exit 1
	fi
	echo "setup-host: reloading dockerd ($pid) for the runsc runtime"
	kill -HUP "$pid"
	for _ in $(seq 1 50); do
		registered && break
		sleep 0.1
	done
	if ! registered; then
		echo "setup-host: dockerd did not register runsc from $DAEMON_JSON (started with another --config-file?); it has:" >&2
		docker info --format '{{json .Runtimes}}' >&2
		exit 1
	fi
fi
echo "setup-host: docker $(docker version --format '{{.Server.Version}}') ready, with runtimes: $(docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}')"
