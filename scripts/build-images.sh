#!/usr/bin/env bash
# Builds paddock's sandbox images offline from Debian packages and imports
# them into the local Docker engine. No container registry is used.
#
#   scripts/build-images.sh [--force] [test|default|all]...
#
#   test     paddock/test-busybox:latest  busybox-static with every applet
#   default  paddock/debian:bookworm      debootstrap minbase + the agent
#                                         toolchain (TOOLCHAIN below)
#   all      both (the default)
#
# An image that already exists is skipped unless --force is given, so the
# script is cheap to run before every test run. Concurrent runs wait for each
# other. The Debian mirror is taken from the machine's apt sources; set
# PADDOCK_DEBIAN_MIRROR to override it.
set -euo pipefail

TEST_IMAGE=paddock/test-busybox:latest
DEFAULT_IMAGE=paddock/debian:bookworm
# Bumped when what the default image holds changes: an older one is rebuilt.
DEFAULT_IMAGE_VERSION=5
SUITE=bookworm
PATH_ENV='PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
# The default image's toolchain: what agent CLIs and their tool calls expect.
TOOLCHAIN=(
	nodejs npm python3 python3-pip python3-venv python3-wheel
	build-essential make
	git curl wget jq ripgrep unzip xz-utils procps less vim-tiny openssh-client iproute2
	ca-certificates
)
# User installs land in the workspace (HOME is /workspace): pip falls back
# to ~/.local when the system's site-packages is read-only, npm -g goes to
# NPM_CONFIG_PREFIX, and both put their commands on this PATH.
DEFAULT_PATH_ENV='PATH=/workspace/.local/bin:/workspace/.npm-global/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

usage() {
	echo "usage: $0 [--force] [test|default|all]..." >&2
	exit 2
}

force=0
want_test=0
want_default=0
for arg in "$@"; do
	case "$arg" in
	--force | -f) force=1 ;;
	test) want_test=1 ;;
	default) want_default=1 ;;
	all)
		want_test=1
		want_default=1
		;;
	-h | --help) usage ;;
	*)
		echo "build-images: unknown argument: $arg" >&2
		usage
		;;
	esac
done
if [ "$want_test" = 0 ] && [ "$want_default" = 0 ]; then
	want_test=1
	want_default=1
fi

log() { echo "build-images: $*" >&2; }

if ! docker info >/dev/null 2>&1; then
	log "the Docker engine is not reachable (run scripts/setup-host.sh)"
	exit 1
fi

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

# lock_build takes the machine-wide build lock (one build at a time), once.
# Building needs root: chroot, debootstrap and apt-get.
locked=0
lock_build() {
	[ "$locked" = 1 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		log "building images must run as root (chroot, debootstrap and apt-get need it)"
		exit 1
	fi
	exec 9>/var/lock/paddock-build-images.lock
	flock 9
	locked=1
}

# drop_replaced OLD_ID IMAGE: after a forced rebuild, removes the image IMAGE
# used to name, unless a container still uses it.
drop_replaced() {
	local old=$1 new
	[ -n "$old" ] || return 0
	new=$(docker image inspect -f '{{.Id}}' "$2")
	if [ "$old" != "$new" ]; then
		docker image rm "$old" >/dev/null 2>&1 || log "kept the replaced image ${old:7:12} (still in use)"
	fi
}

# image_current IMAGE [VERSION]: IMAGE exists, with the version label
# VERSION when one is given.
image_current() {
	image_exists "$1" || return 1
	[ -z "${2:-}" ] && return 0
	[ "$(docker image inspect -f '{{index .Config.Labels "dev.paddock.image-version"}}' "$1")" = "$2" ]
}

# need_build IMAGE [VERSION]: true when IMAGE must be (re)built; then holds
# the build lock. An image another run built while we waited for the lock is
# kept.
need_build() {
	if [ "$force" = 1 ]; then
		lock_build
		return 0
	fi
	if ! image_current "$1" "${2:-}"; then
		lock_build
		image_current "$1" "${2:-}" || return 0
	fi
	log "$1 exists; skipping (use --force to rebuild)"
	return 1
}

apt_updated=0
apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	if [ "$apt_updated" = 0 ]; then
		apt-get update -qq
		apt_updated=1
	fi
	log "installing $*"
	apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Scratch directories are removed on exit. Anything still mounted under them
# (debootstrap mounts proc and sys in its target) is unmounted first, and the
# removal never crosses into another file system.
scratch=()
cleanup() {
	local d m
	for d in "${scratch[@]}"; do
		[ -d "$d" ] || continue
		awk -v p="$d/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
			umount -l "$m" || true
		done
		rm -rf --one-file-system "$d"
	done
}
trap cleanup EXIT

# new_scratch sets SCRATCH to a new scratch directory (not in a subshell, so
# the cleanup list sees it).
new_scratch() {
	SCRATCH=$(mktemp -d /var/tmp/paddock-image.XXXXXX)
	scratch+=("$SCRATCH")
}

# debian_mirror prints the Debian archive this machine's apt uses for SUITE.
debian_mirror() {
	if [ -n "${PADDOCK_DEBIAN_MIRROR:-}" ]; then
		echo "$PADDOCK_DEBIAN_MIRROR"
		return
	fi
	local m=""
	# One-line format: deb [opts] URI SUITE components...
	if [ -f /etc/apt/sources.list ] || compgen -G '/etc/apt/sources.list.d/*.list' >/dev/null; then
		m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			sed -E 's/\[[^]]*\]//' |
			awk -v s="$SUITE" '$1 == "deb" && $3 == s { print $2; exit }')
	fi
	# deb822 format: a stanza whose Suites include SUITE.
	if [ -z "$m" ] && compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then
		m=$(awk -v s="$SUITE" '
			function flush() {
				if (uris != "" && enabled && types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " s " ")) {
					split(uris, u, " "); print u[1]; found = 1; exit
				}
				uris = ""; suites = ""; types = ""; enabled = 1
			}
			BEGIN { enabled = 1 }
			/^[ \t]*$/ { flush(); next }
			/^#/ { next }
			tolower($1) == "uris:"    { $1 = ""; uris = $0; sub(/^ +/, "", uris) }
			tolower($1) == "suites:"  { $1 = ""; suites = $0; sub(/^ +/, "", suites) }
			tolower($1) == "types:"   { $1 = ""; types = $0; sub(/^ +/, "", types) }
			tolower($1) == "enabled:" { enabled = (tolower($2) != "no") }
			END { if (!found) flush() }
		' /etc/apt/sources.list.d/*.sources)
	fi
	echo "${m:-http://deb.debian.org/debian}"
}

build_test() {
	need_build "$TEST_IMAGE" || return 0
	[ -x /bin/busybox ] || apt_install busybox-static
	local start r old
	old=$(docker image inspect -f '{{.Id}}' "$TEST_IMAGE" 2>/dev/null || true)
	start=$(date +%s.%N)
	new_scratch
	r="$SCRATCH/rootfs"
	mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,workspace}
	cp /bin/busybox "$r/bin/busybox"
	chroot "$r" /bin/busybox --install -s
	chmod 1777 "$r/tmp"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
	echo 'root:x:0:' >"$r/etc/group"
	tar --numeric-owner -C "$r" -c . |
		docker import \
			-c "ENV $PATH_ENV" \
			-c 'LABEL dev.paddock.image=test-busybox' \
			-c 'CMD ["/bin/sh"]' \
			- "$TEST_IMAGE" >/dev/null
	drop_replaced "$old" "$TEST_IMAGE"
	log "built $TEST_IMAGE in $(elapsed "$start")s"
}

