package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// peakProvider is the Docker provider that counts the sandboxes it has
// made and not destroyed, and the most there were at once.
type peakProvider struct {
	*docker.Provider
	mu         sync.Mutex
	live, peak int
}

func (p *peakProvider) Create(ctx context.Context, spec provider.Spec) (provider.Handle, error) {
	h, err := p.Provider.Create(ctx, spec)
	if err == nil {
		p.mu.Lock()
		p.live++
		p.peak = max(p.peak, p.live)
		p.mu.Unlock()
	}
	return h, err
}

func (p *peakProvider) Destroy(ctx context.Context, h provider.Handle) error {
	err := p.Provider.Destroy(ctx, h)
	if err == nil {
		p.mu.Lock()
		p.live--
		p.mu.Unlock()
	}
	return err
}

func (p *peakProvider) counts() (live, peak int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live, p.peak
}

// taskEnv is the API on Docker (counted), priced, with org acme,
// workspace dev and one project on the test image.
type taskEnv struct {
	env       *servertest.Env
	cli       *client.Client
	prov      *peakProvider
	runtimeID string
}

const tasksPath = "/api/v1/org/acme/ws/dev/tasks"

func newTaskEnv(t *testing.T) *taskEnv {
	t.Helper()
	instance := testenv.Instance(t)
	prov := &peakProvider{Provider: testenv.DockerProvider(t, instance)}
	env := servertest.New(t, servertest.Options{
		Provider: prov, Instance: instance, Image: testenv.TestImage,
		Pricing:      &ledger.Pricing{Default: ledger.Rate{CPUMicros: 1000}, FirstSlice: time.Minute},
		NewOrgMicros: 1_000_000_000,
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name: "p1", Runtime: &pc.RuntimeConfig{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64},
	}).Decode(t, &p)
	return &taskEnv{env: env, cli: testenv.DockerClient(t), prov: prov, runtimeID: p.RuntimeID}
}

// run posts req and returns the batch.
func (e *taskEnv) run(t *testing.T, req pc.CreateTasksRequest) pc.TaskBatch {
	t.Helper()
	if req.RuntimeID == "" && req.Runtime == nil && req.Template == "" && req.Snapshot == "" {
		req.RuntimeID = e.runtimeID
	}
	var b pc.TaskBatch
	e.env.Must(t, 201, "POST", tasksPath, req).Decode(t, &b)
	return b
}

// task reads a task.
func (e *taskEnv) task(t *testing.T, id string) pc.Task {
	t.Helper()
	var tk pc.Task
	e.env.Must(t, 200, "GET", tasksPath+"/"+id, nil).Decode(t, &tk)
	return tk
}

// done waits for a task to end and returns it.
func (e *taskEnv) done(t *testing.T, id string) pc.Task {
	t.Helper()
	var tk pc.Task
	testenv.WaitFor(t, "task "+id+" to end", func() bool {
		tk = e.task(t, id)
		return pc.TaskDone(tk.Status)
	})
	return tk
}

// row reads a ledger row.
func (e *taskEnv) row(t *testing.T, id string) pc.Sandbox {
	t.Helper()
	var sb pc.Sandbox
	e.env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+id, nil).Decode(t, &sb)
	return sb
}

// running waits until task id's sandbox runs. A task names its sandbox
// before the sandbox's row exists (a server that dies meanwhile leaves a
// task that says which row to kill), so the row may not be there yet.
func (e *taskEnv) running(t *testing.T, id string) {
	t.Helper()
	testenv.WaitFor(t, "the task's sandbox to run", func() bool {
		tk := e.task(t, id)
		if tk.SandboxID == "" {
			return false
		}
		r := e.env.Do(t, "GET", "/api/v1/org/acme/sandboxes/"+tk.SandboxID, nil)
		if r.Status == 404 && r.Code() == "sandbox_not_found" {
			return false
		}
		if r.Status != 200 {
			t.Fatalf("the task's sandbox: %d %s", r.Status, r.Body)
		}
		var sb pc.Sandbox
		r.Decode(t, &sb)
		return sb.State == pc.SandboxRunning
	})
}

// gone checks the task sandbox id's container and workspace volume are
// no more.
func (e *taskEnv) gone(t *testing.T, id string) {
	t.Helper()
	cs, err := e.cli.ContainerList(t.Context(), container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", provider.LabelSandbox+"="+id)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 0 {
		t.Fatalf("sandbox %s's container is still there: %v", id, cs[0].Names)
	}
	if _, err := e.cli.VolumeInspect(t.Context(), "paddock-ws-task-"+id); err == nil {
		t.Fatalf("sandbox %s's workspace volume is still there", id)
	}
}

