#!/usr/bin/env bash
# Builds paddock's sandbox images offline from Debian packages (and, for the
# harness CLIs, the npm registry) and imports them into the local Docker
# engine. No container registry is used.
#
#   scripts/build-images.sh [--force] [test|default|computer-use|all-harness|all|shim]...
#
#   test          paddock/test-busybox:latest   busybox-static with every
#                 applet, plus the harness stand-in (internal/harness/standin)
#                 as /usr/local/bin/{claude,codex,opencode,gemini,kimi}
#   default       paddock/debian:bookworm       mmdebstrap minbase + the agent
#                 toolchain (TOOLCHAIN below) + Node.js and npm in /usr/local
#                 (NODE_VERSION below, from the npm registry) + sudo, a
#                 link to the agent (internal/shim/sudo.go)
#   computer-use  paddock/computer-use:bookworm the default image's root
#                 filesystem + a virtual display and a browser from Debian
#                 (COMPUTER_USE_PACKAGES: Xvfb, Chromium, xdotool, xwd, fonts),
#                 what `paddock-shim computer-use serve` drives
#   all-harness   paddock/all-harness:bookworm  the computer-use image + every
#                 harness CLI, pinned exactly, from the npm registry
#                 (on the default image's Node.js):
#                   Claude Code  @anthropic-ai/claude-code@2.1.332  claude
#                   Codex        @openai/codex@0.169.0               codex
#                   OpenCode     opencode-ai@1.18.33                 opencode
#                   Gemini CLI   @google/gemini-cli@0.61.0           gemini
#                   Kimi Code    @moonshot-ai/kimi-code@2.1.0        kimi
#                 under /opt/paddock/harnesses, each run through a wrapper in
#                 /usr/local/bin
#   all           all four (the default)
#   shim          paddock/shim:VERSION         only the static agent, at
#                 /paddock-shim (VERSION: internal/version's, or
#                 PADDOCK_VERSION): the init container of a kubernetes
#                 provider's Pods copies it from there. Not in "all"; push it
#                 to a registry of your own for a cluster (README, "Running
#                 on Kubernetes").
#
#   scripts/build-images.sh --list  prints each target and its image,
#                 one "TARGET IMAGE" a line (what a server's image builder
#                 reads).
#
# While building, a line "build-images: IMAGE step N/M: WHAT" starts each
# step of an image's build, and "build-images: built IMAGE ..." ends it;
# "build-images: IMAGE is current" says it needs none.
#
# A target builds what it derives from first (all-harness needs
# computer-use, which needs default). An image that is current (its
# dev.paddock.image-version label, and for a derived image the id of the
# image it was made from) is skipped unless --force is given for that
# target, so the script is cheap to run before every test run. Concurrent
# runs wait for each other. The Debian mirror is taken from the machine's
# apt sources; set PADDOCK_DEBIAN_MIRROR to override it (and
# PADDOCK_DEBIAN_SECURITY_MIRROR for the computer-use image's security
# updates).
#
# Every image says which harness CLIs it holds in its dev.paddock.harnesses
# label: name=version pairs, comma-separated ("" or no label: none).
set -euo pipefail

