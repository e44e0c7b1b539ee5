package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// workflowEnv is the API on Docker with org acme, workspace dev and one
// project whose runtime runs.
type workflowEnv struct {
	*taskEnv
	rtPath string
}

func newWorkflowEnv(t *testing.T) *workflowEnv {
	t.Helper()
	e := newTaskEnv(t)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + e.runtimeID
	e.env.Must(t, 200, "POST", rtPath+"/start", nil)
	return &workflowEnv{taskEnv: e, rtPath: rtPath}
}

// create creates a workflow.
func (e *workflowEnv) create(t *testing.T, req pc.CreateWorkflowRequest) pc.Workflow {
	t.Helper()
	var wf pc.Workflow
	e.env.Must(t, 201, "POST", e.rtPath+"/workflows", req).Decode(t, &wf)
	return wf
}

// ended waits for the workflow's newest run to end and returns it.
func (e *workflowEnv) ended(t *testing.T, wf string) pc.WorkflowRun {
	t.Helper()
	var got pc.Workflow
	testenv.WaitFor(t, "workflow "+wf+"'s run to end", func() bool {
		e.env.Must(t, 200, "GET", e.rtPath+"/workflows/"+wf, nil).Decode(t, &got)
		return got.LastRun != nil && pc.WorkflowDone(got.LastRun.Status)
	})
	return *got.LastRun
}

func sh(script string) []string { return []string{"sh", "-c", script} }

// TestWorkflowStepsInOrder: a workflow's steps run in order on the
// runtime, each with its output recorded (exit code, both streams, a
// task's id and score); a failure with continue_on_error goes on; a
// failing step fails the run and leaves the later steps skipped.
func TestWorkflowStepsInOrder(t *testing.T) {
	e := newWorkflowEnv(t)
	wf := e.create(t, pc.CreateWorkflowRequest{Name: "build", Steps: []pc.WorkflowStep{
		{Name: "write", Type: pc.StepExec, Argv: sh("echo one > f; echo out; echo err >&2")},
		{Name: "read", Type: pc.StepExec, Argv: sh("cat f; echo $GREETING; pwd"), Env: map[string]string{"GREETING": "hi"}, Cwd: "/workspace"},
		{Name: "soft", Type: pc.StepExec, Argv: sh("exit 2"), ContinueOnError: true},
		{Name: "eval", Type: pc.StepTask, Argv: sh("echo task-out"), Score: []string{"echo", `{"pass": 1}`}},
		{Name: "hard", Type: pc.StepExec, Argv: sh("exit 3")},
		{Name: "never", Type: pc.StepExec, Argv: sh("echo never > g")},
	}})
	if wf.LastRun == nil || wf.LastRun.Status != pc.WorkflowPending || len(wf.LastRun.Steps) != 6 || wf.LastRun.Steps[0].Status != pc.StepPending {
		t.Fatalf("the created workflow: %+v", wf)
	}
	run := e.ended(t, wf.ID)
	s := run.Steps
	if run.Status != pc.WorkflowFailed || !strings.Contains(run.Error, "hard") || run.StartedAt == nil || run.FinishedAt == nil {
		t.Fatalf("the run: %+v", run)
	}
	if s[0].Status != pc.StepSucceeded || *s[0].ExitCode != 0 || s[0].Stdout != "out\n" || s[0].Stderr != "err\n" || s[0].Attempts != 1 ||
		s[0].StartedAt == nil || s[0].FinishedAt == nil || s[0].FinishedAt.Before(*s[0].StartedAt) {
		t.Fatalf("step write: %+v", s[0])
	}
	if s[1].Status != pc.StepSucceeded || s[1].Stdout != "one\nhi\n/workspace\n" || s[1].StartedAt.Before(*s[0].FinishedAt) {
		t.Fatalf("step read (after write): %+v", s[1])
	}
	if s[2].Status != pc.StepFailed || *s[2].ExitCode != 2 {
		t.Fatalf("step soft: %+v", s[2])
	}
	if s[3].Status != pc.StepSucceeded || s[3].TaskID == "" || string(s[3].Score) != `{"pass":1}` || s[3].Stdout != "task-out\n" {
		t.Fatalf("step eval: %+v", s[3])
	}
	if tk := e.task(t, s[3].TaskID); tk.Status != pc.TaskSucceeded || tk.RuntimeID != e.runtimeID {
		t.Fatalf("the eval step's task: %+v", tk)
	}
	if s[4].Status != pc.StepFailed || *s[4].ExitCode != 3 || s[5].Status != pc.StepSkipped || s[5].StartedAt != nil {
		t.Fatalf("steps hard and never: %+v %+v", s[4], s[5])
	}
	// The skipped step never ran.
	var res pc.ExecResult
	e.env.Must(t, 200, "POST", e.rtPath+"/exec", pc.ExecRequest{Argv: sh("test -e /workspace/g; echo $?")}).Decode(t, &res)
	if string(res.Stdout) != "1\n" {
		t.Fatalf("the skipped step's file: %q", res.Stdout)
	}
	// Listed on the runtime, by name too, with its runs.
	var list pc.List[pc.Workflow]
	e.env.Must(t, 200, "GET", e.rtPath+"/workflows", nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].Name != "build" || list.Items[0].LastRun.ID != run.ID {
		t.Fatalf("the runtime's workflows: %+v", list)
	}
	var runs pc.List[pc.WorkflowRun]
	e.env.Must(t, 200, "GET", e.rtPath+"/workflows/build/runs", nil).Decode(t, &runs)
	if len(runs.Items) != 1 || runs.Items[0].ID != run.ID {
		t.Fatalf("its runs: %+v", runs)
	}
}