// TestTaskExitOutputScore: a task runs its command in a sandbox of kind
// task made from the runtime's configuration, records its exit code, its
// output (stdout and stderr apart) and the JSON its score command
// printed, and its sandbox is billed, killed as finished, listed with
// kind=task, and gone from Docker with its workspace.
func TestTaskExitOutputScore(t *testing.T) {
	e := newTaskEnv(t)
	b := e.run(t, pc.CreateTasksRequest{
		Argv:  []string{"sh", "-c", "echo hello; echo oops >&2; echo 0.75 > /workspace/acc; exit 3"},
		Score: []string{"sh", "-c", `printf '{"accuracy": %s, "ok": true}' "$(cat /workspace/acc)"`},
	})
	if b.Count != 1 || len(b.Tasks) != 1 || b.Tasks[0].Status != pc.TaskPending {
		t.Fatalf("batch %+v", b)
	}
	tk := e.done(t, b.Tasks[0].ID)
	if tk.Status != pc.TaskFailed || tk.ExitCode == nil || *tk.ExitCode != 3 || tk.Stdout != "hello\n" || tk.Stderr != "oops\n" {
		t.Fatalf("task %+v (exit %v)", tk, tk.ExitCode)
	}
	if string(tk.Score) != `{"accuracy":0.75,"ok":true}` || tk.ScoreError != "" || tk.StartedAt == nil || tk.FinishedAt == nil {
		t.Fatalf("score %s (error %q), started %v, finished %v", tk.Score, tk.ScoreError, tk.StartedAt, tk.FinishedAt)
	}
	sb := e.row(t, tk.SandboxID)
	if sb.Kind != pc.KindTask || sb.State != pc.SandboxKilled || sb.KillReason != runtime.KillFinished || sb.BilledCredits <= 0 || sb.RuntimeID != e.runtimeID {
		t.Fatalf("the task's ledger row: %+v", sb)
	}
	e.gone(t, sb.ID)
	var rows pc.List[pc.Sandbox]
	e.env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?kind=task", nil).Decode(t, &rows)
	if len(rows.Items) != 1 || rows.Items[0].ID != sb.ID {
		t.Fatalf("kind=task lists %+v", rows.Items)
	}
	// The runtime it was made from never ran.
	var rt pc.Runtime
	e.env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+e.runtimeID, nil).Decode(t, &rt)
	if rt.Status != "idle" {
		t.Fatalf("the runtime is %s", rt.Status)
	}
}

// TestTaskScoreErrorsAndTruncation: a score command that prints no JSON
// is a score error on a task that succeeded, never a server error; output
// past the bound is cut and said to be; an inline configuration works
// without a runtime.
func TestTaskScoreErrorsAndTruncation(t *testing.T) {
	e := newTaskEnv(t)
	inline := &pc.RuntimeConfig{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64}
	bad := e.run(t, pc.CreateTasksRequest{Runtime: inline, Argv: []string{"true"}, Score: []string{"echo", "not json {"}})
	big := e.run(t, pc.CreateTasksRequest{Runtime: inline, Argv: []string{"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a"}})
	tk := e.done(t, bad.Tasks[0].ID)
	if tk.Status != pc.TaskSucceeded || tk.Score != nil || !strings.Contains(tk.ScoreError, "valid JSON") || tk.RuntimeID != "" {
		t.Fatalf("a score that is no JSON: %+v", tk)
	}
	tk = e.done(t, big.Tasks[0].ID)
	if tk.Status != pc.TaskSucceeded || !tk.StdoutTruncated || len(tk.Stdout) != 64<<10 || strings.Trim(tk.Stdout, "a") != "" {
		t.Fatalf("100000 bytes of output: status %s, truncated %v, kept %d", tk.Status, tk.StdoutTruncated, len(tk.Stdout))
	}
}