build_default() {
	need_build "$DEFAULT_IMAGE" "$DEFAULT_IMAGE_VERSION" || return 0
	command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
	local start mirror r t old
	old=$(docker image inspect -f '{{.Id}}' "$DEFAULT_IMAGE" 2>/dev/null || true)
	start=$(date +%s.%N)
	mirror=$(debian_mirror)
	new_scratch
	r="$SCRATCH/rootfs"
	log "debootstrap $SUITE from $mirror, then the toolchain (a few minutes)"
	debootstrap --variant=minbase --include=bash,coreutils \
		"$SUITE" "$r" "$mirror" >"${r%/rootfs}/debootstrap.log" 2>&1 || {
		log "debootstrap failed; the end of its log:"
		tail -n 30 "${r%/rootfs}/debootstrap.log" >&2
		return 1
	}
	t=$(elapsed "$start")
	# The toolchain, with apt inside the new root: no service may start.
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod 0755 "$r/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$r/etc/resolv.conf"
	if ! { chroot "$r" apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive chroot "$r" apt-get install -y -qq --no-install-recommends "${TOOLCHAIN[@]}"; } \
		>"${r%/rootfs}/apt.log" 2>&1; then
		log "installing the toolchain failed; the end of its log:"
		tail -n 30 "${r%/rootfs}/apt.log" >&2
		return 1
	fi
	rm -f "$r/usr/sbin/policy-rc.d"
	: >"$r/etc/resolv.conf"
	# PEP 668: the root is read-only in a sandbox, so pip cannot break the
	# system's packages; without the marker, pip install falls back to
	# ~/.local as it does for any read-only site-packages.
	rm -f "$r"/usr/lib/python3*/EXTERNALLY-MANAGED
	# With a writable root (rootfs: writable) apt runs as the sandbox's root
	# without SETUID and SETGID, so it must not switch to its _apt user.
	echo 'APT::Sandbox::User "root";' >"$r/etc/apt/apt.conf.d/99paddock-sandbox"
	# Leave nothing of the build host or the package cache in the image.
	chroot "$r" apt-get clean
	rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin \
		"$r"/var/log/*.log "$r"/var/log/apt/* "$r"/tmp/* "$r"/var/tmp/* "$r"/root/.npm
	: >"$r/etc/machine-id"
	mkdir -p "$r/workspace"
	tar --numeric-owner -C "$r" -c . |
		docker import \
			-c "ENV $DEFAULT_PATH_ENV" \
			-c 'ENV LANG=C.UTF-8' \
			-c 'ENV NPM_CONFIG_PREFIX=/workspace/.npm-global' \
			-c 'ENV PIP_ROOT_USER_ACTION=ignore' \
			-c 'ENV EDITOR=vi' \
			-c 'WORKDIR /workspace' \
			-c 'LABEL dev.paddock.image=debian-bookworm' \
			-c "LABEL dev.paddock.image-version=$DEFAULT_IMAGE_VERSION" \
			-c 'CMD ["/bin/bash"]' \
			- "$DEFAULT_IMAGE" >/dev/null
	drop_replaced "$old" "$DEFAULT_IMAGE"
	log "built $DEFAULT_IMAGE in $(elapsed "$start")s (debootstrap ${t}s, $(docker image inspect -f '{{.Size}}' "$DEFAULT_IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
}

elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

if [ "$want_test" = 1 ]; then build_test; fi
if [ "$want_default" = 1 ]; then build_default; fi
