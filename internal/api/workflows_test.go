package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

func execStep(argv ...string) client.WorkflowStep {
	return client.WorkflowStep{Type: "exec", Argv: argv}
}

// TestWorkflowRefusals: a bad definition answers 400 with its code and
// makes no workflow.
func TestWorkflowRefusals(t *testing.T) {
	env, _, rtPath := setup(t)
	ok := []client.WorkflowStep{execStep("true")}
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"no name", client.CreateWorkflowRequest{Steps: ok}, 400, "invalid_workflow"},
		{"bad name", client.CreateWorkflowRequest{Name: "a b", Steps: ok}, 400, "invalid_workflow"},
		{"no steps", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{}}, 400, "invalid_workflow"},
		{"unknown type", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{{Type: "shell", Argv: []string{"true"}}}}, 400, "invalid_workflow"},
		{"exec without argv", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{{Type: "exec"}}}, 400, "invalid_workflow"},
		{"exec with a prompt", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{{Type: "exec", Argv: []string{"true"}, Prompt: "hi"}}}, 400, "invalid_workflow"},
		{"relative cwd", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{{Type: "exec", Argv: []string{"true"}, Cwd: "tmp"}}}, 400, "invalid_workflow"},
		{"prompt without text", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{{Type: "prompt"}}}, 400, "invalid_workflow"},
		{"unknown harness", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{{Type: "prompt", Prompt: "hi", Harness: "nope"}}}, 400, "unknown_harness"},
		{"task with argv and prompt", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{{Type: "task", Argv: []string{"true"}, Prompt: "hi"}}}, 400, "invalid_workflow"},
		{"two steps of one name", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{{Name: "a", Type: "exec", Argv: []string{"true"}}, {Name: "a", Type: "exec", Argv: []string{"true"}}}}, 400, "invalid_workflow"},
		{"timeout too long", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{{Type: "exec", Argv: []string{"true"}, TimeoutSeconds: 21601}}}, 400, "invalid_workflow"},
		{"bad schedule", client.CreateWorkflowRequest{Name: "w", Steps: ok, Schedule: "every tuesday"}, 400, "invalid_schedule"},
		{"schedule too often", client.CreateWorkflowRequest{Name: "w", Steps: ok, Schedule: "@every 100ms"}, 400, "invalid_schedule"},
		{"unknown field", map[string]any{"name": "w", "steps": []any{map[string]any{"type": "exec", "argv": []string{"true"}}}, "nope": 1}, 400, "unknown_field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, env.Do(t, "POST", rtPath+"/workflows", tc.body), tc.status, tc.code)
			var list client.List[client.Workflow]
			env.Must(t, 200, "GET", rtPath+"/workflows", nil).Decode(t, &list)
			if len(list.Items) != 0 {
				t.Fatalf("a workflow was made: %+v", list.Items)
			}
		})
	}
	env.Must(t, 201, "POST", rtPath+"/workflows", client.CreateWorkflowRequest{Name: "w", Steps: ok, Schedule: "*/5 * * * *"})
	wantError(t, env.Do(t, "POST", rtPath+"/workflows", client.CreateWorkflowRequest{Name: "w", Steps: ok}), 409, "workflow_exists")
	wantError(t, env.Do(t, "GET", rtPath+"/workflows/"+uuid.NewString(), nil), 404, "workflow_not_found")
	wantError(t, env.Do(t, "GET", rtPath+"/workflows/nope", nil), 404, "workflow_not_found")
	wantError(t, env.Do(t, "GET", rtPath+"/workflows/w/runs/"+uuid.NewString(), nil), 404, "workflow_run_not_found")
	wantError(t, env.Do(t, "POST", rtPath+"/workflows/w/cancel?run_id=x", nil), 400, "invalid_filter")
}

// TestWorkflowOnARuntimeNotRunning: an exec step on a runtime with no
// sandbox fails with the runtime's code, and the run fails.
func TestWorkflowOnARuntimeNotRunning(t *testing.T) {
	env, _, rtPath := setup(t)
	env.Must(t, 201, "POST", rtPath+"/workflows", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{execStep("true"), execStep("true")}})
	var wf client.Workflow
	testenv.WaitFor(t, "the run to end", func() bool {
		env.Must(t, 200, "GET", rtPath+"/workflows/w", nil).Decode(t, &wf)
		return client.WorkflowDone(wf.LastRun.Status)
	})
	st := wf.LastRun.Steps
	if wf.LastRun.Status != client.WorkflowFailed || st[0].Status != client.StepFailed || st[0].ErrorCode != "runtime_not_running" ||
		!strings.Contains(st[0].Error, "not running") || st[1].Status != client.StepSkipped {
		t.Fatalf("the run: %+v", wf.LastRun)
	}
}

