package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	dockerclient "github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// kill sends SIGKILL: the server gets no chance to clean up.
func (s *server) kill(t testing.TB) {
	t.Helper()
	_ = s.cmd.Process.Kill()
	<-s.done
}

// TestCrashRecovery kills the server (SIGKILL) in the middle of starts,
// pauses, resumes and resets, restarts it, and checks that the start-up
// reconciliation left no orphan container, no row billed without compute,
// and every runtime in a consistent status — round after round, on the
// embedded SQLite store and on PostgreSQL.
func TestCrashRecovery(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { crashRecovery(t, "") })
	t.Run("postgres", func(t *testing.T) { crashRecovery(t, testenv.Postgres(t)) })
}

// crashRecovery is TestCrashRecovery on the PostgreSQL database at dsn,
// or with "" on SQLite. On PostgreSQL it also checks the credits'
// conservation and the bills in the end (checkLedger).
func crashRecovery(t *testing.T, dsn string) {
	testenv.RequireDocker(t, testenv.TestImage)
	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	data := t.TempDir()
	const key = "pdk_00000000000000000000000000000000000000000000c0de"
	cli := testenv.DockerClient(t)
	var env []string
	if dsn != "" {
		env = append(env, "PADDOCK_STORE="+dsn)
	}
	// Each start gets a run directory of its own, as a restart on
	// another host would: the agents' sockets of the last are gone.
	start := func() *server {
		return serveIn(t, bin, shim, data, filepath.Join(testenv.ShortTempDir(t), "r"), instance, key, env...)
	}

	s := start()
	c := sdkFor(t, s, key)
	ids := crashRuntimes(t, c, 6)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 4 {
		crashBurst(t, s, key, ids, rng)
		s = start()
		c = sdkFor(t, s, key)
		logs := s.logs.String()
		t.Logf("round %d: start-up reconciliation fixed %d runtimes and removed %d orphans", round,
			strings.Count(logs, "reconciled runtime"), strings.Count(logs, "removed orphaned compute"))
		checkConsistent(t, round, c, cli, instance)
	}

	// The recovered server still works: every runtime can be reset and
	// started again.
	ctx := t.Context()
	for _, id := range ids {
		rt, err := c.GetRuntime(ctx, "acme", "dev", id)
		if err != nil {
			t.Fatal(err)
		}
		if rt.Status != pc.RuntimeIdle {
			if _, err := c.ResetRuntime(ctx, "acme", "dev", id, pc.ResetRequest{}); err != nil {
				t.Fatalf("reset %s (%s) after recovery: %v", id, rt.Status, err)
			}
		}
		if _, err := c.StartRuntime(ctx, "acme", "dev", id, pc.StartRuntimeRequest{}); err != nil {
			t.Fatalf("start %s after recovery: %v", id, err)
		}
	}
	checkConsistent(t, 99, c, cli, instance)
	if dsn != "" {
		checkLedger(t, dsn, &chaosLoad{})
	}
	s.stop(t)
}

// crashRuntimes makes org acme, its workspace dev and n projects in it,
// and returns their runtimes' ids.
func crashRuntimes(t testing.TB, c *pc.Client, n int) []string {
	t.Helper()
	ctx := t.Context()
	if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{
			Name: fmt.Sprintf("p%d", i), Runtime: &pc.RuntimeConfig{MemoryMB: 64, PidsLimit: 32},
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.RuntimeID)
	}
	return ids
}

