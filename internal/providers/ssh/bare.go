package ssh

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
)

// Modes of the ssh provider (Config.Mode).
const (
	// ModeContainer runs each sandbox as a container on the machine's
	// Docker engine (the default).
	ModeContainer = "container"
	// ModeBare runs each sandbox's agent as a supervised process on the
	// machine itself, which needs nothing but sshd (see bare).
	ModeBare = "bare"
)

// CodeBareNeedsRoot: bare mode logs in as an account other than root,
// which cannot make the mount and PID namespaces a sandbox runs in.
const CodeBareNeedsRoot = "ssh_bare_needs_root"

// bareNetworks are the network policies bare mode offers: the machine's
// own network, or none (a network namespace of the sandbox's own, with
// only loopback).
var bareNetworks = []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkOpen}

// bare is the ssh provider's bare mode: a machine with sshd only. Each
// sandbox is the static paddock-shim (uploaded once per version, as in
// container mode) run on the machine as PID 1 of a PID namespace of its
// own, in a private mount namespace where the sandbox's workspace
// directory is bind-mounted on /workspace, and, for network none, in a
// network namespace of its own. The process holding those namespaces
// (unshare, whose child the agent is) is the sandbox: killing it kills the
// agent (--kill-child), and the kernel kills every process of a PID
// namespace whose init is gone. The agent serves on a unix socket in the
// sandbox's directory of the run directory, dialled through the SSH
// connection, and proves the sandbox's key as in container mode.
// Everything bare mode knows of a sandbox is on the machine (bare_state.go),
// so List and a restarted server find it there.
type bare struct {
	p       *Provider
	diskDir string
	shim    string // the local shim, uploaded
	timeout time.Duration

	mu       sync.Mutex
	shimPath string // the copy on the machine, once uploaded
	root     bool   // the account was found to be root

	wsMu sync.Mutex // a workspace's creation and removal, and its users' checks

	idMu  sync.Mutex
	idOps map[string]*sync.Mutex // a sandbox's Start and Destroy, one at a time
}

// lock takes the lock of sandbox id's Start and Destroy, and returns what
// gives it back.
func (b *bare) lock(id string) func() {
	b.idMu.Lock()
	if b.idOps == nil {
		b.idOps = map[string]*sync.Mutex{}
	}
	m, ok := b.idOps[id]
	if !ok {
		m = &sync.Mutex{}
		b.idOps[id] = m
	}
	b.idMu.Unlock()
	m.Lock()
	return m.Unlock
}

// forget drops a destroyed sandbox's lock.
func (b *bare) forget(id string) {
	b.idMu.Lock()
	delete(b.idOps, id)
	b.idMu.Unlock()
}

// prepare checks the account and uploads the shim (again when the machine
// lost it), and returns the copy's path on the machine.
func (b *bare) prepare(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.root {
		out, err := b.p.conn.Run(ctx, nil, "id", "-u")
		if err != nil {
			return "", b.machineErr("ask the account's uid", err)
		}
		if uid := strings.TrimSpace(string(out)); uid != "0" {
			return "", errdefs.FailedPrecondition(CodeBareNeedsRoot,
				"bare mode needs the machine's root account (the sandbox's namespaces and its /workspace mount need it); %s logs in as uid %s", b.p.name, uid)
		}
		b.root = true
	}
	if b.shimPath != "" {
		out, err := b.p.conn.Run(ctx, nil, "sh", "-c", `[ -x "$1" ] && echo yes || echo no`, "sh", b.shimPath)
		if err != nil {
			return "", b.machineErr("find the agent", err)
		}
		if strings.TrimSpace(string(out)) == "yes" {
			return b.shimPath, nil
		}
	}
	dst, err := docker.UploadShim(ctx, b.p.conn, b.p.runDir, b.shim)
	if err != nil {
		return "", b.machineErr("upload the agent", err)
	}
	b.shimPath = dst
	return dst, nil
}

// Create records a sandbox on the machine and makes its workspace
// directory if it is missing; nothing runs yet.
func (b *bare) Create(ctx context.Context, spec provider.Spec) (provider.Handle, error) {
	if err := provider.Validate(&spec, b.p.instance, bareNetworks); err != nil {
		return provider.Handle{}, err
	}
	if spec.Group != "" {
		return provider.Handle{}, errdefs.NotImplemented(CodeBareNoGroups, "bare mode puts no sandbox on a group's private network")
	}
	if _, err := b.prepare(ctx); err != nil {
		return provider.Handle{}, err
	}
	key, err := agentauth.NewKey()
	if err != nil {
		return provider.Handle{}, err
	}
	id := newBareID()
	rec := bareRecord{
		Labels:    provider.StandardLabels(spec, b.p.name),
		Workspace: spec.Workspace,
		Network:   string(spec.Network),
		Image:     spec.Image,
		Env:       spec.Env,
		Trust:     len(spec.TrustedCA) > 0,
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return provider.Handle{}, err
	}
	b.wsMu.Lock()
	defer b.wsMu.Unlock()
	// The directory is made last: a sandbox is there only once whole.
	_, err = b.p.conn.Run(ctx, data, "sh", "-c", `set -e
umask 022; mkdir -p -- "$3"
umask 077; mkdir -p -- "$1"; rm -rf -- "$2.new"; mkdir -- "$2.new"
cat >"$2.new/state.json"
if [ -n "$4" ]; then printf '%s\n' "$4" >"$2.new/trust.pem"; fi
mv -- "$2.new" "$2"`, "sh", path.Join(b.p.runDir, "bare"), b.dir(id), b.workspaceDir(spec.Workspace), string(spec.TrustedCA))
	if err != nil {
		return provider.Handle{}, b.machineErr("record the sandbox", err)
	}
	st, _ := json.Marshal(bareHandle{V: bareStateVersion, Key: agentauth.EncodeKey(key)})
	return provider.Handle{Provider: b.p.name, ID: id, State: st}, nil
}

