package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
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
// and every runtime in a consistent status — round after round.
func TestCrashRecovery(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	data := t.TempDir()
	const key = "pdk_00000000000000000000000000000000000000000000c0de"
	cli := testenv.DockerClient(t)

	s := serve(t, bin, shim, data, instance, key)
	c, err := pc.New(s.url, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	const runtimes = 6
	var ids []string
	for i := range runtimes {
		p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{
			Name: fmt.Sprintf("p%d", i), Runtime: &pc.RuntimeConfig{MemoryMB: 64, PidsLimit: 32},
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.RuntimeID)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	actions := []string{"start", "start", "pause", "resume", "reset"}
	for round := range 4 {
		// Fire a burst of actions and kill the server while they run.
		var wg sync.WaitGroup
		hc := &http.Client{Timeout: 30 * time.Second}
		for _, id := range ids {
			for range 2 {
				action := actions[rng.IntN(len(actions))]
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequest("POST", s.url+"/api/v1/org/acme/ws/dev/runtimes/"+id+"/"+action, nil)
					req.Header.Set("Authorization", "Bearer "+key)
					if resp, err := hc.Do(req); err == nil {
						resp.Body.Close()
					}
				}()
			}
		}
		// The crash lands at a different point of the burst each round: a
		// random pause, not a wait for a condition, is what this tests.
		time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
		s.kill(t)
		wg.Wait()

		s = serve(t, bin, shim, data, instance, key)
		c, _ = pc.New(s.url, key)
		logs := s.logs.String()
		t.Logf("round %d: start-up reconciliation fixed %d runtimes and removed %d orphans", round,
			strings.Count(logs, "reconciled runtime"), strings.Count(logs, "removed orphaned compute"))
		checkConsistent(t, round, c, cli, instance)
	}

	// The recovered server still works: every runtime can be reset and
	// started again.
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
	s.stop(t)
}

// checkConsistent asserts the ledger, the runtimes and Docker agree.
func checkConsistent(t *testing.T, round int, c *pc.Client, cli *dockerclient.Client, instance string) {
	t.Helper()
	ctx := t.Context()
	cs, err := cli.ContainerList(ctx, container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", provider.LabelInstance+"="+instance)),
	})
	if err != nil {
		t.Fatal(err)
	}
	containers := map[string]container.Summary{}
	for _, ct := range cs {
		containers[ct.ID] = ct
	}
	rows := map[string]pc.Sandbox{} // live rows by provider id
	for sb, err := range c.AllSandboxes(ctx, "acme", pc.SandboxFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		switch sb.State {
		case pc.SandboxStarting:
			t.Errorf("round %d: row %s still starting after recovery", round, sb.ID)
		case pc.SandboxRunning, pc.SandboxPaused:
			rows[sb.ProviderSandboxID] = sb
			ct, ok := containers[sb.ProviderSandboxID]
			if !ok {
				t.Errorf("round %d: row %s is %s but its container %.12s does not exist", round, sb.ID, sb.State, sb.ProviderSandboxID)
				continue
			}
			want := map[string]string{pc.SandboxRunning: "running", pc.SandboxPaused: "paused"}[sb.State]
			if ct.State != want {
				t.Errorf("round %d: row %s is %s but its container is %s", round, sb.ID, sb.State, ct.State)
			}
		}
	}
	for id, ct := range containers {
		if _, ok := rows[id]; !ok {
			t.Errorf("round %d: orphan container %.12s (%s, sandbox %s)", round, id, ct.State, ct.Labels[provider.LabelSandbox])
		}
	}
	list, err := c.ListRuntimes(ctx, "acme", "dev", pc.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range list.Items {
		switch rt.Status {
		case pc.RuntimeIdle, pc.RuntimeError:
			if rt.CurrentSandboxID != "" {
				t.Errorf("round %d: runtime %s is %s but points at sandbox %s", round, rt.ID, rt.Status, rt.CurrentSandboxID)
			}
		case pc.RuntimeRunning, pc.RuntimePaused:
			sb, err := c.GetSandbox(ctx, "acme", rt.CurrentSandboxID)
			if err != nil || sb.State != rt.Status {
				t.Errorf("round %d: runtime %s is %s, its sandbox %s is %s (%v)", round, rt.ID, rt.Status, rt.CurrentSandboxID, sb.State, err)
			}
		default:
			t.Errorf("round %d: runtime %s stuck in %s", round, rt.ID, rt.Status)
		}
	}
	var states []string
	for _, rt := range list.Items {
		states = append(states, rt.Status)
	}
	t.Logf("round %d: runtimes %s; %d live containers", round, strings.Join(states, " "), len(containers))
}