TEST_IMAGE=paddock/test-busybox:latest
# Bumped when what the test image holds changes. The stand-in's source is
# followed on its own (dev.paddock.standin-hash).
TEST_IMAGE_VERSION=3
DEFAULT_IMAGE=paddock/debian:bookworm
# Bumped when what the default image holds changes: an older one is rebuilt.
DEFAULT_IMAGE_VERSION=9
COMPUTER_USE_IMAGE=paddock/computer-use:bookworm
COMPUTER_USE_IMAGE_VERSION=1
ALL_HARNESS_IMAGE=paddock/all-harness:bookworm
ALL_HARNESS_IMAGE_VERSION=4
# The shim image is tagged with paddock's version, the one a kubernetes
# provider names unless told otherwise (config.DefaultShimImage).
SHIM_REPOSITORY=paddock/shim
SUITE=bookworm
PATH_ENV='PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
# The default image's toolchain: what agent CLIs and their tool calls expect.
TOOLCHAIN=(
	python3 python3-pip python3-venv python3-wheel
	build-essential make
	git curl wget jq ripgrep unzip xz-utils procps less vim-tiny openssh-client iproute2
	ca-certificates
)
# The computer-use image's additions: a virtual display, a browser, input
# (xdotool) and screenshots (xwd, in x11-apps; xdpyinfo and xwininfo are in
# x11-utils), fonts for pages.
COMPUTER_USE_PACKAGES=(
	xvfb chromium xdotool x11-apps x11-utils xauth
	fonts-dejavu-core fonts-liberation
)
# The pinned Node.js and npm, and npm_fetch: scripts/node.sh.
. "$(dirname "${BASH_SOURCE[0]}")/node.sh"
# The all-harness image's harness CLIs: label name, then the exact npm spec.
HARNESSES=(
	claude-code @anthropic-ai/claude-code 2.1.332 claude
	codex @openai/codex 0.169.0 codex
	opencode opencode-ai 1.18.33 opencode
	gemini @google/gemini-cli 0.61.0 gemini
	kimi @moonshot-ai/kimi-code 2.1.0 kimi
)
# npm runs only these packages' install scripts: each copies its native
# binary (from the per-platform package npm picked) into place, or (Kimi)
# clears an older Python kimi off PATH. Gemini CLI's optional keychain and
# pty addons stay without theirs: it works without them.
HARNESS_INSTALL_SCRIPTS=@anthropic-ai/claude-code,opencode-ai,@moonshot-ai/kimi-code
# Kimi Code is Moonshot AI's own npm distribution (scope @moonshot-ai,
# source github.com/MoonshotAI/kimi-code), the TypeScript successor of the
# Python kimi-cli; PyPI is not reachable from our machines.
# The stand-ins the test image gets, one binary acting by argv[0].
STANDIN_NAMES=(claude codex opencode gemini kimi)
STANDIN_HARNESSES='claude-code=standin,codex=standin,opencode=standin,gemini=standin,kimi=standin'
# User installs land in the workspace (HOME is /workspace): pip falls back
# to ~/.local when the system's site-packages is read-only, npm -g goes to
# NPM_CONFIG_PREFIX, and both put their commands on this PATH.
DEFAULT_PATH_ENV='PATH=/workspace/.local/bin:/workspace/.npm-global/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
# The default image's configuration; the images derived from it keep it.
DEFAULT_CHANGES=(
	-c "ENV $DEFAULT_PATH_ENV"
	-c 'ENV LANG=C.UTF-8'
	-c 'ENV NPM_CONFIG_PREFIX=/workspace/.npm-global'
	-c 'ENV PIP_ROOT_USER_ACTION=ignore'
	-c 'ENV EDITOR=vi'
	-c 'WORKDIR /workspace'
	-c 'CMD ["/bin/bash"]'
)
REPO_ROOT=$(cd "$(dirname "$0")/.." && pwd)

usage() {
	echo "usage: $0 [--force] [test|default|computer-use|all-harness|all|shim]... | --list" >&2
	exit 2
}