// crashBurst fires two random actions at each runtime and kills s while
// they run.
func crashBurst(t *testing.T, s *server, key string, ids []string, rng *rand.Rand) {
	actions := []string{"start", "start", "pause", "resume", "reset"}
	var wg sync.WaitGroup
	hc := &http.Client{Timeout: 30 * time.Second}
	for _, id := range ids {
		for range 2 {
			action := actions[rng.IntN(len(actions))]
			wg.Go(func() {
				req, _ := http.NewRequest("POST", s.url+"/api/v1/org/acme/ws/dev/runtimes/"+id+"/"+action, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				if resp, err := hc.Do(req); err == nil {
					resp.Body.Close()
				}
			})
		}
	}
	// The crash lands at a different point of the burst each round: a
	// random pause, not a wait for a condition, is what this tests.
	time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
	s.kill(t)
	wg.Wait()
}

// checkConsistent asserts the ledger, the runtimes and Docker agree.
//
// The engine may still be finishing a create or a removal the killed
// server had asked for when the restarted one reconciled; the next
// lifecycle round sweeps for such compute again. So the check waits, on
// the condition, for the two to agree.
func checkConsistent(t testing.TB, round int, c *pc.Client, cli *dockerclient.Client, instance string) {
	t.Helper()
	var summary string
	var problems []string
	err := testenv.Poll(testenv.Patience, func() error {
		var err error
		if summary, problems, err = consistency(t.Context(), c, cli, instance); err != nil || len(problems) > 0 {
			return fmt.Errorf("%d problems (%v)", len(problems), err)
		}
		return nil
	})
	if err != nil && len(problems) == 0 {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("round %d: %s", round, p)
	}
	t.Logf("round %d: %s", round, summary)
}

// consistency compares the sandbox rows, the runtimes and the containers
// of instance, and returns what disagrees and a summary of the runtimes'
// statuses: no row or runtime still starting, each live row's container
// in its state, no container without a live row, and each runtime's
// status its sandbox's.
func consistency(ctx context.Context, c *pc.Client, cli *dockerclient.Client, instance string) (summary string, problems []string, err error) {
	cs, err := cli.ContainerList(ctx, container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", provider.LabelInstance+"="+instance)),
	})
	if err != nil {
		return "", nil, err
	}
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	containers := map[string]container.Summary{}
	for _, ct := range cs {
		containers[ct.ID] = ct
	}
	rows := map[string]pc.Sandbox{} // live rows by provider id
	for sb, err := range c.AllSandboxes(ctx, "acme", pc.SandboxFilter{}) {
		if err != nil {
			return "", nil, err
		}
		switch sb.State {
		case pc.SandboxStarting:
			bad("row %s still starting after recovery", sb.ID)
		case pc.SandboxRunning, pc.SandboxPaused:
			rows[sb.ProviderSandboxID] = sb
			ct, ok := containers[sb.ProviderSandboxID]
			if !ok {
				bad("row %s is %s but its container %.12s does not exist", sb.ID, sb.State, sb.ProviderSandboxID)
				continue
			}
			want := map[string]string{pc.SandboxRunning: "running", pc.SandboxPaused: "paused"}[sb.State]
			if ct.State != want {
				bad("row %s is %s but its container is %s", sb.ID, sb.State, ct.State)
			}
		}
	}
	for id, ct := range containers {
		if _, ok := rows[id]; !ok {
			bad("orphan container %.12s (%s, sandbox %s)", id, ct.State, ct.Labels[provider.LabelSandbox])
		}
	}
	list, err := c.ListRuntimes(ctx, "acme", "dev", pc.ListOptions{Limit: 100})
	if err != nil {
		return "", nil, err
	}
	var states []string
	for _, rt := range list.Items {
		states = append(states, rt.Status)
		switch rt.Status {
		case pc.RuntimeIdle, pc.RuntimeError:
			if rt.CurrentSandboxID != "" {
				bad("runtime %s is %s but points at sandbox %s", rt.ID, rt.Status, rt.CurrentSandboxID)
			}
		case pc.RuntimeRunning, pc.RuntimePaused:
			sb, err := c.GetSandbox(ctx, "acme", rt.CurrentSandboxID)
			if err != nil || sb.State != rt.Status {
				bad("runtime %s is %s, its sandbox %s is %s (%v)", rt.ID, rt.Status, rt.CurrentSandboxID, sb.State, err)
			}
		default:
			bad("runtime %s stuck in %s", rt.ID, rt.Status)
		}
	}
	return fmt.Sprintf("runtimes %s; %d live containers", strings.Join(states, " "), len(containers)), problems, nil
}
