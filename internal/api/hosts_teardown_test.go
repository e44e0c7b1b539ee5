package api_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/pkg/client"
)

// TestHostTearsDownWhenIdle: a machine with idle_teardown stays up while
// a sandbox runs on it; once none has run there for that long, paddock
// archives the runtime paused there (through the runtime service: the
// runtime is archived, its container gone), removes its run directory,
// runs its teardown command over SSH and says torn_down; the next start
// on it connects again and it is ready.
func TestHostTearsDownWhenIdle(t *testing.T) {
	env, m := machineEnv(t)
	ctx := t.Context()
	mark := filepath.Join(m.Dir, "powered-off")
	req := addHostRequest(t, m, "box")
	req.IdleTeardown, req.TeardownCommand = "1h", "touch '"+mark+"'"
	var h client.Host
	env.Must(t, 201, "POST", hostsPath, req).Decode(t, &h)
	if h.State != "ready" || h.IdleTeardownSeconds != 3600 || h.TeardownCommand != req.TeardownCommand {
		t.Fatalf("registered %+v", h)
	}
	getHost := func() client.Host {
		var got client.Host
		env.Must(t, 200, "GET", hostsPath+"/box", nil).Decode(t, &got)
		return got
	}

	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p",
		Runtime: &client.RuntimeConfig{Provider: "box", MemoryMB: 128, PidsLimit: 64, DiskMB: 64}}).Decode(t, &p)
	rt := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	env.Must(t, 200, "POST", rt+"/start", client.StartRuntimeRequest{})
	hello := func() {
		t.Helper()
		var res client.ExecResult
		env.Must(t, 200, "POST", rt+"/exec", client.ExecRequest{Argv: []string{"sh", "-c", "echo hi"}}).Decode(t, &res)
		if strings.TrimSpace(string(res.Stdout)) != "hi" {
			t.Fatalf("exec on the machine said %q", res.Stdout)
		}
	}
	hello()

	// Running: in use, whatever the clock says.
	later := time.Now().Add(3 * time.Hour)
	if err := env.Hosts.TeardownIdle(ctx, env.Runtimes, later); err != nil {
		t.Fatal(err)
	}
	if got := getHost(); got.State != "ready" || !got.LastUsedAt.Equal(later.UTC().Truncate(time.Microsecond)) {
		t.Fatalf("a machine with a sandbox running: %+v (used at %v)", got, later)
	}

	// Paused, but not for its idle time yet: it stays.
	env.Must(t, 200, "POST", rt+"/pause", nil)
	if err := env.Hosts.TeardownIdle(ctx, env.Runtimes, later.Add(59*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := getHost(); got.State != "ready" {
		t.Fatalf("a machine idle for less than its idle time: %+v", got)
	}
	if _, err := os.Stat(mark); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the teardown command ran early: %v", err)
	}

	// Idle for its idle time: torn down.
	if err := env.Hosts.TeardownIdle(ctx, env.Runtimes, later.Add(61*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := getHost(); got.State != "torn_down" {
		t.Fatalf("an idle machine: %+v", got)
	}
	var r client.Runtime
	env.Must(t, 200, "GET", rt, nil).Decode(t, &r)
	if r.Status != client.RuntimeArchived {
		t.Fatalf("the runtime paused on it is %s, want archived", r.Status)
	}
	if n := m.Engine.Containers(t, p.RuntimeID); n != 0 {
		t.Fatalf("%d containers of the runtime left on the machine", n)
	}
	if _, err := os.Stat(filepath.Join(m.Dir, "run")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the run directory is still there: %v", err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the teardown command did not run: %v", err)
	}

	// The next start connects again, prepares the machine anew, and the
	// machine is in use.
	env.Must(t, 200, "POST", rt+"/start", client.StartRuntimeRequest{})
	hello()
	if err := env.Hosts.TeardownIdle(ctx, env.Runtimes, later.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := getHost(); got.State != "ready" {
		t.Fatalf("a machine torn down and started on again: %+v", got)
	}
}