// TestWorkflowOthersSeeNothing: another runtime's path, and another
// org's key, find no workflow of acme's runtime; nor can another org make
// one on it.
func TestWorkflowOthersSeeNothing(t *testing.T) {
	env, p, rtPath := setup(t)
	var wf client.Workflow
	env.Must(t, 201, "POST", rtPath+"/workflows", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{execStep("true")}}).Decode(t, &wf)
	var p2 client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p2"}).Decode(t, &p2)
	other := "/api/v1/org/acme/ws/dev/runtimes/" + p2.RuntimeID
	wantError(t, env.Do(t, "GET", other+"/workflows/"+wf.ID, nil), 404, "workflow_not_found")
	wantError(t, env.Do(t, "DELETE", other+"/workflows/w", nil), 404, "workflow_not_found")

	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"})
	env.Must(t, 201, "POST", "/api/v1/org/other/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var o client.Org
	env.Must(t, 200, "GET", "/api/v1/org/other", nil).Decode(t, &o)
	key, _, err := auth.Keys{Store: env.Store, Now: time.Now}.Create(context.Background(), store.APIKey{Name: "other admin", Role: string(auth.RoleAdmin), OrgID: o.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	foreign := "/api/v1/org/other/ws/dev/runtimes/" + p.RuntimeID
	for _, r := range []struct{ method, path string }{
		{"GET", rtPath + "/workflows/" + wf.ID},
		{"GET", foreign + "/workflows/" + wf.ID},
		{"GET", foreign + "/workflows"},
		{"GET", foreign + "/workflows/w/follow"},
		{"POST", foreign + "/workflows/w/cancel"},
		{"DELETE", foreign + "/workflows/w"},
	} {
		if res := env.DoKey(t, key, r.method, r.path, nil); res.Status != 404 {
			t.Fatalf("%s %s by another org: %d %s", r.method, r.path, res.Status, res.Body)
		}
	}
	wantError(t, env.DoKey(t, key, "POST", foreign+"/workflows", client.CreateWorkflowRequest{Name: "x", Steps: []client.WorkflowStep{execStep("true")}}), 404, "runtime_not_found")
	env.Must(t, 200, "GET", rtPath+"/workflows/"+wf.ID, nil) // still there
}

// TestWorkflowsRunOnTheLeaseHolder: two servers on one store; the first
// holds the workflows lease, the second waits for it. A workflow made
// through the second is run by the first, once: the second runs no
// workflow while it does not hold the lease.
func TestWorkflowsRunOnTheLeaseHolder(t *testing.T) {
	dir := t.TempDir()
	a := servertest.New(t, servertest.Options{DataDir: dir})
	holds := func(env *servertest.Env) bool {
		var r client.Readiness
		env.Must(t, 200, "GET", "/readyz", nil).Decode(t, &r)
		for _, l := range r.Leases {
			if l.Name == "workflows" {
				return l.Held
			}
		}
		t.Fatalf("%s runs no workflows lease: %+v", r.Replica, r.Leases)
		return false
	}
	testenv.WaitFor(t, "the first server to hold the workflows lease", func() bool { return holds(a) })
	b := servertest.New(t, servertest.Options{DataDir: dir})
	if holds(b) {
		t.Fatal("the second server holds the workflows lease the first holds")
	}
	b.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	b.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	b.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	b.Must(t, 201, "POST", rtPath+"/workflows", client.CreateWorkflowRequest{Name: "w", Steps: []client.WorkflowStep{execStep("true")}})
	var wf client.Workflow
	testenv.WaitFor(t, "the run to end", func() bool {
		b.Must(t, 200, "GET", rtPath+"/workflows/w", nil).Decode(t, &wf)
		return client.WorkflowDone(wf.LastRun.Status)
	})
	// The fake provider runs no agent: the step ran (and failed) once.
	if st := wf.LastRun.Steps[0]; st.Attempts != 1 || st.ErrorCode != "runtime_not_running" {
		t.Fatalf("the step: %+v", st)
	}
	if holds(b) || !holds(a) {
		t.Fatal("the lease moved")
	}
}