log() { echo "build-images: $*" >&2; }
# step IMAGE N M WHAT: step N of M of IMAGE's build begins.
step() { log "$1 step $2/$3: $4"; }

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }
image_id() { docker image inspect -f '{{.Id}}' "$1" 2>/dev/null || true; }
image_label() { docker image inspect -f "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true; }
image_size() { docker image inspect -f '{{.Size}}' "$1" | awk '{ printf "%.0f MB", $1 / 1e6 }'; }

# lock_build takes the machine-wide build lock (one build at a time), once.
# Building needs root: chroot, mmdebstrap and apt-get.
locked=0
lock_build() {
	[ "$locked" = 1 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		log "building images must run as root (chroot, mmdebstrap and apt-get need it)"
		exit 1
	fi
	exec 9>/var/lock/paddock-build-images.lock
	flock 9
	locked=1
}

# drop_replaced OLD_ID IMAGE: after a rebuild, removes the image IMAGE used
# to name, unless a container still uses it.
drop_replaced() {
	local old=$1 new
	[ -n "$old" ] || return 0
	new=$(docker image inspect -f '{{.Id}}' "$2")
	if [ "$old" != "$new" ]; then
		docker image rm "$old" >/dev/null 2>&1 || log "kept the replaced image ${old:7:12} (still in use)"
	fi
}

# image_current IMAGE [KEY=VALUE]...: IMAGE exists and carries every label
# given with that value.
image_current() {
	local img=$1 kv
	shift
	image_exists "$img" || return 1
	for kv in "$@"; do
		[ "$(image_label "$img" "${kv%%=*}")" = "${kv#*=}" ] || return 1
	done
}

# need_build TARGET IMAGE [KEY=VALUE]...: true when IMAGE must be (re)built
# (see image_current); then holds the build lock. An image another run
# built while we waited for the lock is kept.
need_build() {
	local target=$1
	shift
	if [[ "$forced" == *" $target "* ]]; then
		forced=${forced/ $target / }
		lock_build
		return 0
	fi
	if ! image_current "$@"; then
		lock_build
		image_current "$@" || return 0
	fi
	# An image built on the way to another is skipped with fewer words.
	if [[ "$requested" == *" $target "* ]]; then
		requested=${requested/ $target / }
		log "$1 is current; skipping (use --force to rebuild)"
	else
		log "$1 is current"
	fi
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
# (mmdebstrap mounts proc and sys in its target) is unmounted first, and the
# removal never crosses into another file system. A root file system takes
# a while to delete on a busy disk: that goes on in the background, so the
# image is usable (and up.sh serves) without waiting for it.
scratch=()
build_containers=()
candidates=()
cleanup() {
	local d m c
	for c in "${build_containers[@]}"; do
		docker rm -f "$c" >/dev/null 2>&1 || true
	done
	# A candidate not promoted failed its checks (or the run stopped).
	for c in "${candidates[@]}"; do
		docker image rm "$c" >/dev/null 2>&1 || true
	done
	for d in "${scratch[@]}"; do
		[ -d "$d" ] || continue
		awk -v p="$d/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
			umount -l "$m" || true
		done
		rm -rf --one-file-system "$d" </dev/null >/dev/null 2>&1 &
	done
}
trap cleanup EXIT

# new_scratch sets SCRATCH to a new scratch directory (not in a subshell, so
# the cleanup list sees it).
new_scratch() {
	SCRATCH=$(mktemp -d /var/tmp/paddock-image.XXXXXX)
	scratch+=("$SCRATCH")
}

# An image that is checked after its import (its tools run in a container
# of it) is imported under its candidate tag and becomes IMAGE only once
# its checks pass: a failed check never leaves a broken image under a
# current version label.

# candidate IMAGE sets CANDIDATE to IMAGE's candidate tag and has the
# cleanup remove it (after a promotion there is nothing left to remove);
# not in a subshell, so the cleanup list sees it.
candidate() {
	CANDIDATE=$1-candidate
	candidates+=("$CANDIDATE")
}

# promote IMAGE OLD_ID: IMAGE's checked candidate becomes IMAGE, and the
# image IMAGE named before is dropped.
promote() {
	docker tag "$1-candidate" "$1"
	docker image rm "$1-candidate" >/dev/null
	drop_replaced "$2" "$1"
}

# check_run IMAGE CMD...: runs CMD in a container of IMAGE with no network,
# one the cleanup removes if the script is stopped meanwhile.
check_run() {
	local name
	name=paddock-build-check-$$-${#build_containers[@]}
	build_containers+=("$name")
	docker run --rm --name "$name" --network none --label dev.paddock.build=build-images "$@"
}

# debian_mirror prints the Debian archive this machine's apt uses for SUITE.
debian_mirror() {
	if [ -n "${PADDOCK_DEBIAN_MIRROR:-}" ]; then
		echo "$PADDOCK_DEBIAN_MIRROR"
		return
	fi
	local m
	m=$(apt_source_uri "$SUITE")
	echo "${m:-http://deb.debian.org/debian}"
}

# debian_security_mirror prints the archive of SUITE's security updates.
debian_security_mirror() {
	if [ -n "${PADDOCK_DEBIAN_SECURITY_MIRROR:-}" ]; then
		echo "$PADDOCK_DEBIAN_SECURITY_MIRROR"
		return
	fi
	local m
	m=$(apt_source_uri "$SUITE-security")
	[ -n "$m" ] || m=$(debian_mirror | sed -E 's#/debian/?$#/debian-security#')
	echo "$m"
}

# apt_source_uri SUITE prints the first archive the machine's apt sources
# name for SUITE, or nothing.
apt_source_uri() {
	local s=$1 m=""
	# One-line format: deb [opts] URI SUITE components...
	if [ -f /etc/apt/sources.list ] || compgen -G '/etc/apt/sources.list.d/*.list' >/dev/null; then
		m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			sed -E 's/\[[^]]*\]//' |
			awk -v s="$s" '$1 == "deb" && $3 == s { print $2; exit }')
	fi
	# deb822 format: a stanza whose Suites include SUITE.
	if [ -z "$m" ] && compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then
		m=$(awk -v s="$s" '
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
	echo "$m"
}

# standin_hash prints a short hash of the harness stand-in's source: the Go
# and embedded files of its package and of every package of this module it
# imports, and the versions of the other modules it uses.
standin_hash() {
	(
		cd "$REPO_ROOT"
		CGO_ENABLED=0 go list -deps -f '{{if not .Standard}}{{.Dir}}{{"\t"}}{{join .GoFiles " "}} {{join .EmbedFiles " "}}{{"\t"}}{{with .Module}}{{.Path}}@{{.Version}}{{end}}{{end}}' ./internal/harness/standin |
			while IFS=$'\t' read -r dir files mod; do
				[ -n "$dir" ] || continue
				if [ -n "${mod#*@}" ]; then
					echo "module $mod"
					continue
				fi
				for f in $files; do
					echo "${dir#"$REPO_ROOT"/}/$f $(sha256sum <"$dir/$f" | cut -c1-64)"
				done
			done | LC_ALL=C sort | sha256sum | cut -c1-16
	)
}

# add_sandbox_user ROOT SHELL: the account sandbox processes run as by
# default (uid and gid 1000, home /home/user, where the workspace is
# mounted too), owning /workspace and its home. Derived images inherit it.
add_sandbox_user() {
	echo "user:x:1000:1000:user:/home/user:$2" >>"$1/etc/passwd"
	echo 'user:x:1000:' >>"$1/etc/group"
	if [ -f "$1/etc/shadow" ]; then echo 'user:*:20000:0:99999:7:::' >>"$1/etc/shadow"; fi
	mkdir -p "$1/home/user" "$1/workspace"
	chown 1000:1000 "$1/home/user" "$1/workspace"
}

build_test() {
	if ! command -v go >/dev/null 2>&1; then
		log "the test image's harness stand-in is built with Go, which is not on PATH (run scripts/setup-host.sh)"
		exit 1
	fi
	local hash
	hash=$(standin_hash)
	need_build test "$TEST_IMAGE" "dev.paddock.image-version=$TEST_IMAGE_VERSION" "dev.paddock.standin-hash=$hash" || return 0
	[ -x /bin/busybox ] || apt_install busybox-static
	local start r old n
	old=$(image_id "$TEST_IMAGE")
	start=$(date +%s.%N)
	new_scratch
	r="$SCRATCH/rootfs"
	mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,proc,sys,dev,tmp,root,workspace}
	cp /bin/busybox "$r/bin/busybox"
	chroot "$r" /bin/busybox --install -s
	chmod 1777 "$r/tmp"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
	echo 'root:x:0:' >"$r/etc/group"
	add_sandbox_user "$r" /bin/sh
	# The harness stand-ins: one static binary under every CLI's name.
	(cd "$REPO_ROOT" && CGO_ENABLED=0 go build -trimpath -o "$SCRATCH/paddock-harness-standin" ./internal/harness/standin)
	install -m 0755 "$SCRATCH/paddock-harness-standin" "$r/usr/local/bin/${STANDIN_NAMES[0]}"
	for n in "${STANDIN_NAMES[@]:1}"; do
		ln "$r/usr/local/bin/${STANDIN_NAMES[0]}" "$r/usr/local/bin/$n"
	done
	tar --numeric-owner -C "$r" -c . |
		docker import \
			-c "ENV $PATH_ENV" \
			-c 'LABEL dev.paddock.image=test-busybox' \
			-c "LABEL dev.paddock.image-version=$TEST_IMAGE_VERSION" \
			-c "LABEL dev.paddock.standin-hash=$hash" \
			-c "LABEL dev.paddock.harnesses=$STANDIN_HARNESSES" \
			-c 'CMD ["/bin/sh"]' \
			- "$TEST_IMAGE" >/dev/null
	drop_replaced "$old" "$TEST_IMAGE"
	log "built $TEST_IMAGE in $(elapsed "$start")s ($(image_size "$TEST_IMAGE"))"
}

# chroot_prepare ROOT: lets apt install into ROOT (no service may start,
# the host's resolver, /proc for maintainer scripts).
chroot_prepare() {
	local r=$1
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod 0755 "$r/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$r/etc/resolv.conf"
	mount -t proc proc "$r/proc"
}

# chroot_finish ROOT: undoes chroot_prepare and leaves nothing of the
# build host, the package cache or the build's temporary files in ROOT.
chroot_finish() {
	local r=$1
	umount "$r/proc"
	rm -f "$r/usr/sbin/policy-rc.d"
	: >"$r/etc/resolv.conf"
	chroot "$r" apt-get clean
	rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin \
		"$r"/var/log/*.log "$r"/var/log/apt/* "$r"/tmp/* "$r"/var/tmp/* \
		"$r"/root/.npm "$r"/root/.cache "$r"/root/.config
	: >"$r/etc/machine-id"
}

# export_rootfs IMAGE DIR unpacks IMAGE's root filesystem into DIR, less
# what the engine adds to a container's.
export_rootfs() {
	local c
	c=$(docker create --label dev.paddock.build=build-images "$1" /bin/true)
	build_containers+=("$c")
	mkdir -p "$2"
	docker export "$c" | tar -x --numeric-owner -C "$2"
	docker rm "$c" >/dev/null
	rm -f "$2/.dockerenv"
	# The engine's empty mount points: a file for the console (it mounts a
	# terminal there) and the name files (it mounts its own over them).
	if [ -f "$2/dev/console" ]; then rm -f "$2/dev/console"; fi
	chmod 0644 "$2/etc/hostname" "$2/etc/hosts" "$2/etc/resolv.conf"
}

# apt_in ROOT LOG PACKAGE...: apt-get update and install in ROOT; on failure
# shows the end of the log.
apt_in() {
	local r=$1 logf=$2
	shift 2
	if ! { chroot "$r" apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive chroot "$r" apt-get install -y -qq --no-install-recommends "$@"; } \
		>"$logf" 2>&1; then
		log "installing $* failed; the end of the log:"
		tail -n 30 "$logf" >&2
		return 1
	fi
}

# install_node ROOT puts Node.js and npm into ROOT's /usr/local, as the
# official tarball lays them out, and checks that they run as pinned.
install_node() {
	local r=$1 node npm got arch integrity
	case "$(dpkg --print-architecture)" in
	amd64) arch=x64 integrity=$NODE_INTEGRITY_X64 ;;
	arm64) arch=arm64 integrity=$NODE_INTEGRITY_ARM64 ;;
	*)
		log "the default image's Node.js is pinned for amd64 and arm64 only, not $(dpkg --print-architecture)"
		return 1
		;;
	esac
	node=$(npm_fetch "node-linux-$arch" "$NODE_VERSION" "$integrity") || return 1
	npm=$(npm_fetch npm "$NPM_VERSION" "$NPM_INTEGRITY") || return 1
	tar -xzf "$node" -C "$r/usr/local" --strip-components=1 --no-same-owner package/bin package/include package/share
	mkdir -p "$r/usr/local/lib/node_modules/npm"
	tar -xzf "$npm" -C "$r/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
	chmod 0755 "$r"/usr/local/lib/node_modules/npm/bin/np[mx]-cli.js
	ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/local/bin/npm"
	ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$r/usr/local/bin/npx"
	got=$(chroot "$r" /usr/local/bin/node -p 'process.version + " " + (process.release.lts || "Current")')
	if [[ "$got" != "v$NODE_VERSION "* || "$got" == *" Current" || "${NODE_VERSION%%.*}" != "$NODE_LTS_MAJOR" ]]; then
		log "node-linux-$arch@$NODE_VERSION runs as \"$got\", not an LTS release of Node.js $NODE_LTS_MAJOR"
		return 1
	fi
	got=$(chroot "$r" env PATH=/usr/local/bin:/usr/bin:/bin npm --version)
	if [ "$got" != "$NPM_VERSION" ]; then
		log "npm@$NPM_VERSION runs as $got"
		return 1
	fi
}

build_default() {
	need_build default "$DEFAULT_IMAGE" "dev.paddock.image-version=$DEFAULT_IMAGE_VERSION" || return 0
	command -v mmdebstrap >/dev/null 2>&1 || apt_install mmdebstrap
	local start mirror r t old include
	old=$(image_id "$DEFAULT_IMAGE")
	start=$(date +%s.%N)
	mirror=$(debian_mirror)
	new_scratch
	r="$SCRATCH/rootfs"
	# minbase and the toolchain in one pass: mmdebstrap resolves them with
	# apt and downloads in parallel, about three times faster than
	# debootstrap and then apt-get in the new root.
	include=$(IFS=,; echo "bash,coreutils,${TOOLCHAIN[*]}")
	# Step names are shown to the API's users; the mirror (it may carry
	# credentials) only to whoever reads this script's output.
	log "the Debian mirror: $mirror"
	step "$DEFAULT_IMAGE" 1 3 "mmdebstrap $SUITE with the toolchain"
	mmdebstrap --mode=root --variant=minbase --aptopt='APT::Install-Recommends "false"' \
		--include="$include" "$SUITE" "$r" "$mirror" >"$SCRATCH/mmdebstrap.log" 2>&1 || {
		log "mmdebstrap failed; the end of its log:"
		tail -n 30 "$SCRATCH/mmdebstrap.log" >&2
		return 1
	}
	t=$(elapsed "$start")
	# No service may start in the new root.
	chroot_prepare "$r"
	step "$DEFAULT_IMAGE" 2 3 "installing Node.js $NODE_VERSION and npm $NPM_VERSION"
	install_node "$r"
	# PEP 668: the root is read-only in a sandbox, so pip cannot break the
	# system's packages; without the marker, pip install falls back to
	# ~/.local as it does for any read-only site-packages.
	rm -f "$r"/usr/lib/python3*/EXTERNALLY-MANAGED
	# With a writable root (rootfs: writable) apt runs as the sandbox's root
	# without SETUID and SETGID, so it must not switch to its _apt user.
	echo 'APT::Sandbox::User "root";' >"$r/etc/apt/apt.conf.d/99paddock-sandbox"
	chroot_finish "$r"
	mkdir -p "$r/workspace"
	add_sandbox_user "$r" /bin/bash
	# sudo is the agent's (internal/shim/sudo.go): no setuid binary gains
	# anything under no-new-privileges, so the link asks the agent, which
	# serves sudo in sandboxes whose image has it.
	ln -s /.paddock/bin/paddock-shim "$r/usr/bin/sudo"
	step "$DEFAULT_IMAGE" 3 3 "importing"
	tar --numeric-owner -C "$r" -c . |
		docker import "${DEFAULT_CHANGES[@]}" \
			-c 'LABEL dev.paddock.image=debian-bookworm' \
			-c "LABEL dev.paddock.image-version=$DEFAULT_IMAGE_VERSION" \
			-c "LABEL dev.paddock.node-version=$NODE_VERSION" \
			-c 'LABEL dev.paddock.harnesses=""' \
			- "$DEFAULT_IMAGE" >/dev/null
	drop_replaced "$old" "$DEFAULT_IMAGE"
	log "built $DEFAULT_IMAGE in $(elapsed "$start")s (mmdebstrap ${t}s, $(image_size "$DEFAULT_IMAGE"))"
}

build_computer_use() {
	build_default
	local base
	base=$(image_id "$DEFAULT_IMAGE")
	need_build computer-use "$COMPUTER_USE_IMAGE" "dev.paddock.image-version=$COMPUTER_USE_IMAGE_VERSION" "dev.paddock.base-image=$base" || return 0
	local start r old out cand
	base=$(image_id "$DEFAULT_IMAGE") # another run may have rebuilt it meanwhile
	old=$(image_id "$COMPUTER_USE_IMAGE")
	start=$(date +%s.%N)
	new_scratch
	r="$SCRATCH/rootfs"
	step "$COMPUTER_USE_IMAGE" 1 4 "unpacking $DEFAULT_IMAGE"
	export_rootfs "$base" "$r"
	# A browser gets the suite's security updates.
	echo "deb $(debian_security_mirror) $SUITE-security main" >"$r/etc/apt/sources.list.d/security.list"
	chroot_prepare "$r"
	step "$COMPUTER_USE_IMAGE" 2 4 "installing ${COMPUTER_USE_PACKAGES[*]}"
	apt_in "$r" "$SCRATCH/apt.log" "${COMPUTER_USE_PACKAGES[@]}"
	chroot_finish "$r"
	step "$COMPUTER_USE_IMAGE" 3 4 "importing"
	candidate "$COMPUTER_USE_IMAGE"
	cand=$CANDIDATE
	tar --numeric-owner -C "$r" -c . |
		docker import "${DEFAULT_CHANGES[@]}" \
			-c 'LABEL dev.paddock.image=computer-use-bookworm' \
			-c "LABEL dev.paddock.image-version=$COMPUTER_USE_IMAGE_VERSION" \
			-c "LABEL dev.paddock.base-image=$base" \
			-c 'LABEL dev.paddock.harnesses=""' \
			- "$cand" >/dev/null
	step "$COMPUTER_USE_IMAGE" 4 4 "checking its tools"
	out=$(check_run "$cand" sh -c 'for c in Xvfb chromium xdotool xwd xdpyinfo; do command -v $c >/dev/null || echo "missing $c"; done; chromium --version') || true
	case "$out" in
	Chromium*) ;;
	*)
		log "$COMPUTER_USE_IMAGE does not run its tools: $out"
		return 1
		;;
	esac
	promote "$COMPUTER_USE_IMAGE" "$old"
	log "built $COMPUTER_USE_IMAGE in $(elapsed "$start")s ($(image_size "$COMPUTER_USE_IMAGE"), $out)"
}

# harness_label prints the all-harness image's dev.paddock.harnesses label:
# name=version for each pinned CLI.
harness_label() {
	local i l=""
	for ((i = 0; i < ${#HARNESSES[@]}; i += 4)); do
		l+="${l:+,}${HARNESSES[i]}=${HARNESSES[i + 2]}"
	done
	echo "$l"
}

build_all_harness() {
	build_computer_use
	local base label
	base=$(image_id "$COMPUTER_USE_IMAGE")
	label=$(harness_label)
	need_build all-harness "$ALL_HARNESS_IMAGE" "dev.paddock.image-version=$ALL_HARNESS_IMAGE_VERSION" \
		"dev.paddock.base-image=$base" "dev.paddock.harnesses=$label" || return 0
	local start r old i name pkg ver cmd got specs=() out t v cand
	base=$(image_id "$COMPUTER_USE_IMAGE")
	old=$(image_id "$ALL_HARNESS_IMAGE")
	start=$(date +%s.%N)
	new_scratch
	r="$SCRATCH/rootfs"
	step "$ALL_HARNESS_IMAGE" 1 4 "unpacking $COMPUTER_USE_IMAGE"
	export_rootfs "$base" "$r"
	chroot_prepare "$r"
	# Everything runs inside the new root: the image's own Node.js and npm
	# (the default image's) install the CLIs with their install scripts
	# (Claude Code and OpenCode put their native binaries in place there),
	# so nothing of the host's Node.js is used.
	# npm trusts the build host's CA bundle, as the host's own clients do
	# (a host behind a TLS-inspecting proxy trusts the proxy's CA there).
	local npm_env=(env -i HOME=/root SHELL=/bin/bash TERM=dumb LANG=C.UTF-8
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		npm_config_cache=/tmp/paddock-npm/cache npm_config_update_notifier=false
		npm_config_fund=false npm_config_audit=false)
	mkdir -p "$r/tmp/paddock-npm"
	local ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
	if [ -f "$ca" ]; then
		cp "$ca" "$r/tmp/paddock-npm/host-ca.crt"
		npm_env+=(npm_config_cafile=/tmp/paddock-npm/host-ca.crt NODE_EXTRA_CA_CERTS=/tmp/paddock-npm/host-ca.crt)
	fi
	if [ -n "${PADDOCK_NPM_REGISTRY:-}" ]; then npm_env+=("npm_config_registry=$PADDOCK_NPM_REGISTRY"); fi
	for v in HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
		if [ -n "${!v:-}" ]; then npm_env+=("$v=${!v}"); fi
	done
	for ((i = 0; i < ${#HARNESSES[@]}; i += 4)); do
		specs+=("${HARNESSES[i + 1]}@${HARNESSES[i + 2]}")
	done
	t=$(date +%s.%N)
	step "$ALL_HARNESS_IMAGE" 2 4 "npm install ${specs[*]}"
	if ! chroot "$r" "${npm_env[@]}" /usr/local/bin/npm \
		install --global --prefix /opt/paddock/harnesses --loglevel=warn \
		--allow-scripts="$HARNESS_INSTALL_SCRIPTS" "${specs[@]}" >"$SCRATCH/npm-install.log" 2>&1; then
		log "installing ${specs[*]} failed; the end of the log:"
		tail -n 40 "$SCRATCH/npm-install.log" >&2
		return 1
	fi
	log "npm installed ${specs[*]} in $(elapsed "$t")s"
	mkdir -p "$r/usr/local/bin"
	for ((i = 0; i < ${#HARNESSES[@]}; i += 4)); do
		name=${HARNESSES[i]} pkg=${HARNESSES[i + 1]} ver=${HARNESSES[i + 2]} cmd=${HARNESSES[i + 3]}
		got=$(chroot "$r" jq -r .version "/opt/paddock/harnesses/lib/node_modules/$pkg/package.json")
		if [ "$got" != "$ver" ]; then
			log "$pkg: installed $got, pinned $ver"
			return 1
		fi
		[ -e "$r/opt/paddock/harnesses/bin/$cmd" ] || {
			log "$pkg installed no $cmd command"
			return 1
		}
		# Self-updates are off where a CLI lets us: the label tells which
		# versions the image holds.
		cat >"$r/usr/local/bin/$cmd" <<WRAPPER
#!/bin/sh
# $name: $pkg@$ver (paddock all-harness image), on Node.js $NODE_VERSION.
DISABLE_AUTOUPDATER=\${DISABLE_AUTOUPDATER:-1}
KIMI_CODE_NO_AUTO_UPDATE=\${KIMI_CODE_NO_AUTO_UPDATE:-1}
export DISABLE_AUTOUPDATER KIMI_CODE_NO_AUTO_UPDATE
exec /opt/paddock/harnesses/bin/$cmd "\$@"
WRAPPER
		chmod 0755 "$r/usr/local/bin/$cmd"
	done
	chroot_finish "$r"
	step "$ALL_HARNESS_IMAGE" 3 4 "importing"
	candidate "$ALL_HARNESS_IMAGE"
	cand=$CANDIDATE
	tar --numeric-owner -C "$r" -c . |
		docker import "${DEFAULT_CHANGES[@]}" \
			-c 'LABEL dev.paddock.image=all-harness-bookworm' \
			-c "LABEL dev.paddock.image-version=$ALL_HARNESS_IMAGE_VERSION" \
			-c "LABEL dev.paddock.base-image=$base" \
			-c "LABEL dev.paddock.node-version=$NODE_VERSION" \
			-c "LABEL dev.paddock.harnesses=$label" \
			- "$cand" >/dev/null
	# Every CLI answers --version in a container of the image, offline.
	local cmds=()
	step "$ALL_HARNESS_IMAGE" 4 4 "checking every CLI's --version"
	for ((i = 0; i < ${#HARNESSES[@]}; i += 4)); do cmds+=("${HARNESSES[i + 3]}"); done
	out=$(check_run "$cand" sh -c '
		for c in "$@"; do printf "%s\t%s\n" "$c" "$(timeout 60 "$c" --version </dev/null 2>&1 | head -n 3 | tr "\n" " ")"; done
	' sh "${cmds[@]}") || true
	for ((i = 0; i < ${#HARNESSES[@]}; i += 4)); do
		cmd=${HARNESSES[i + 3]} ver=${HARNESSES[i + 2]}
		got=$(awk -F'\t' -v c="$cmd" '$1 == c { print $2 }' <<<"$out")
		if [[ "$got" != *"$ver"* ]]; then
			log "$ALL_HARNESS_IMAGE: $cmd --version printed \"$got\", not $ver"
			return 1
		fi
		log "  $cmd --version: $got"
	done
	promote "$ALL_HARNESS_IMAGE" "$old"
	log "built $ALL_HARNESS_IMAGE in $(elapsed "$start")s ($(image_size "$ALL_HARNESS_IMAGE"))"
}

# paddock_version prints the version paddock is built with: PADDOCK_VERSION,
# else internal/version's default.
paddock_version() {
	if [ -n "${PADDOCK_VERSION:-}" ]; then
		echo "$PADDOCK_VERSION"
		return
	fi
	sed -n 's/^var Version = "\(.*\)"$/\1/p' "$REPO_ROOT/internal/version/version.go"
}

# build_shim makes paddock/shim:VERSION: one file, the static agent at
# /paddock-shim, imported from a tar (no base image, no registry). It is
# current while its dev.paddock.shim-hash label is the hash of the agent
# built now (the Go build cache makes that quick).
build_shim() {
	if ! command -v go >/dev/null 2>&1; then
		log "the shim image's agent is built with Go, which is not on PATH (run scripts/setup-host.sh)"
		exit 1
	fi
	local img start hash old
	img=$SHIM_REPOSITORY:$(paddock_version)
	start=$(date +%s.%N)
	new_scratch
	mkdir -p "$SCRATCH/rootfs"
	(cd "$REPO_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$(paddock_version)" \
		-o "$SCRATCH/rootfs/paddock-shim" ./cmd/paddock-shim)
	hash=$(sha256sum <"$SCRATCH/rootfs/paddock-shim" | cut -c1-16)
	need_build shim "$img" "dev.paddock.shim-hash=$hash" || return 0
	old=$(image_id "$img")
	chmod 0555 "$SCRATCH/rootfs/paddock-shim"
	tar --numeric-owner --owner=0 --group=0 -C "$SCRATCH/rootfs" -c paddock-shim |
		docker import \
			-c 'ENTRYPOINT ["/paddock-shim"]' \
			-c 'LABEL dev.paddock.image=shim' \
			-c "LABEL dev.paddock.shim-hash=$hash" \
			- "$img" >/dev/null
	drop_replaced "$old" "$img"
	log "built $img in $(elapsed "$start")s ($(image_size "$img"))"
}

elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

# main parses the command line and builds the targets named. The script
# may also be sourced (its tests call its functions): then nothing runs.
main() {
	if [ "${1:-}" = --list ]; then
		printf '%s %s\n' test "$TEST_IMAGE" default "$DEFAULT_IMAGE" \
			computer-use "$COMPUTER_USE_IMAGE" all-harness "$ALL_HARNESS_IMAGE" shim "$SHIM_REPOSITORY:$(paddock_version)"
		exit 0
	fi

	force=0
	targets=()
	for arg in "$@"; do
		case "$arg" in
		--force | -f) force=1 ;;
		test | default | computer-use | all-harness | shim) targets+=("$arg") ;;
		all) targets+=(test default computer-use all-harness) ;;
		-h | --help) usage ;;
		*)
			echo "build-images: unknown argument: $arg" >&2
			usage
			;;
		esac
	done
	if [ "${#targets[@]}" = 0 ]; then
		targets=(test default computer-use all-harness)
	fi
	# --force rebuilds the targets named, not the images they derive from.
	requested=" ${targets[*]} "
	forced=" "
	if [ "$force" = 1 ]; then forced=$requested; fi
	if ! docker info >/dev/null 2>&1; then
		log "the Docker engine is not reachable (run scripts/setup-host.sh)"
		exit 1
	fi
	for target in "${targets[@]}"; do
		case "$target" in
		test) build_test ;;
		default) build_default ;;
		computer-use) build_computer_use ;;
		all-harness) build_all_harness ;;
		shim) build_shim ;;
		esac
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