// TestWorkflowPromptNeedsItsSecret: a workflow with a prompt step is
// created without any model credential; the prompt step fails with
// harness_secret_missing when it runs, after the exec step before it ran.
// With the secret bound, the same step runs the harness.
func TestWorkflowPromptNeedsItsSecret(t *testing.T) {
	e := newWorkflowEnv(t)
	steps := []pc.WorkflowStep{
		{Name: "prepare", Type: pc.StepExec, Argv: sh("echo ready > ready; echo prepared")},
		{Name: "ask", Type: pc.StepPrompt, Prompt: "list the workspace please", Harness: "claude-code"},
	}
	e.create(t, pc.CreateWorkflowRequest{Name: "ask", Steps: steps})
	run := e.ended(t, "ask")
	if run.Status != pc.WorkflowFailed || run.Steps[0].Status != pc.StepSucceeded || run.Steps[0].Stdout != "prepared\n" {
		t.Fatalf("the run: %+v", run)
	}
	if ask := run.Steps[1]; ask.Status != pc.StepFailed || ask.ErrorCode != "harness_secret_missing" || !strings.Contains(ask.Error, "ANTHROPIC_API_KEY") {
		t.Fatalf("the prompt step: %+v", ask)
	}

	e.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", pc.CreateSecretRequest{Name: "anthropic", Env: "ANTHROPIC_API_KEY", Value: "sk-test-not-real"})
	e.env.Must(t, 200, "PATCH", e.rtPath, pc.RuntimePatch{Secrets: &[]string{"anthropic"}})
	e.env.Must(t, 200, "POST", e.rtPath+"/reset", pc.ResetRequest{})
	e.env.Must(t, 200, "POST", e.rtPath+"/start", nil)
	e.create(t, pc.CreateWorkflowRequest{Name: "ask-again", Steps: steps})
	run = e.ended(t, "ask-again")
	ask := run.Steps[1]
	if run.Status != pc.WorkflowSucceeded || ask.Status != pc.StepSucceeded || ask.Result == "" || ask.SessionID == "" {
		t.Fatalf("the prompt step with its secret: %+v", run)
	}
	e.env.Must(t, 200, "GET", e.rtPath+"/sessions/"+ask.SessionID, nil)
}

