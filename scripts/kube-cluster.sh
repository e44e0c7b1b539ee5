#!/usr/bin/env bash
# paddock's local Kubernetes test cluster: a control plane on the host and
# two nodes, each in its own network namespace, from the binaries
# scripts/kube-build.sh builds and Debian's etcd, containerd and CNI
# plugins (scripts/setup-host.sh --kube). No registry is needed: images
# come from the Docker engine (`import`).
#
#   scripts/kube-cluster.sh up            # start (idempotent), wait until Ready
#   scripts/kube-cluster.sh down          # stop what up started, remove its network
#   scripts/kube-cluster.sh env           # KEY=VALUE lines tests read
#   scripts/kube-cluster.sh import IMG…   # copy Docker images into every node
#   scripts/kube-cluster.sh status        # what runs
#
# Layout. etcd (its own data dir, loopback ports 23790/23800),
# kube-apiserver (on HOST_ADDR:6443, an address on the host's loopback
# device that the nodes reach through their veth), kube-controller-manager
# and kube-scheduler run on the host. Node N is the network namespace
# pdk-node-N: a veth pair (pdk-node-N on the host, eth0 inside, 10.246.N.1
# and 10.246.N.2), its own containerd, the ptp CNI plugin with the pod
# CIDR 10.245.N.0/24, a kubelet and kube-network-policies (the
# NetworkPolicy enforcer). The node's daemons are started with
# nsenter --net, so they share the host's mount namespace: the kubelet's
# volume mounts are seen by containerd. The host routes each pod CIDR to
# its node; nodes reach each other through the host, for which FORWARD
# rules named paddock-kube are added (Docker's FORWARD policy is DROP).
#
# State lives under PADDOCK_KUBE_DIR (default /var/lib/paddock-kube);
# every process has a pidfile there and `down` stops only those. One
# cluster per machine: the namespaces, interfaces and addresses above are
# fixed, whatever the directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"

DIR=${PADDOCK_KUBE_DIR:-/var/lib/paddock-kube}
RUN=$DIR/run
LOG=$DIR/log
PKI=$DIR/pki
HOST_ADDR=10.246.0.1
API_PORT=6443
SERVICE_CIDR=10.247.0.0/16
NODES=(pdk-node-1 pdk-node-2)
FW_TAG=paddock-kube
# hostPath volumes ignore fsGroup: the provisioner's directories are made
# by the controller manager, run as the uid the provider's Pods use.
PV_UID=1000

node_index() { echo "${1##*-}"; }
node_ip() { echo "10.246.$(node_index "$1").2"; }
node_gw() { echo "10.246.$(node_index "$1").1"; }
pod_cidr() { echo "10.245.$(node_index "$1").0/24"; }
node_dir() { echo "$DIR/nodes/$1"; }
node_sock() { echo "$RUN/$1/containerd.sock"; }
pod_cidrs() {
	local out=() n
	for n in "${NODES[@]}"; do out+=("$(pod_cidr "$n")"); done
	(IFS=,; echo "${out[*]}")
}

log() { echo "kube-cluster: $*" >&2; }
die() {
	log "$*"
	exit 1
}

bin_dir() {
	[ -n "${KUBE_BIN:-}" ] || KUBE_BIN=$("$here/kube-build.sh")
	echo "$KUBE_BIN"
}

# --- processes, by pidfile ---------------------------------------------

# alive NAME: the process of NAME's pidfile runs, and is still the binary
# it was started as (a reused pid is not ours).
alive() {
	local pf=$RUN/$1.pid pid exe
	[ -f "$pf" ] || return 1
	read -r pid exe <"$pf" || return 1
	[ -n "$pid" ] && [ -e "/proc/$pid" ] || return 1
	[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$exe" ]
}

# launch NAME EXE CMD…: runs CMD detached unless NAME runs already; EXE
# is the binary CMD ends up executing (after nsenter, setpriv, …), which
# alive checks. Logs to $LOG/NAME.log.
launch() {
	local name=$1 exe
	exe=$(readlink -f "$2")
	shift 2
	alive "$name" && return 0
	setsid "$@" </dev/null >>"$LOG/$name.log" 2>&1 8>&- 9>&- &
	echo "$! $exe" >"$RUN/$name.pid"
}

# stop NAME…: SIGTERM to each, then SIGKILL to those still there after
# 15 s.
stop() {
	local name pid pids=()
	for name in "$@"; do
		if alive "$name"; then
			read -r pid _ <"$RUN/$name.pid"
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 1 150); do
			[ -e "/proc/$pid" ] || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	done
	for name in "$@"; do rm -f "$RUN/$name.pid"; done
}

