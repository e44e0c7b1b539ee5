package ssh

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
)

// A bare sandbox on the machine is a directory of the run directory,
// <run_dir>/bare/<id>, holding:
//
//   - state.json, the sandbox's record (bareRecord): its labels, its
//     workspace, its network policy, its environment, and whether it was
//     started;
//   - pid, the process that holds its namespaces (unshare), once started;
//   - agent.sock, the agent's socket; agent.key, the agent's key until the
//     agent takes it; trust.pem, the CA it trusts; agent.log, what the
//     agent wrote.
//
// Its workspace is the directory <disk_dir>/bare/<workspace>.

// bareStateVersion is the version of bareHandle's encoding.
const bareStateVersion = 1

// bareHandle is the recovery state in a bare sandbox's provider.Handle.
type bareHandle struct {
	V int `json:"v"`
	// Key is the agent's key (hex); a listed handle has none (the key is
	// never kept on the machine), so its agent cannot be dialled.
	Key string `json:"key,omitempty"`
}

// bareRecord is a bare sandbox's state.json.
type bareRecord struct {
	Labels    map[string]string `json:"labels"`
	Workspace string            `json:"workspace"`
	Network   string            `json:"network"`
	Image     string            `json:"image"`
	Env       map[string]string `json:"env,omitempty"`
	Trust     bool              `json:"trust,omitempty"`
	Started   bool              `json:"started"`
	StartedAt time.Time         `json:"started_at"`
}

// bareSeen is a sandbox as the machine shows it: its record, and whether
// the process holding its namespaces lives.
type bareSeen struct {
	ID    string
	Rec   bareRecord
	Alive bool
}

func (s bareSeen) status() provider.Status {
	if s.Rec.Started && s.Alive {
		return provider.Status{State: provider.StateRunning, StartedAt: s.Rec.StartedAt}
	}
	st := provider.Status{State: provider.StateStopped, StartedAt: s.Rec.StartedAt}
	if s.Rec.Started {
		st.Error = "the sandbox's agent exited"
	}
	return st
}

var bareID = regexp.MustCompile(`^[0-9a-f]{32}$`)

func newBareID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// decode checks h and returns its id and agent key (nil for a listed
// handle).
func (b *bare) decode(h provider.Handle) (string, []byte, error) {
	bad := func(format string, args ...any) (string, []byte, error) {
		return "", nil, errdefs.InvalidArgument(docker.CodeInvalidHandle, format, args...)
	}
	if h.Provider != b.p.name {
		return bad("the handle is of provider %q, not %q", h.Provider, b.p.name)
	}
	if !bareID.MatchString(h.ID) {
		return bad("the handle's id %q is not a bare sandbox's", h.ID)
	}
	var st bareHandle
	if err := json.Unmarshal(h.State, &st); err != nil {
		return bad("the handle's state cannot be read")
	}
	if st.V != bareStateVersion {
		return bad("the handle's state is of version %d, not %d", st.V, bareStateVersion)
	}
	if st.Key == "" {
		return h.ID, nil, nil
	}
	key, err := agentauth.DecodeKey(st.Key)
	if err != nil {
		return bad("the handle's agent key cannot be read")
	}
	return h.ID, key, nil
}

func (b *bare) dir(id string) string { return path.Join(b.p.runDir, "bare", id) }

func (b *bare) workspaceDir(name string) string { return path.Join(b.diskDir, "bare", name) }

// seeScript prints, for each sandbox directory given, a line: its id,
// "alive" or "dead", and its state.json on one line. A directory without
// a record is left out.
const seeScript = ownScript + `for d in "$@"; do
  [ -f "$d/state.json" ] || continue
  alive=dead
  if owns "$d"; then alive=alive; fi
  printf '%s %s %s\n' "${d##*/}" "$alive" "$(tr -d '\n' <"$d/state.json")"
done`

// see reads the sandboxes of the given ids (every one on the machine when
// ids is nil).
func (b *bare) see(ctx context.Context, ids []string) ([]bareSeen, error) {
	script := seeScript
	args := make([]string, 0, len(ids))
	for _, id := range ids {
		args = append(args, b.dir(id))
	}
	if ids == nil {
		script = `set -- "$1"/bare/*; ` + seeScript
		args = []string{b.p.runDir}
	}
	out, err := b.p.conn.Run(ctx, nil, append([]string{"sh", "-c", script, "sh"}, args...)...)
	if err != nil {
		return nil, b.machineErr("read the sandboxes' state", err)
	}
	var seen []bareSeen
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		id, rest, _ := strings.Cut(sc.Text(), " ")
		alive, rec, _ := strings.Cut(rest, " ")
		s := bareSeen{ID: id, Alive: alive == "alive"}
		if !bareID.MatchString(id) || json.Unmarshal([]byte(rec), &s.Rec) != nil {
			continue // not a sandbox of this provider's
		}
		seen = append(seen, s)
	}
	return seen, nil
}

// one reads the sandbox id; one that is gone is not found.
func (b *bare) one(ctx context.Context, id string) (bareSeen, error) {
	seen, err := b.see(ctx, []string{id})
	if err != nil {
		return bareSeen{}, err
	}
	if len(seen) == 0 {
		return bareSeen{}, errdefs.NotFound(docker.CodeSandboxNotFound, "sandbox %s does not exist on the machine", id)
	}
	return seen[0], nil
}

// writeRecord replaces the sandbox's state.json.
func (b *bare) writeRecord(ctx context.Context, id string, rec bareRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = b.p.conn.Run(ctx, data, "sh", "-c", `umask 077 && cat >"$1/state.json.new" && mv -f "$1/state.json.new" "$1/state.json"`, "sh", b.dir(id))
	if err != nil {
		return b.machineErr("write the sandbox's state", err)
	}
	return nil
}

// machineErr is a failed step on the machine: the link's own error when
// it is public (unreachable), else an internal one saying what failed.
func (b *bare) machineErr(what string, err error) error {
	if _, ok := errdefs.Public(err); ok {
		return err
	}
	return fmt.Errorf("%s on the machine: %w", what, err)
}