// TestTaskTimeoutAndCancel: a command past its time limit ends the task
// timed_out with its sandbox killed as timed_out; a running task
// cancelled ends cancelled, its sandbox killed as deleted; both gone.
func TestTaskTimeoutAndCancel(t *testing.T) {
	e := newTaskEnv(t)
	slow := e.run(t, pc.CreateTasksRequest{Argv: []string{"sh", "-c", "echo started; sleep 300"}, TimeoutSeconds: 2})
	long := e.run(t, pc.CreateTasksRequest{Argv: []string{"sleep", "300"}, Score: []string{"echo", "{}"}})

	tk := e.done(t, slow.Tasks[0].ID)
	if tk.Status != pc.TaskTimedOut || tk.ExitCode != nil || tk.Stdout != "started\n" || tk.Error == "" {
		t.Fatalf("a task past its limit: %+v", tk)
	}
	if sb := e.row(t, tk.SandboxID); sb.KillReason != runtime.KillTimedOut {
		t.Fatalf("its row: %+v", sb)
	}
	e.gone(t, tk.SandboxID)

	id := long.Tasks[0].ID
	e.running(t, id)
	e.env.Must(t, 200, "DELETE", tasksPath+"/"+id, nil)
	tk = e.done(t, id)
	if tk.Status != pc.TaskCancelled || tk.Score != nil {
		t.Fatalf("a cancelled task: %+v", tk)
	}
	if sb := e.row(t, tk.SandboxID); sb.State != pc.SandboxKilled || sb.KillReason != runtime.KillDeleted {
		t.Fatalf("its row: %+v", sb)
	}
	e.gone(t, tk.SandboxID)
	if r := e.env.Do(t, "DELETE", tasksPath+"/"+id, nil); r.Status != 409 || r.Code() != "task_finished" {
		t.Fatalf("cancelling it again: %d %s", r.Status, r.Body)
	}
}

// TestTaskBatchConcurrency: a batch of 6 tasks with concurrency 2 never
// has more than 2 sandboxes at once (the provider counts them), and each
// task is its own record, summed up by its batch.
func TestTaskBatchConcurrency(t *testing.T) {
	e := newTaskEnv(t)
	b := e.run(t, pc.CreateTasksRequest{Argv: []string{"sh", "-c", "sleep 2; echo done"}, Count: 6, Concurrency: 2})
	if b.Count != 6 || b.Concurrency != 2 || len(b.Tasks) != 6 {
		t.Fatalf("batch %+v", b)
	}
	var sum pc.TaskBatch
	testenv.WaitFor(t, "the batch to end", func() bool {
		e.env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/task-batches/"+b.ID, nil).Decode(t, &sum)
		return sum.Statuses[pc.TaskSucceeded]+sum.Statuses[pc.TaskFailed] == 6
	})
	if sum.Statuses[pc.TaskSucceeded] != 6 {
		t.Fatalf("batch ended %v", sum.Statuses)
	}
	sandboxes := map[string]bool{}
	for _, tk := range sum.Tasks {
		if tk.BatchID != b.ID || tk.Stdout != "done\n" || sandboxes[tk.SandboxID] {
			t.Fatalf("task %+v", tk)
		}
		sandboxes[tk.SandboxID] = true
	}
	live, peak := e.prov.counts()
	if peak > 2 || live != 0 {
		t.Fatalf("at most %d sandboxes at once, %d left, want at most 2 and none", peak, live)
	}
	if peak < 2 {
		t.Fatalf("the batch never ran two tasks at once (peak %d)", peak)
	}
	var page pc.List[pc.Task]
	e.env.Must(t, 200, "GET", tasksPath+"?batch_id="+b.ID, nil).Decode(t, &page)
	if len(page.Items) != 6 {
		t.Fatalf("the batch lists %d tasks", len(page.Items))
	}
}

// TestTaskReconciledAfterRestart: a task its server left running when it
// died is failed by the next start's reconciliation, and the sandbox it
// names is killed as interrupted and removed, not orphaned.
func TestTaskReconciledAfterRestart(t *testing.T) {
	e := newTaskEnv(t)
	ctx := t.Context()
	rt, err := e.env.Store.GetRuntime(ctx, e.runtimeID)
	if err != nil {
		t.Fatal(err)
	}
	// What a server that died mid-task leaves: a running task naming a
	// running sandbox of kind task, with nobody running it.
	sbID := uuid.NewString()
	if _, err := e.env.Runtimes.StartTaskSandbox(ctx, sbID, rt, time.Minute); err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(map[string]any{"v": 1, "runtime_id": rt.ID, "config": rt.Config, "argv": []string{"sleep", "300"}, "timeout_seconds": 600, "concurrency": 1})
	left := store.Task{ID: uuid.NewString(), OrgID: rt.OrgID, WorkspaceID: rt.WorkspaceID, BatchID: uuid.NewString(), SandboxID: sbID,
		Status: store.TaskRunning, Spec: spec, Result: json.RawMessage(`{"v":1}`), CreatedAt: time.Now()}
	if err := e.env.Store.CreateTask(ctx, left); err != nil {
		t.Fatal(err)
	}
	never := left
	never.ID, never.SandboxID, never.Status = uuid.NewString(), uuid.NewString(), store.TaskRunning // named, never made
	if err := e.env.Store.CreateTask(ctx, never); err != nil {
		t.Fatal(err)
	}
	if e.row(t, sbID).State != pc.SandboxRunning {
		t.Fatal("the left sandbox is not running")
	}

	// The tasks component's Start runs this before any task runs.
	n, err := e.env.Tasks.Reconcile(ctx)
	if err != nil || n != 2 {
		t.Fatalf("reconciled %d, %v", n, err)
	}
	for _, id := range []string{left.ID, never.ID} {
		tk := e.task(t, id)
		if tk.Status != pc.TaskFailed || !strings.Contains(tk.Error, "server stopped") {
			t.Fatalf("task after reconciliation: %+v", tk)
		}
	}
	if sb := e.row(t, sbID); sb.State != pc.SandboxKilled || sb.KillReason != runtime.KillInterrupted {
		t.Fatalf("its sandbox: %+v", sb)
	}
	e.gone(t, sbID)
	if n, err := e.env.Tasks.Reconcile(ctx); err != nil || n != 0 {
		t.Fatalf("a second reconciliation: %d, %v", n, err)
	}
}