// TestWorkflowFollow: following a run streams its status, each step's
// events as they happen (running, then its end with its output) and the
// run's end last, where the stream ends.
func TestWorkflowFollow(t *testing.T) {
	e := newWorkflowEnv(t)
	e.create(t, pc.CreateWorkflowRequest{Name: "slow", Steps: []pc.WorkflowStep{
		{Name: "wait", Type: pc.StepExec, Argv: sh("sleep 2; echo waited")},
		{Name: "after", Type: pc.StepExec, Argv: sh("echo after")},
	}})
	req, err := http.NewRequestWithContext(t.Context(), "GET", e.env.URL+e.rtPath+"/workflows/slow/follow", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.env.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("follow: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var events []pc.WorkflowEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var ev pc.WorkflowEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event %q: %v", sc.Text(), err)
		}
		events = append(events, ev)
	}
	seen := map[string]bool{}
	for _, ev := range events {
		if ev.Step != nil {
			if want := map[string]int{"wait": 0, "after": 1}[ev.Step.Name]; ev.Index == nil || *ev.Index != want {
				t.Fatalf("step %s's event has index %v, want %d", ev.Step.Name, ev.Index, want)
			}
			seen[ev.Step.Name+" "+ev.Step.Status] = true
			if ev.Step.Name == "wait" && ev.Step.Status == pc.StepSucceeded && ev.Step.Stdout != "waited\n" {
				t.Fatalf("the wait step's end: %+v", ev.Step)
			}
		}
	}
	last := events[len(events)-1]
	if events[0].Type != "run" || last.Type != "run" || last.Status != pc.WorkflowSucceeded ||
		!seen["wait running"] || !seen["wait succeeded"] || !seen["after succeeded"] {
		t.Fatalf("the events: %+v", events)
	}
	// Following an ended run answers its steps and its end at once.
	c, err := pc.New(e.env.URL, e.env.Key)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.FollowWorkflow(t.Context(), "acme", "dev", e.runtimeID, "slow", "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	for {
		ev, err := st.Next()
		if err != nil {
			if n != 4 || err != io.EOF { // run, two steps, run
				t.Fatalf("an ended run followed: %d events, then %v", n, err)
			}
			break
		}
		n++
		_ = ev
	}
}

// TestWorkflowSchedule: a schedule runs the workflow again; each run is
// kept with its steps. Deleting the workflow ends its schedule and its
// runs go with it.
func TestWorkflowSchedule(t *testing.T) {
	e := newWorkflowEnv(t)
	wf := e.create(t, pc.CreateWorkflowRequest{Name: "tick", Schedule: "@every 1s", Steps: []pc.WorkflowStep{
		{Type: pc.StepExec, Argv: sh("echo tick >> ticks; wc -l < ticks")},
	}})
	if wf.Schedule != "@every 1s" || wf.NextRunAt == nil || wf.Steps[0].Name != "step-1" {
		t.Fatalf("the scheduled workflow: %+v", wf)
	}
	var runs pc.List[pc.WorkflowRun]
	testenv.WaitFor(t, "a second, scheduled run to end", func() bool {
		e.env.Must(t, 200, "GET", e.rtPath+"/workflows/tick/runs", nil).Decode(t, &runs)
		ended := 0
		for _, r := range runs.Items {
			if r.Status == pc.WorkflowSucceeded {
				ended++
			}
		}
		return ended >= 2
	})
	outs := map[string]bool{}
	for _, r := range runs.Items {
		if r.Status == pc.WorkflowSucceeded {
			outs[r.Steps[0].Stdout] = true
		}
	}
	if len(outs) < 2 {
		t.Fatalf("the runs did not each run their step: %+v", runs.Items)
	}
	e.env.Must(t, 204, "DELETE", e.rtPath+"/workflows/tick", nil)
	if r := e.env.Do(t, "GET", e.rtPath+"/workflows/"+wf.ID+"/runs", nil); r.Status != 404 || r.Code() != "workflow_not_found" {
		t.Fatalf("a deleted workflow's runs: %d %s", r.Status, r.Body)
	}
}