# --- certificates, tokens, kubeconfigs -----------------------------------

pki() {
	[ -f "$PKI/done" ] && return 0
	mkdir -p "$PKI"
	local t
	t=$(mktemp -d)
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=paddock-kube-ca \
		-keyout "$PKI/ca.key" -out "$PKI/ca.crt" 2>/dev/null
	sign apiserver "/CN=kube-apiserver" \
		"subjectAltName=IP:$HOST_ADDR,IP:127.0.0.1,IP:${SERVICE_CIDR%.0/16}.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
	sign kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
	openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	# Static tokens: token,user,uid,"groups".
	{
		echo "$(openssl rand -hex 24),paddock-admin,paddock-admin,\"system:masters\""
		echo "$(openssl rand -hex 24),system:kube-controller-manager,system:kube-controller-manager"
		echo "$(openssl rand -hex 24),system:kube-scheduler,system:kube-scheduler"
		echo "$(openssl rand -hex 24),paddock:kube-network-policies,paddock:kube-network-policies"
		for n in "${NODES[@]}"; do
			echo "$(openssl rand -hex 24),system:node:$n,system:node:$n,\"system:nodes\""
		done
	} >"$PKI/tokens.csv"
	chmod 0600 "$PKI"/*.key "$PKI/tokens.csv"
	rm -rf "$t"
	touch "$PKI/done"
}

# sign NAME SUBJECT EXT: a key and a certificate signed by the CA.
sign() {
	local ext
	ext=$(mktemp)
	printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n%s\n' "$3" >"$ext"
	openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$PKI/$1.key" -out "$PKI/$1.csr" 2>/dev/null
	openssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 3650 -extfile "$ext" -out "$PKI/$1.crt" 2>/dev/null
	rm -f "$ext" "$PKI/$1.csr"
}

token_of() { awk -F, -v u="$1" '$2 == u { print $1 }' "$PKI/tokens.csv"; }

# kubeconfig USER FILE: a kubeconfig for USER's static token.
kubeconfig() {
	cat >"$2" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: paddock
  cluster:
    server: https://$HOST_ADDR:$API_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: user
  user:
    token: $(token_of "$1")
contexts:
- name: paddock
  context: {cluster: paddock, user: user}
current-context: paddock
EOF
	chmod 0600 "$2"
}

# --- network ---------------------------------------------------------------

fw_rule() { echo "FORWARD -i pdk-node-+ -o pdk-node-+ -m comment --comment $FW_TAG -j ACCEPT"; }

# The first packet of every connection a node forwards (to, from or
# between its Pods) goes to kube-network-policies' queue, which accepts or
# drops it by the NetworkPolicies. Its own nftables table cannot load
# here: the kernel lacks nftables' queue expression (nft_queue: `nft add
# rule … queue num 100` fails with ENOENT), while the xtables NFQUEUE
# target, through nft_compat, works. No bypass: with the enforcer down, a
# node's Pods get no new connections (never silently open).
queue_rule() { echo "FORWARD -m conntrack --ctstate NEW -m comment --comment $FW_TAG-netpol -j NFQUEUE --queue-num 100"; }

network_up() {
	# (No `| grep -q` under pipefail: the writer's SIGPIPE fails the test.)
	[[ $(ip -4 addr show dev lo) == *"inet $HOST_ADDR/32 "* ]] || ip addr add "$HOST_ADDR/32" dev lo
	local n ip gw
	for n in "${NODES[@]}"; do
		ip=$(node_ip "$n")
		gw=$(node_gw "$n")
		[ -e "/run/netns/$n" ] || ip netns add "$n"
		if ! ip link show "$n" >/dev/null 2>&1; then
			ip link add "$n" type veth peer name eth0 netns "$n"
			ip addr add "$gw/30" dev "$n"
			ip link set "$n" up
			ip -n "$n" addr add "$ip/30" dev eth0
			ip -n "$n" link set eth0 up
			ip -n "$n" link set lo up
			ip -n "$n" route add default via "$gw"
		fi
		ip netns exec "$n" sysctl -qw net.ipv4.ip_forward=1
		# shellcheck disable=SC2046
		ip netns exec "$n" iptables -C $(queue_rule) 2>/dev/null || ip netns exec "$n" iptables -A $(queue_rule)
		ip route replace "$(pod_cidr "$n")" via "$ip" dev "$n"
	done
	sysctl -qw net.ipv4.ip_forward=1
	# shellcheck disable=SC2046
	iptables -C $(fw_rule) 2>/dev/null || iptables -I $(fw_rule)
}

network_down() {
	local n
	# shellcheck disable=SC2046
	while iptables -C $(fw_rule) 2>/dev/null; do iptables -D $(fw_rule); done
	for n in "${NODES[@]}"; do
		ip route del "$(pod_cidr "$n")" 2>/dev/null || true
		ip link del "$n" 2>/dev/null || true
		[ -e "/run/netns/$n" ] && ip netns del "$n"
	done
	ip addr del "$HOST_ADDR/32" dev lo 2>/dev/null || true
}

# --- control plane -------------------------------------------------------

control_plane() {
	local b
	b=$(bin_dir)
	mkdir -p "$DIR/etcd"
	chmod 0700 "$DIR/etcd"
	launch etcd /usr/bin/etcd /usr/bin/etcd --name pdk --data-dir "$DIR/etcd" \
		--listen-client-urls http://127.0.0.1:23790 --advertise-client-urls http://127.0.0.1:23790 \
		--listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
		--initial-cluster pdk=http://127.0.0.1:23800 --listen-metrics-urls ''
	launch kube-apiserver "$b/kube-apiserver" "$b/kube-apiserver" \
		--etcd-servers=http://127.0.0.1:23790 \
		--bind-address="$HOST_ADDR" --advertise-address="$HOST_ADDR" --secure-port="$API_PORT" \
		--tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
		--client-ca-file="$PKI/ca.crt" --token-auth-file="$PKI/tokens.csv" \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--allow-privileged=true --service-cluster-ip-range="$SERVICE_CIDR" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
		--kubelet-client-certificate="$PKI/kubelet-client.crt" --kubelet-client-key="$PKI/kubelet-client.key" \
		--kubelet-preferred-address-types=InternalIP --profiling=false \
		--cert-dir="$DIR/apiserver"
}

# controllers: the controller manager (as PV_UID, see above; it reads
# only its kubeconfig and the CA) and the scheduler.
controllers() {
	local b
	b=$(bin_dir)
	mkdir -p /tmp/hostpath_pv
	chown "$PV_UID:$PV_UID" /tmp/hostpath_pv "$DIR/controller-manager.kubeconfig"
	launch kube-controller-manager "$b/kube-controller-manager" \
		setpriv --reuid="$PV_UID" --regid="$PV_UID" --clear-groups -- "$b/kube-controller-manager" \
		--kubeconfig="$DIR/controller-manager.kubeconfig" --use-service-account-credentials=true \
		--root-ca-file="$PKI/ca.crt" --service-cluster-ip-range="$SERVICE_CIDR" \
		--enable-hostpath-provisioner=true --leader-elect=false --secure-port=0
	launch kube-scheduler "$b/kube-scheduler" "$b/kube-scheduler" \
		--kubeconfig="$DIR/scheduler.kubeconfig" --leader-elect=false --secure-port=0
}

kubectl_() { "$(bin_dir)/kubectl" --kubeconfig="$DIR/admin.kubeconfig" "$@"; }

# wait_for WHAT SECONDS CMD…: polls CMD until it succeeds.
wait_for() {
	local what=$1 secs=$2 i
	shift 2
	for ((i = 0; i < secs * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	die "$what not ready after ${secs}s (logs in $LOG)"
}

# --- nodes -----------------------------------------------------------------

# hierarchies: the cgroup hierarchies' roots, each ending in /: every v1
# hierarchy, or the one unified (v2) root, never a group inside one (on
# v2, /sys/fs/cgroup/*/ are the groups of the host's services and of its
# Docker engine).
hierarchies() {
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo /sys/fs/cgroup/
		return
	fi
	local h
	for h in /sys/fs/cgroup/*/; do
		[ -f "$h/cgroup.procs" ] && echo "$h"
	done
}

# cgroup_root NODE: the node's kubelet's cgroupRoot in every cgroup
# hierarchy (a v1 cpuset needs its parent's cpus and mems).
cgroup_root() {
	local h
	for h in $(hierarchies); do
		mkdir -p "$h$1"
		if [ -f "$h/cpuset.cpus" ] && [ -z "$(cat "$h$1/cpuset.cpus")" ]; then
			cat "$h/cpuset.cpus" >"$h$1/cpuset.cpus"
			cat "$h/cpuset.mems" >"$h$1/cpuset.mems"
		fi
	done
}

node_config() {
	local n=$1 d
	d=$(node_dir "$n")
	mkdir -p "$d/cni" "$d/kubelet" "$d/pod-logs" "$d/ipam" "$RUN/$n"
	cat >"$d/containerd.toml" <<EOT
version = 2
root = "$d/containerd"
state = "$RUN/$n/containerd"
[grpc]
  address = "$(node_sock "$n")"
[ttrpc]
  address = "$(node_sock "$n").ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni"
EOT
	# Routed, not bridged: each Pod gets a veth to the node and a /32 route.
	cat >"$d/cni/10-paddock.conflist" <<EOT
{"cniVersion": "0.4.0", "name": "paddock", "plugins": [
  {"type": "ptp", "ipMasq": false, "mtu": 1500,
   "ipam": {"type": "host-local", "dataDir": "$d/ipam",
            "ranges": [[{"subnet": "$(pod_cidr "$n")"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOT
	cat >"$d/kubelet.yaml" <<EOT
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_ip "$n")
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
cgroupRoot: /$n
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$(node_sock "$n")
podLogsDir: $d/pod-logs
podPidsLimit: 1024
maxPods: 250
serializeImagePulls: false
# The host's disk is shared and often nearly full: no eviction or image
# garbage collection for disk usage (images come only from import).
evictionHard: {memory.available: 100Mi, nodefs.available: 100Mi, imagefs.available: 100Mi}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
EOT
	kubeconfig "system:node:$n" "$d/kubeconfig"
	kubeconfig paddock:kube-network-policies "$d/netpol.kubeconfig"
	token_of paddock:kube-network-policies >"$d/netpol.token"
	chmod 0600 "$d/netpol.token"
}

containerd_up() {
	local n=$1
	launch "$n-containerd" /usr/bin/containerd \
		nsenter "--net=/run/netns/$n" /usr/bin/containerd --config "$(node_dir "$n")/containerd.toml"
}

ctr_() {
	local n=$1
	shift
	ctr -n k8s.io -a "$(node_sock "$n")" "$@"
}

# kubelet_up NODE: the kubelet, and kube-network-policies. The latter
# takes only an in-cluster config: it runs in a mount namespace of its
# own where /run holds the service-account files it reads.
kubelet_up() {
	local n=$1 b d
	b=$(bin_dir)
	d=$(node_dir "$n")
	cgroup_root "$n"
	launch "$n-kubelet" "$b/kubelet" nsenter "--net=/run/netns/$n" "$b/kubelet" \
		--config="$d/kubelet.yaml" --kubeconfig="$d/kubeconfig" --root-dir="$d/kubelet" \
		--hostname-override="$n" --node-ip="$(node_ip "$n")"
	launch "$n-netpol" "$b/kube-network-policies" \
		env KUBERNETES_SERVICE_HOST="$HOST_ADDR" KUBERNETES_SERVICE_PORT="$API_PORT" \
		nsenter "--net=/run/netns/$n" unshare --mount --propagation private -- sh -c '
			set -e
			mount -t tmpfs -o size=1m,mode=0755 paddock-kube /run
			s=/run/secrets/kubernetes.io/serviceaccount
			mkdir -p $s
			cp "$1" $s/token
			cp "$2" $s/ca.crt
			shift 2
			exec "$@"' sh "$d/netpol.token" "$PKI/ca.crt" \
		"$b/kube-network-policies" --hostname-override="$n" --disable-nri \
		--metrics-bind-address=127.0.0.1:9080
}

# pause_image: the sandbox image, made from the pause binary, named by
# its hash.
pause_image() {
	local b sum t
	b=$(bin_dir)
	sum=$(sha256sum "$b/pause" | cut -c1-12)
	PAUSE_IMAGE=paddock.local/kube-pause:$sum
	docker image inspect "$PAUSE_IMAGE" >/dev/null 2>&1 && return 0
	t=$(mktemp -d)
	cp "$b/pause" "$t/pause"
	tar -C "$t" -cf - pause | docker import --change 'ENTRYPOINT ["/pause"]' - "$PAUSE_IMAGE" >/dev/null
	rm -rf "$t"
}

# --- images ----------------------------------------------------------------

# ref IMG: the name containerd gives a Docker image name.
ref() {
	local img=$1 first=${1%%/*}
	if [[ $img != */* ]]; then
		img=docker.io/library/$img
	elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
		img=docker.io/$img
	fi
	[[ ${img##*/} == *[:@]* ]] || img=$img:latest
	echo "$img"
}

# import IMG…: each Docker image into every node's containerd, unless the
# node has it already (by Docker image id, kept as a label).
import_images() {
	local img id r n tar need
	exec 9>"$DIR/import.lock"
	flock 9
	for img in "$@"; do
		id=$(docker image inspect -f '{{.Id}}' "$img") || die "no Docker image $img"
		r=$(ref "$img")
		need=()
		for n in "${NODES[@]}"; do
			[[ $(ctr_ "$n" images ls "name==$r") == *"dev.paddock.docker-id=$id"* ]] || need+=("$n")
		done
		[ ${#need[@]} -gt 0 ] || continue
		tar=$DIR/import.tar
		docker save "$img" >"$tar"
		for n in "${need[@]}"; do
			ctr_ "$n" images import --no-unpack=false "$tar" >/dev/null
			ctr_ "$n" images label "$r" "dev.paddock.docker-id=$id" >/dev/null
		done
		rm -f "$tar"
	done
	exec 9>&-
}

# --- commands --------------------------------------------------------------

check_host() {
	local x
	for x in etcd containerd ctr ip iptables nsenter unshare setpriv openssl docker; do
		command -v "$x" >/dev/null || die "$x missing: run scripts/setup-host.sh --kube"
	done
	[ -x /usr/lib/cni/ptp ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] ||
		die "CNI plugins missing: run scripts/setup-host.sh --kube"
}

# node_ready NODE: Ready, as reported by the kubelet that runs now (a
# stopped cluster's nodes keep their last status for a while).
node_ready() {
	local st hb
	read -r st hb < <(kubectl_ get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}')
	[ "$st" = True ] && [ "$(date -d "$hb" +%s)" -ge "$(stat -c %Y "$RUN/$1-kubelet.pid")" ]
}

cmd_up() {
	check_host
	mkdir -p "$RUN" "$LOG"
	exec 8>"$DIR/up.lock"
	flock 8
	local n start=$SECONDS
	pki
	kubeconfig paddock-admin "$DIR/admin.kubeconfig"
	kubeconfig system:kube-controller-manager "$DIR/controller-manager.kubeconfig"
	kubeconfig system:kube-scheduler "$DIR/scheduler.kubeconfig"
	pause_image
	network_up
	control_plane
	for n in "${NODES[@]}"; do
		node_config "$n"
		containerd_up "$n"
	done
	wait_for kube-apiserver 60 kubectl_ get --raw /readyz
	kubectl_ apply -f "$here/kube/cluster.yaml" >/dev/null
	controllers
	for n in "${NODES[@]}"; do
		wait_for "$n containerd" 30 ctr_ "$n" version
	done
	import_images "$PAUSE_IMAGE"
	for n in "${NODES[@]}"; do
		kubelet_up "$n"
	done
	for n in "${NODES[@]}"; do
		wait_for "node $n" 120 node_ready "$n"
	done
	wait_for "the default service account" 60 kubectl_ -n default get serviceaccount default
	log "up in $((SECONDS - start))s: $(IFS=,; echo "${NODES[*]}") Ready, API at https://$HOST_ADDR:$API_PORT"
}

# kill_pods NODE: every container of the node's containerd, so that
# nothing it started outlives it.
kill_pods() {
	local n=$1 id
	alive "$n-containerd" || return 0
	for id in $(ctr_ "$n" tasks ls -q 2>/dev/null); do
		ctr_ "$n" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
	done
	for id in $(ctr_ "$n" tasks ls -q 2>/dev/null); do
		ctr_ "$n" tasks delete -f "$id" >/dev/null 2>&1 || true
	done
	for id in $(ctr_ "$n" containers ls -q 2>/dev/null); do
		ctr_ "$n" containers rm "$id" >/dev/null 2>&1 || true
	done
}

# unmount_under DIR: what the kubelet and containerd mounted below DIR.
unmount_under() {
	local m
	findmnt -rn -o TARGET | awk -v p="$1/" 'index($0, p) == 1' | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done
}

# remove_cgroups NODE: the node's cgroup tree, deepest first.
remove_cgroups() {
	local h
	for h in $(hierarchies); do
		[ -d "$h$1" ] || continue
		find "$h$1" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
}

cmd_down() {
	mkdir -p "$RUN"
	exec 8>"$DIR/up.lock"
	flock 8
	local n
	stop "${NODES[@]/%/-kubelet}" "${NODES[@]/%/-netpol}"
	for n in "${NODES[@]}"; do
		kill_pods "$n"
	done
	stop "${NODES[@]/%/-containerd}"
	for n in "${NODES[@]}"; do
		rm -rf "$(node_dir "$n")/ipam"
		remove_cgroups "$n"
	done
	stop kube-scheduler kube-controller-manager
	stop kube-apiserver
	stop etcd
	unmount_under "$DIR"
	network_down
	log "down"
}

cmd_env() {
	cat <<EOF
PADDOCK_KUBECONFIG=$DIR/admin.kubeconfig
PADDOCK_KUBE_HOST_ADDR=$HOST_ADDR
PADDOCK_KUBE_NODES=$(IFS=,; echo "${NODES[*]}")
PADDOCK_KUBE_STORAGE_CLASS=paddock-hostpath
PADDOCK_KUBE_RUNTIME_CLASS=paddock-runc
PADDOCK_KUBE_POD_CIDRS=$(pod_cidrs)
PADDOCK_KUBE_BIN=$(bin_dir)
EOF
}

cmd_status() {
	local p rc=0
	for p in etcd kube-apiserver kube-controller-manager kube-scheduler \
		"${NODES[@]/%/-containerd}" "${NODES[@]/%/-kubelet}" "${NODES[@]/%/-netpol}"; do
		if alive "$p"; then
			echo "$p: running (pid $(cut -d' ' -f1 "$RUN/$p.pid"))"
		else
			echo "$p: stopped"
			rc=1
		fi
	done
	[ $rc = 0 ] && kubectl_ get nodes -o wide
	return $rc
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
env) cmd_env ;;
status) cmd_status ;;
import)
	shift
	[ $# -gt 0 ] || die "usage: $0 import IMAGE…"
	import_images "$@"
	;;
*)
	echo "usage: $0 up|down|env|status|import IMAGE…" >&2
	exit 2
	;;
esac