// TestTaskCLIOnDocker: `paddock task run --wait` runs a command and its
// score on Docker, prints the tasks, and exits 0 when they succeeded.
func TestTaskCLIOnDocker(t *testing.T) {
	e := newTaskEnv(t)
	env := clitest.Env(e.env.URL, e.env.Key)
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	out := clitest.MustRun(t, env, "task", "run", "--runtime", "p1", "--count", "2", "--score", `echo '{"pass": 1}'`, "--wait", "--", "sh", "-c", "echo ok")
	rows := clitest.Table(out)
	if len(rows) != 3 || rows[1][2] != pc.TaskSucceeded || rows[2][2] != pc.TaskSucceeded || rows[1][3] != "0" || rows[1][4] != `{"pass":1}` {
		t.Fatalf("task run --wait printed %q", out)
	}
	show := clitest.MustRun(t, env, "task", "show", rows[1][0])
	if !strings.Contains(show, "# stdout\nok\n") {
		t.Fatalf("task show printed %q", show)
	}
}

// TestTaskPrompt: a task may be a harness turn: its harness's command
// line runs in the task's sandbox with the runtime's model secret, and
// the turn's answer is read from the harness's stream.
func TestTaskPrompt(t *testing.T) {
	e := newTaskEnv(t)
	rt := "/api/v1/org/acme/ws/dev/runtimes/" + e.runtimeID
	e.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", pc.CreateSecretRequest{Name: "anthropic", Env: "ANTHROPIC_API_KEY", Value: "sk-test-not-real"})
	e.env.Must(t, 200, "PATCH", rt, pc.RuntimePatch{Secrets: &[]string{"anthropic"}})
	b := e.run(t, pc.CreateTasksRequest{Prompt: "list the workspace please", Score: []string{"echo", `{"graded": true}`}})
	tk := e.done(t, b.Tasks[0].ID)
	if tk.Status != pc.TaskSucceeded || tk.Harness != "claude-code" || tk.Prompt != "list the workspace please" || tk.Answer == "" ||
		tk.Argv[0] != "claude" || string(tk.Score) != `{"graded":true}` {
		t.Fatalf("a prompt task: %+v", tk)
	}
	e.gone(t, tk.SandboxID)
}

// TestTaskServerStops: a server that stops while a task runs fails it
// and kills its sandbox (interrupted) before the runtime service closes.
func TestTaskServerStops(t *testing.T) {
	e := newTaskEnv(t)
	b := e.run(t, pc.CreateTasksRequest{Argv: []string{"sleep", "300"}})
	id := b.Tasks[0].ID
	e.running(t, id)
	if err := e.env.Tasks.Close(); err != nil { // as the tasks component's Close
		t.Fatal(err)
	}
	tk := e.task(t, id)
	if tk.Status != pc.TaskFailed || !strings.Contains(tk.Error, "server stopped") {
		t.Fatalf("the task: %+v", tk)
	}
	if sb := e.row(t, tk.SandboxID); sb.State != pc.SandboxKilled || sb.KillReason != runtime.KillInterrupted {
		t.Fatalf("its sandbox: %+v", sb)
	}
	e.gone(t, tk.SandboxID)
	// A closed service takes no more tasks.
	if r := e.env.Do(t, "POST", tasksPath, pc.CreateTasksRequest{RuntimeID: e.runtimeID, Argv: []string{"true"}}); r.Status != 503 || r.Code() != "shutting_down" {
		t.Fatalf("a task after close: %d %s", r.Status, r.Body)
	}
}
