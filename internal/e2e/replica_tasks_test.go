package e2e

import (
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// waitingTask is a task's command that runs until the test lets it end
// (it writes /tmp/go in the task's container), then prints finished.
var waitingTask = []string{"sh", "-c", "until [ -e /tmp/go ]; do sleep 0.1; done; echo finished"}

// TestTasksStayWithTheirReplica: tasks belong to the replica that runs
// them. Two paddock serve processes on one PostgreSQL database: a task
// that runs on A survives B's start (B's start-up reconciliation leaves a
// live replica's tasks alone) and succeeds. Then A is killed (SIGKILL)
// with a task running and never comes back: once A's presence lapses
// (the lease TTL is 2 s), B's sweep fails A's task as interrupted and
// kills its sandbox, its container gone.
func TestTasksStayWithTheirReplica(t *testing.T) {
	rs := newReplicaSet(t)
	a := rs.ready(t, rs.begin(t))
	ctx := t.Context()
	if _, err := a.c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	cli := testenv.DockerClient(t)
	// container is the id of task sandbox sb's container; "" once gone.
	containerOf := func(sb string) string {
		cs, err := cli.ContainerList(ctx, container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", provider.LabelSandbox+"="+sb))})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 0 {
			return ""
		}
		return cs[0].ID
	}
	// runOn starts a waiting task through r and returns it once its
	// sandbox runs.
	runOn := func(r *replica) pc.Task {
		t.Helper()
		b, err := r.c.CreateTasks(ctx, "acme", "dev", pc.CreateTasksRequest{Argv: waitingTask, TimeoutSeconds: 600})
		if err != nil {
			t.Fatal(err)
		}
		var tk pc.Task
		testenv.WaitFor(t, "the task's sandbox to run", func() bool {
			tk, err = r.c.GetTask(ctx, "acme", "dev", b.Tasks[0].ID)
			if err != nil || tk.Status != pc.TaskRunning || tk.SandboxID == "" {
				return false
			}
			sb, err := r.c.GetSandbox(ctx, "acme", tk.SandboxID)
			return err == nil && sb.State == pc.SandboxRunning && containerOf(tk.SandboxID) != ""
		})
		return tk
	}

	// A runs a task; B starts meanwhile, and its start-up reconciliation
	// has run once it serves.
	first := runOn(a)
	b := rs.ready(t, rs.begin(t))
	if tk, err := b.c.GetTask(ctx, "acme", "dev", first.ID); err != nil || tk.Status != pc.TaskRunning {
		t.Fatalf("A's task after B started: %+v, %v\nB's log:\n%s", tk, err, b.logs)
	}
	if sb, err := b.c.GetSandbox(ctx, "acme", first.SandboxID); err != nil || sb.State != pc.SandboxRunning {
		t.Fatalf("A's task's sandbox after B started: %+v, %v", sb, err)
	}
	letEnd(t, cli, containerOf(first.SandboxID))
	var tk pc.Task
	testenv.WaitFor(t, "A's task to end", func() bool {
		var err error
		tk, err = b.c.GetTask(ctx, "acme", "dev", first.ID)
		return err == nil && pc.TaskDone(tk.Status)
	})
	if tk.Status != pc.TaskSucceeded || tk.Stdout != "finished\n" {
		t.Fatalf("A's task, run while B started: %+v\nA's log:\n%s", tk, a.logs)
	}

	// A dies with a task running, and does not come back.
	second := runOn(a)
	a.kill(t)
	testenv.WaitFor(t, "B to fail the task of A, gone", func() bool {
		var err error
		tk, err = b.c.GetTask(ctx, "acme", "dev", second.ID)
		return err == nil && pc.TaskDone(tk.Status)
	})
	if tk.Status != pc.TaskFailed || !strings.Contains(tk.Error, "server stopped") {
		t.Fatalf("the task of A, dead: %+v\nB's log:\n%s", tk, b.logs)
	}
	sb, err := b.c.GetSandbox(ctx, "acme", second.SandboxID)
	if err != nil || sb.State != pc.SandboxKilled || sb.KillReason != runtime.KillInterrupted {
		t.Fatalf("its sandbox: %+v, %v", sb, err)
	}
	if id := containerOf(second.SandboxID); id != "" {
		t.Fatalf("its container %s is still there", id)
	}
	if !strings.Contains(b.logs.String(), "failed a task its server left unfinished") {
		t.Errorf("B's log does not say it swept the task:\n%s", b.logs)
	}
}

// letEnd writes /tmp/go in the container id, where a waitingTask runs.
func letEnd(t *testing.T, cli *client.Client, id string) {
	t.Helper()
	if id == "" {
		t.Fatal("the task's container is gone")
	}
	ex, err := cli.ContainerExecCreate(t.Context(), id, container.ExecOptions{Cmd: []string{"touch", "/tmp/go"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.ContainerExecStart(t.Context(), ex.ID, container.ExecStartOptions{}); err != nil {
		t.Fatal(err)
	}
}