// CodeBareNoGroups: a world's sandbox asked of bare mode, which has no
// private networks to put it on.
const CodeBareNoGroups = "ssh_bare_no_groups"

// Start runs the sandbox's agent and waits until it answers; a running
// sandbox is left as it is.
func (b *bare) Start(ctx context.Context, h provider.Handle) error {
	id, key, err := b.decode(h)
	if err != nil {
		return err
	}
	defer b.lock(id)()
	s, err := b.one(ctx, id)
	if err != nil {
		return err
	}
	if s.Rec.Started && s.Alive {
		return nil
	}
	if key == nil {
		return errdefs.FailedPrecondition(docker.CodeInvalidHandle, "the handle holds no agent key: the sandbox cannot be started with it")
	}
	shim, err := b.prepare(ctx)
	if err != nil {
		return err
	}
	if err := b.launch(ctx, id, shim, s.Rec, key); err != nil {
		return err
	}
	s.Rec.Started, s.Rec.StartedAt = true, time.Now().UTC()
	if err := b.writeRecord(ctx, id, s.Rec); err != nil {
		return err
	}
	return b.waitAgent(ctx, id, key)
}

// launchScript starts "$@" in a session of its own, detached from the
// SSH session (its output to the log, $1), and prints its pid, which it
// writes to the pid file ($2) with its start time (ownScript).
const launchScript = ownScript + `log=$1 pidfile=$2; shift 2
setsid "$@" </dev/null >>"$log" 2>&1 &
p=$!
echo "$p $(started "$p")" >"$pidfile"; echo "$p"`

// ownScript defines started PID, which prints the start time of a
// process that has not ended (field 22 of /proc/PID/stat, clock ticks
// since boot), and owns DIR, true while the process of DIR/pid is the
// one launchScript started there: the same pid and start time, which an
// exec keeps. Its command line is no proof: it reads empty while an exec
// loads the next program (setsid, then unshare, a moment after launch),
// and a check that read it then took a starting agent for one that had
// exited. A pid file of one field, written before the start time was
// kept, is checked by the command line, which names DIR/agent.sock.
const ownScript = `started() {
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }; set -- $s
  [ "$1" != Z ] && echo "${20}"
}
owns() {
  [ -s "$1/pid" ] || return 1
  read -r p t <"$1/pid"
  [ -n "$p" ] || return 1
  if [ -n "$t" ]; then [ "$(started "$p")" = "$t" ]; return; fi
  [ -r "/proc/$p/cmdline" ] && tr '\0' '\n' <"/proc/$p/cmdline" | grep -qxF -- "$1/agent.sock"
}
`

// innerScript runs in the sandbox's namespaces as its PID 1 before the
// agent: with network none ($1) it brings the new network namespace's
// loopback up (as a container's), it mounts the workspace ($2) on
// /workspace, made if missing, and becomes the agent ("$@" after them)
// with the environment of the file $3 (envScript), which it removes.
const innerScript = `set -e
if [ "$1" = none ]; then ip link set lo up; fi
mkdir -p /workspace; mount --bind -- "$2" /workspace; cd /workspace
envf=$3; shift 3; . "$envf"; rm -f -- "$envf"; exec "$@"`

// envScript is the file innerScript sources: it puts env -i and the
// agent's environment before the agent's command line. The environment
// (the spec's, secrets among them) is kept off the command line of the
// process that holds the sandbox's namespaces, which lives as long as
// the sandbox and which every account of the machine may read.
func envScript(env map[string]string) []byte {
	return []byte("set -- " + quoteArgs(append([]string{"env", "-i"}, bareEnv(env)...)) + " \"$@\"\n")
}

