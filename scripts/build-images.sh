#!/usr/bin/env bash
# Builds paddock's sandbox images offline from Debian packages and imports
# them into the local Docker engine. No container registry is used.
#
#   scripts/build-images.sh [--force] [test|default|all]...
#
#   test     paddock/test-busybox:latest  busybox-static with every applet
#   default  paddock/debian:bookworm      debootstrap minbase + bash, git,
#                                         curl, ca-certificates, python3
#   all      both (the default)
#
# An image that already exists is skipped unless --force is given, so the
# script is cheap to run before every test run. Concurrent runs wait for each
# other. The Debian mirror is taken from the machine's apt sources; set
# PADDOCK_DEBIAN_MIRROR to override it.
set -euo pipefail

TEST_IMAGE=paddock/test-busybox:latest
DEFAULT_IMAGE=paddock/debian:bookworm
SUITE=bookworm
PATH_ENV='PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

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

# need_build IMAGE: true when IMAGE must be (re)built; then holds the build
# lock. An image another run built while we waited for the lock is kept.
need_build() {
	if [ "$force" = 1 ]; then
		lock_build
		return 0
	fi
	if ! image_exists "$1"; then
		lock_build
		image_exists "$1" || return 0
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
	need_build "$DEFAULT_IMAGE" || return 0
	command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
	local start mirror r t old
	old=$(docker image inspect -f '{{.Id}}' "$DEFAULT_IMAGE" 2>/dev/null || true)
	start=$(date +%s.%N)
	mirror=$(debian_mirror)
	new_scratch
	r="$SCRATCH/rootfs"
	log "debootstrap $SUITE from $mirror (a minute or two)"
	debootstrap --variant=minbase \
		--include=bash,coreutils,git,curl,ca-certificates,python3 \
		"$SUITE" "$r" "$mirror" >"${r%/rootfs}/debootstrap.log" 2>&1 || {
		log "debootstrap failed; the end of its log:"
		tail -n 30 "${r%/rootfs}/debootstrap.log" >&2
		return 1
	}
	t=$(elapsed "$start")
	# Leave nothing of the build host or the package cache in the image.
	chroot "$r" apt-get clean
	rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin \
		"$r"/var/log/*.log "$r"/var/log/apt/* "$r"/tmp/* "$r"/var/tmp/*
	: >"$r/etc/machine-id"
	mkdir -p "$r/workspace"
	tar --numeric-owner -C "$r" -c . |
		docker import \
			-c "ENV $PATH_ENV" \
			-c 'ENV LANG=C.UTF-8' \
			-c 'WORKDIR /workspace' \
			-c 'LABEL dev.paddock.image=debian-bookworm' \
			-c 'CMD ["/bin/bash"]' \
			- "$DEFAULT_IMAGE" >/dev/null
	drop_replaced "$old" "$DEFAULT_IMAGE"
	log "built $DEFAULT_IMAGE in $(elapsed "$start")s (debootstrap ${t}s, $(docker image inspect -f '{{.Size}}' "$DEFAULT_IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
}

elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

if [ "$want_test" = 1 ]; then build_test; fi
if [ "$want_default" = 1 ]; then build_default; fi
