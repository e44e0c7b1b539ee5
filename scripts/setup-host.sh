#!/usr/bin/env bash
# Makes a Debian 12 machine ready to run and test paddock: installs what is
# missing from Debian's packages and starts the Docker engine if it is not
# running. Idempotent; fast when everything is already there.
set -euo pipefail

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
[ -x /bin/busybox ] || need+=(busybox-static)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
# Workspace disk quotas: an ext4 image per workspace, loop-mounted.
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
command -v mount >/dev/null 2>&1 || need+=(mount)
# Egress networks: firewall rules (iptables comes with docker.io) and, in
# tests, network namespaces.
command -v ip >/dev/null 2>&1 || need+=(iproute2)
if [ ${#need[@]} -gt 0 ]; then
	echo "setup-host: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
	echo "setup-host: starting dockerd"
	mkdir -p /var/log
	nohup dockerd >/var/log/paddock-dockerd.log 2>&1 &
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
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
	echo "setup-host: Go 1.26 or newer is needed (go.mod); install it at /usr/local/go" >&2
	exit 1
fi
echo "setup-host: docker $(docker version --format '{{.Server.Version}}') ready"