// launch writes the agent's key and starts the agent in the sandbox's
// namespaces.
func (b *bare) launch(ctx context.Context, id, shim string, rec bareRecord, key []byte) error {
	dir := b.dir(id)
	stdin := append([]byte(agentauth.EncodeKey(key)+"\n"), envScript(rec.Env)...)
	if _, err := b.p.conn.Run(ctx, stdin, "sh", "-c", `set -e; umask 077; rm -f "$1/agent.key" "$1/agent.sock" "$1/pid" "$1/env.sh"
read -r k; printf '%s\n' "$k" >"$1/agent.key"; cat >"$1/env.sh"`, "sh", dir); err != nil {
		return b.machineErr("write the agent's key and environment", err)
	}
	argv := []string{"sh", "-c", launchScript, "sh", path.Join(dir, "agent.log"), path.Join(dir, "pid"),
		"unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "--mount", "--propagation", "private"}
	if rec.Network == string(provider.NetworkNone) {
		argv = append(argv, "--net")
	}
	argv = append(argv, "--", "sh", "-c", innerScript, "sh", rec.Network, b.workspaceDir(rec.Workspace), path.Join(dir, "env.sh"),
		shim, "serve", "--socket", path.Join(dir, "agent.sock"),
		"--key-file", path.Join(dir, agentauth.KeyFileName), "--run-dir", dir)
	if rec.Trust {
		argv = append(argv, "--trust", path.Join(dir, "trust.pem"))
	}
	out, err := b.p.conn.Run(ctx, nil, argv...)
	if err != nil {
		return b.machineErr("start the agent", err)
	}
	if _, err := strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
		return fmt.Errorf("start the agent on the machine: no pid in %q", out)
	}
	return nil
}

// bareEnv is the agent's environment: a root login's, with the spec's
// over it, as env(1) takes it.
func bareEnv(env map[string]string) []string {
	all := map[string]string{
		"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME": "/root",
		"USER": "root",
	}
	maps.Copy(all, env)
	out := make([]string, 0, len(all))
	for _, k := range slices.Sorted(maps.Keys(all)) {
		out = append(out, k+"="+all[k])
	}
	return out
}

// Inspect reports the sandbox's state from the machine.
func (b *bare) Inspect(ctx context.Context, h provider.Handle) (provider.Status, error) {
	id, _, err := b.decode(h)
	if err != nil {
		return provider.Status{}, err
	}
	s, err := b.one(ctx, id)
	if err != nil {
		return provider.Status{}, err
	}
	return s.status(), nil
}

// killScript kills the process holding a sandbox's namespaces and its
// child, the agent (the PID namespace's init: the kernel kills the rest
// of the namespace with it), and waits until both are gone (or zombies
// their new parent has yet to reap).
const killScript = ownScript + `d=$1
owns "$d" || exit 0
c=$(cat "/proc/$p/task/$p/children" 2>/dev/null)
kill -KILL $c "$p" 2>/dev/null
i=0
live() { [ -n "$1" ] && [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
while owns "$d" || live "${c%% *}"; do
  i=$((i+1)); [ $i -le 200 ] || { echo "the sandbox's processes did not end" >&2; exit 1; }
  sleep 0.05
done`

// Destroy kills the sandbox's processes and removes its directory (not
// its workspace); one that is gone is no error.
func (b *bare) Destroy(ctx context.Context, h provider.Handle) error {
	id, _, err := b.decode(h)
	if err != nil {
		return err
	}
	defer b.lock(id)()
	dir := b.dir(id)
	if _, err := b.p.conn.Run(ctx, nil, "sh", "-c", killScript, "sh", dir); err != nil {
		return b.machineErr("stop the sandbox", err)
	}
	if _, err := b.p.conn.Run(ctx, nil, "rm", "-rf", "--", dir); err != nil {
		return b.machineErr("remove the sandbox's directory", err)
	}
	b.forget(id)
	return nil
}

// List returns the sandboxes on the machine that carry instance.
func (b *bare) List(ctx context.Context, instance string) ([]provider.Listed, error) {
	if instance == "" {
		return nil, errdefs.InvalidArgument(docker.CodeInvalidSpec, "an instance is required to list sandboxes")
	}
	seen, err := b.see(ctx, nil)
	if err != nil {
		return nil, err
	}
	st, _ := json.Marshal(bareHandle{V: bareStateVersion})
	var out []provider.Listed
	for _, s := range seen {
		if s.Rec.Labels[provider.LabelInstance] != instance || s.Rec.Labels[provider.LabelProvider] != b.p.name {
			continue
		}
		out = append(out, provider.Listed{
			Handle: provider.Handle{Provider: b.p.name, ID: s.ID, State: st},
			Labels: maps.Clone(s.Rec.Labels),
			Status: s.status(),
		})
	}
	return out, nil
}

// RemoveWorkspace removes a workspace directory no sandbox on the machine
// uses.
func (b *bare) RemoveWorkspace(ctx context.Context, name string) error {
	if !provider.ValidName(name, 255) {
		return errdefs.InvalidArgument(docker.CodeInvalidSpec, "workspace name %q is not valid", name)
	}
	b.wsMu.Lock()
	defer b.wsMu.Unlock()
	seen, err := b.see(ctx, nil)
	if err != nil {
		return err
	}
	for _, s := range seen {
		if s.Rec.Workspace == name {
			return errdefs.Conflict(docker.CodeWorkspaceInUse, "workspace %s is used by sandbox %s", name, s.ID)
		}
	}
	if _, err := b.p.conn.Run(ctx, nil, "rm", "-rf", "--", b.workspaceDir(name)); err != nil {
		return b.machineErr("remove the workspace", err)
	}
	return nil
}
