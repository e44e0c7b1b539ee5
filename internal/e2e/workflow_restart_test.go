package e2e

import (
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// restartKey is the admin key of the servers restartable starts.
const restartKey = "pdk_00000000000000000000000000000000000000000000c0de"

// restartable returns a start of `paddock serve` on one data directory,
// the same replica (replica) at each start, as a server restarted with
// the same settings is: it takes the workflows lease back at once.
func restartable(t *testing.T, replica string) func() *server {
	t.Helper()
	testenv.RequireDocker(t, testenv.TestImage)
	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	data, runDir := t.TempDir(), filepath.Join(testenv.ShortTempDir(t), "r")
	return func() *server {
		return serveIn(t, bin, shim, data, runDir, instance, restartKey, "PADDOCK_REPLICA_ID="+replica)
	}
}

// TestWorkflowResumesAfterRestart: a server killed (SIGKILL) while a
// workflow's step runs is started again on the same data directory; the
// run resumes where it stopped: the step already done is not run again,
// the step cut short is run again from its beginning (two attempts), and
// the run finishes.
func TestWorkflowResumesAfterRestart(t *testing.T) {
	start := restartable(t, "workflow-restart")
	s := start()
	c := sdkFor(t, s, restartKey)
	ctx := t.Context()
	rt := crashRuntimes(t, c, 1)[0]
	if _, err := c.StartRuntime(ctx, "acme", "dev", rt, pc.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateWorkflow(ctx, "acme", "dev", rt, pc.CreateWorkflowRequest{Name: "resume", Steps: []pc.WorkflowStep{
		{Name: "first", Type: pc.StepExec, Argv: sh("echo first >> log")},
		{Name: "cut", Type: pc.StepExec, Argv: sh("echo start >> log; sleep 5; echo cut-done")},
		{Name: "last", Type: pc.StepExec, Argv: sh("cat log")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The step is running once its command has written to the log (the
	// run marks it running just before the command starts).
	testenv.WaitFor(t, "the second step to run", func() bool {
		wf, err := c.GetWorkflow(ctx, "acme", "dev", rt, "resume")
		if err != nil || wf.LastRun.Steps[1].Status != pc.StepRunning {
			return false
		}
		res, err := c.Exec(ctx, "acme", "dev", rt, pc.ExecRequest{Argv: sh("cat log")})
		return err == nil && string(res.Stdout) == "first\nstart\n"
	})
	s.kill(t)

	s = start()
	c = sdkFor(t, s, restartKey)
	var run pc.WorkflowRun
	testenv.WaitFor(t, "the resumed run to end", func() bool {
		wf, err := c.GetWorkflow(ctx, "acme", "dev", rt, "resume")
		if err != nil {
			return false
		}
		run = *wf.LastRun
		return pc.WorkflowDone(run.Status)
	})
	st := run.Steps
	if run.Status != pc.WorkflowSucceeded || st[0].Attempts != 1 || st[1].Attempts != 2 || st[1].Stdout != "cut-done\n" ||
		st[2].Stdout != "first\nstart\nstart\n" {
		t.Fatalf("the resumed run: %+v\n%s", run, s.logs)
	}
	s.stop(t)
}

// TestWorkflowTaskStepAfterRestart: a task step whose server is killed
// while its task runs resumes after the restart. The task the step made
// is on the run from the moment it is made; the restarted server's
// reconciliation ended it as interrupted, so the resumed step makes a
// new one (a task still going on elsewhere would be waited for instead),
// and the step and the run succeed with the new task's outcome.
func TestWorkflowTaskStepAfterRestart(t *testing.T) {
	start := restartable(t, "workflow-task-restart")
	s := start()
	c := sdkFor(t, s, restartKey)
	ctx := t.Context()
	rt := crashRuntimes(t, c, 1)[0]
	_, err := c.CreateWorkflow(ctx, "acme", "dev", rt, pc.CreateWorkflowRequest{Name: "eval", Steps: []pc.WorkflowStep{
		{Name: "run", Type: pc.StepTask, Argv: sh("sleep 3; echo task-done")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	testenv.WaitFor(t, "the task step's task to run", func() bool {
		wf, err := c.GetWorkflow(ctx, "acme", "dev", rt, "eval")
		if err != nil || wf.LastRun.Steps[0].TaskID == "" {
			return false
		}
		first = wf.LastRun.Steps[0].TaskID
		tk, err := c.GetTask(ctx, "acme", "dev", first)
		return err == nil && tk.Status == pc.TaskRunning
	})
	s.kill(t)

	s = start()
	c = sdkFor(t, s, restartKey)
	var run pc.WorkflowRun
	testenv.WaitFor(t, "the resumed run to end", func() bool {
		wf, err := c.GetWorkflow(ctx, "acme", "dev", rt, "eval")
		if err != nil {
			return false
		}
		run = *wf.LastRun
		return pc.WorkflowDone(run.Status)
	})
	st := run.Steps[0]
	if run.Status != pc.WorkflowSucceeded || st.Attempts != 2 || st.TaskID == first || st.Stdout != "task-done\n" {
		t.Fatalf("the resumed run: %+v\n%s", run, s.logs)
	}
	if tk, err := c.GetTask(ctx, "acme", "dev", first); err != nil || tk.Status != pc.TaskFailed {
		t.Fatalf("the interrupted task: %+v, %v", tk, err)
	}
	s.stop(t)
}