// TestWorkflowCancel: cancelling a run stops its running step (its
// process killed), records it cancelled and skips the steps after it.
func TestWorkflowCancel(t *testing.T) {
	e := newWorkflowEnv(t)
	e.create(t, pc.CreateWorkflowRequest{Name: "long", Steps: []pc.WorkflowStep{
		{Name: "sleep", Type: pc.StepExec, Argv: sh("echo started; sleep 300")},
		{Name: "next", Type: pc.StepExec, Argv: sh("true")},
	}})
	testenv.WaitFor(t, "the sleep step to run", func() bool {
		var wf pc.Workflow
		e.env.Must(t, 200, "GET", e.rtPath+"/workflows/long", nil).Decode(t, &wf)
		return wf.LastRun.Steps[0].Status == pc.StepRunning
	})
	var run pc.WorkflowRun
	e.env.Must(t, 200, "POST", e.rtPath+"/workflows/long/cancel", nil).Decode(t, &run)
	if run.Status != pc.WorkflowCancelled || run.Steps[0].Status != pc.StepCancelled || run.Steps[1].Status != pc.StepSkipped {
		t.Fatalf("the cancelled run: %+v", run)
	}
	if r := e.env.Do(t, "POST", e.rtPath+"/workflows/long/cancel", nil); r.Status != 409 || r.Code() != "workflow_run_finished" {
		t.Fatalf("cancel again: %d %s", r.Status, r.Body)
	}
	var res pc.ExecResult
	e.env.Must(t, 200, "POST", e.rtPath+"/exec", pc.ExecRequest{Argv: sh(`for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline; echo; done 2>/dev/null | grep -c "^sleep 300"`)}).Decode(t, &res)
	if string(res.Stdout) != "0\n" {
		t.Fatalf("the cancelled step's process still runs: %q", res.Stdout)
	}
}

// TestWorkflowCLIOnDocker: `paddock workflow run -f FILE --follow` runs a
// workflow from a YAML file and prints each step as it ends; ls, show,
// cancel and rm do what they say.
func TestWorkflowCLIOnDocker(t *testing.T) {
	e := newWorkflowEnv(t)
	env := clitest.Env(e.env.URL, e.env.Key)
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	file := filepath.Join(t.TempDir(), "build.yaml")
	if err := os.WriteFile(file, []byte(`name: build
steps:
  - {name: hello, type: exec, argv: [sh, -c, "echo hello"]}
  - name: count
    type: exec
    argv: [sh, -c, "echo 3"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := clitest.MustRun(t, env, "workflow", "run", "p1", "-f", file, "--follow")
	if !strings.Contains(out, "step hello succeeded (exit 0): hello\n") || !strings.Contains(out, "step count succeeded (exit 0): 3\n") ||
		!strings.HasSuffix(out, "run succeeded\n") {
		t.Fatalf("workflow run --follow printed %q", out)
	}
	rows := clitest.Table(clitest.MustRun(t, env, "workflow", "ls", "p1"))
	if len(rows) != 2 || rows[1][1] != "build" || rows[1][4] != pc.WorkflowSucceeded {
		t.Fatalf("workflow ls: %q", rows)
	}
	show := clitest.MustRun(t, env, "workflow", "show", "p1", "build")
	if !strings.Contains(show, "hello") || !strings.Contains(show, "succeeded") {
		t.Fatalf("workflow show: %q", show)
	}

	if err := os.WriteFile(file, []byte(`{"name": "long", "steps": [{"type": "exec", "argv": ["sleep", "300"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	clitest.MustRun(t, env, "workflow", "run", "p1", "-f", file)
	testenv.WaitFor(t, "the long step to run", func() bool {
		var wf pc.Workflow
		e.env.Must(t, 200, "GET", e.rtPath+"/workflows/long", nil).Decode(t, &wf)
		return wf.LastRun.Steps[0].Status == pc.StepRunning
	})
	if out := clitest.MustRun(t, env, "workflow", "cancel", "p1", "long"); !strings.Contains(out, "cancelled") {
		t.Fatalf("workflow cancel: %q", out)
	}
	if _, _, code := clitest.Run(t, env, "workflow", "follow", "p1", "long"); code != 1 {
		t.Fatalf("following a cancelled run exited %d, want 1", code)
	}
	clitest.MustRun(t, env, "workflow", "rm", "p1", "long")
	if r := e.env.Do(t, "GET", e.rtPath+"/workflows/long", nil); r.Status != 404 {
		t.Fatalf("the removed workflow: %d", r.Status)
	}
}

// TestWorkflowCancelThroughAnotherReplica: two servers on one store; the
// first holds the workflows lease and runs a long step. A cancel through
// the second, which runs no workflow, answers the run cancelled, and the
// first stops the step at its loop's next poll: the step's process is
// killed.
func TestWorkflowCancelThroughAnotherReplica(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	instance := testenv.Instance(t)
	dir := t.TempDir()
	opts := servertest.Options{DataDir: dir, Instance: instance, Image: testenv.TestImage, NewOrgMicros: 1_000_000_000}
	opts.Provider = testenv.DockerProvider(t, instance)
	a := servertest.New(t, opts)
	holds := func(env *servertest.Env) bool {
		var r pc.Readiness
		env.Must(t, 200, "GET", "/readyz", nil).Decode(t, &r)
		for _, l := range r.Leases {
			if l.Name == "workflows" {
				return l.Held
			}
		}
		return false
	}
	testenv.WaitFor(t, "the first server to hold the workflows lease", func() bool { return holds(a) })
	opts.Provider = testenv.DockerProvider(t, instance)
	b := servertest.New(t, opts)
	if holds(b) {
		t.Fatal("the second server holds the workflows lease too")
	}
	a.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	a.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	var p pc.Project
	a.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	a.Must(t, 200, "POST", rtPath+"/start", nil)
	a.Must(t, 201, "POST", rtPath+"/workflows", pc.CreateWorkflowRequest{Name: "long", Steps: []pc.WorkflowStep{
		{Name: "sleep", Type: pc.StepExec, Argv: sh("sleep 301")},
	}})
	testenv.WaitFor(t, "the sleep step to run", func() bool {
		var wf pc.Workflow
		b.Must(t, 200, "GET", rtPath+"/workflows/long", nil).Decode(t, &wf)
		return wf.LastRun.Steps[0].Status == pc.StepRunning
	})
	var run pc.WorkflowRun
	b.Must(t, 200, "POST", rtPath+"/workflows/long/cancel", nil).Decode(t, &run)
	if run.Status != pc.WorkflowCancelled || run.Steps[0].Status != pc.StepCancelled {
		t.Fatalf("the cancelled run: %+v", run)
	}
	testenv.WaitFor(t, "the step's process to be killed", func() bool {
		var res pc.ExecResult
		a.Must(t, 200, "POST", rtPath+"/exec", pc.ExecRequest{Argv: sh(`for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline; echo; done 2>/dev/null | grep -c "^sleep 301"`)}).Decode(t, &res)
		return string(res.Stdout) == "0\n"
	})
	var wf pc.Workflow
	a.Must(t, 200, "GET", rtPath+"/workflows/long", nil).Decode(t, &wf)
	if wf.LastRun.Status != pc.WorkflowCancelled {
		t.Fatalf("the run after its runner stopped: %+v", wf.LastRun)
	}
}
