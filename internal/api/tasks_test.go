package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

const tasksPath = "/api/v1/org/acme/ws/dev/tasks"

// noTasks fails when the workspace has any task.
func noTasks(t *testing.T, env *servertest.Env) {
	t.Helper()
	var list client.List[client.Task]
	env.Must(t, 200, "GET", tasksPath, nil).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("tasks were made: %+v", list.Items)
	}
}

// TestTaskRefusals: a bad request answers its 4xx and code, and makes
// no task.
func TestTaskRefusals(t *testing.T) {
	env, p, _ := setup(t)
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"no argv", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Argv: []string{}}, 400, "invalid_task"},
		{"empty command", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Argv: []string{""}}, 400, "invalid_task"},
		{"both sources", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Runtime: &client.RuntimeConfig{}, Argv: []string{"true"}}, 400, "invalid_task"},
		{"runtime id not a UUID", client.CreateTasksRequest{RuntimeID: "x", Argv: []string{"true"}}, 400, "invalid_task"},
		{"unknown runtime", client.CreateTasksRequest{RuntimeID: uuid.NewString(), Argv: []string{"true"}}, 404, "runtime_not_found"},
		{"too many", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Argv: []string{"true"}, Count: 101}, 400, "invalid_task"},
		{"concurrency too high", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Argv: []string{"true"}, Count: 2, Concurrency: 33}, 400, "invalid_task"},
		{"timeout too long", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Argv: []string{"true"}, TimeoutSeconds: 86401}, 400, "invalid_task"},
		{"image not allowed", client.CreateTasksRequest{Runtime: &client.RuntimeConfig{Image: "evil/miner:1"}, Argv: []string{"true"}}, 400, "image_not_allowed"},
		{"unknown field", map[string]any{"argv": []string{"true"}, "nope": 1}, 400, "unknown_field"},
		{"argv and prompt", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Argv: []string{"true"}, Prompt: "hi"}, 400, "invalid_task"},
		{"harness without prompt", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Argv: []string{"true"}, Harness: "codex"}, 400, "invalid_task"},
		{"unknown harness", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Prompt: "hi", Harness: "nope"}, 400, "unknown_harness"},
		{"template and runtime", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Template: "t", Argv: []string{"true"}}, 400, "invalid_task"},
		{"template and snapshot", client.CreateTasksRequest{Template: "t", Snapshot: uuid.NewString(), Argv: []string{"true"}}, 400, "invalid_task"},
		{"snapshot and inline", client.CreateTasksRequest{Runtime: &client.RuntimeConfig{}, Snapshot: uuid.NewString(), Argv: []string{"true"}}, 400, "invalid_task"},
		{"snapshot not a UUID", client.CreateTasksRequest{Snapshot: "x", Argv: []string{"true"}}, 400, "invalid_task"},
		{"unknown template", client.CreateTasksRequest{Template: "nope", Argv: []string{"true"}}, 404, "template_not_found"},
		{"unknown snapshot", client.CreateTasksRequest{Snapshot: uuid.NewString(), Argv: []string{"true"}}, 404, "snapshot_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, env.Do(t, "POST", tasksPath, tc.body), tc.status, tc.code)
			noTasks(t, env)
		})
	}
	wantError(t, env.Do(t, "GET", tasksPath+"/"+uuid.NewString(), nil), 404, "task_not_found")
	wantError(t, env.Do(t, "GET", tasksPath+"/not-an-id", nil), 404, "task_not_found")
	wantError(t, env.Do(t, "DELETE", tasksPath+"/"+uuid.NewString(), nil), 404, "task_not_found")
	wantError(t, env.Do(t, "GET", "/api/v1/org/acme/ws/dev/task-batches/"+uuid.NewString(), nil), 404, "task_batch_not_found")
	wantError(t, env.Do(t, "GET", tasksPath+"?batch_id=x", nil), 400, "invalid_filter")
}

// TestTaskOthersSeeNothing: another workspace's path, and another org's
// key, find no task of acme/dev.
func TestTaskOthersSeeNothing(t *testing.T) {
	env, p, _ := setup(t)
	var b client.TaskBatch
	env.Must(t, 201, "POST", tasksPath, client.CreateTasksRequest{RuntimeID: p.RuntimeID, Argv: []string{"true"}}).Decode(t, &b)
	id := b.Tasks[0].ID
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "ops"})
	wantError(t, env.Do(t, "GET", "/api/v1/org/acme/ws/ops/tasks/"+id, nil), 404, "task_not_found")
	wantError(t, env.Do(t, "DELETE", "/api/v1/org/acme/ws/ops/tasks/"+id, nil), 404, "task_not_found")
	wantError(t, env.Do(t, "GET", "/api/v1/org/acme/ws/ops/task-batches/"+b.ID, nil), 404, "task_batch_not_found")

	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"})
	env.Must(t, 201, "POST", "/api/v1/org/other/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var o client.Org
	env.Must(t, 200, "GET", "/api/v1/org/other", nil).Decode(t, &o)
	key, _, err := auth.Keys{Store: env.Store, Now: time.Now}.Create(context.Background(), store.APIKey{Name: "other admin", Role: string(auth.RoleAdmin), OrgID: o.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, env.DoKey(t, key, "GET", tasksPath+"/"+id, nil), 404, "org_not_found")
	wantError(t, env.DoKey(t, key, "GET", "/api/v1/org/other/ws/dev/tasks/"+id, nil), 404, "task_not_found")
	// Nor can it run a task from acme's runtime or template, by name or
	// id, nor can acme's other workspace.
	wantError(t, env.DoKey(t, key, "POST", "/api/v1/org/other/ws/dev/tasks", client.CreateTasksRequest{RuntimeID: p.RuntimeID, Argv: []string{"true"}}), 404, "runtime_not_found")
	var tpl client.Template
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/templates", client.CreateTemplateRequest{Name: "tpl"}).Decode(t, &tpl)
	for _, ref := range []string{tpl.Name, tpl.ID} {
		wantError(t, env.DoKey(t, key, "POST", "/api/v1/org/other/ws/dev/tasks", client.CreateTasksRequest{Template: ref, Argv: []string{"true"}}), 404, "template_not_found")
		wantError(t, env.Do(t, "POST", "/api/v1/org/acme/ws/ops/tasks", client.CreateTasksRequest{Template: ref, Argv: []string{"true"}}), 404, "template_not_found")
	}
	var list client.List[client.Task]
	env.MustKey(t, key, 200, "GET", "/api/v1/org/other/ws/dev/tasks", nil).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("the other org has tasks: %+v", list.Items)
	}
}

// TestTaskThatCannotStart: a task whose sandbox cannot start (the org
// cannot pay for it; a provider without the agent) fails with the reason,
// leaving no compute and no live ledger row.
func TestTaskThatCannotStart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    servertest.Options
		message string
	}{
		{"no credits", servertest.Options{Pricing: &ledger.Pricing{Default: ledger.Rate{CPUMicros: 1000}, FirstSlice: time.Minute}}, "credits"},
		{"no agent", servertest.Options{}, "agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := servertest.New(t, tc.opts)
			env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
			env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
			var b client.TaskBatch
			env.Must(t, 201, "POST", tasksPath, client.CreateTasksRequest{Runtime: &client.RuntimeConfig{}, Argv: []string{"true"}}).Decode(t, &b)
			var tk client.Task
			testenv.WaitFor(t, "the task to end", func() bool {
				env.Must(t, 200, "GET", tasksPath+"/"+b.Tasks[0].ID, nil).Decode(t, &tk)
				return client.TaskDone(tk.Status)
			})
			if tk.Status != client.TaskFailed || !strings.Contains(tk.Error, tc.message) {
				t.Fatalf("task %+v", tk)
			}
			if n := env.Fake.Count(); n != 0 {
				t.Fatalf("%d sandboxes left in the provider", n)
			}
			var rows client.List[client.Sandbox]
			env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?kind=task&state=running", nil).Decode(t, &rows)
			if len(rows.Items) != 0 {
				t.Fatalf("live rows: %+v", rows.Items)
			}
		})
	}
}

// TestTaskStartReconciles: a server that starts on the store of one that
// stopped mid-task fails the tasks it left, before serving them. A task
// whose sandbox cannot be ended (its provider no longer offered) is left
// running, and logged, and the server starts anyway, the others ended. A
// sweep, while the server runs, takes a task whose runner is gone, and
// leaves a live replica's and one of no known runner (an older binary's,
// in a rolling upgrade, left to a start).
func TestTaskStartReconciles(t *testing.T) {
	dir := t.TempDir()
	env := servertest.New(t, servertest.Options{DataDir: dir})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	var ws client.Workspace
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"}).Decode(t, &ws)
	var o client.Org
	env.Must(t, 200, "GET", "/api/v1/org/acme", nil).Decode(t, &o)
	ctx := t.Context()
	leave := func(runner, sandboxID string) store.Task {
		t.Helper()
		tk := store.Task{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: ws.ID, BatchID: uuid.NewString(), SandboxID: sandboxID,
			Status: store.TaskRunning, Spec: []byte(`{"v":1,"argv":["sleep","300"],"timeout_seconds":600,"concurrency":1}`), Result: []byte(`{"v":1}`),
			Runner: runner}
		if err := env.Store.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	left := leave("", uuid.NewString())
	// stuck's sandbox runs on a provider the next server does not offer.
	at := time.Now().UTC()
	orphanRow := store.Sandbox{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: ws.ID, Kind: store.KindTask, State: store.SandboxRunning,
		Provider: "gone", CreatedAt: at, StartedAt: at, RunningSince: at, LastSettledAt: at, UpdatedAt: at}
	if err := env.Store.CreateSandbox(ctx, orphanRow); err != nil {
		t.Fatal(err)
	}
	stuck := leave("replica-gone", orphanRow.ID)

	next := servertest.New(t, servertest.Options{DataDir: dir})
	get := func(id string) client.Task {
		t.Helper()
		var tk client.Task
		next.Must(t, 200, "GET", tasksPath+"/"+id, nil).Decode(t, &tk)
		return tk
	}
	if tk := get(left.ID); tk.Status != client.TaskFailed || !strings.Contains(tk.Error, "server stopped") || tk.FinishedAt == nil {
		t.Fatalf("the task left running: %+v", tk)
	}
	if tk := get(stuck.ID); tk.Status != client.TaskRunning {
		t.Fatalf("the task whose sandbox could not be ended: %+v; want left running for the next pass", tk)
	}

	// replica-live is live: its presence is held.
	if _, ok, err := env.Store.AcquireLease(ctx, lease.PresencePrefix+"replica-live", "replica-live", time.Now(), time.Hour); err != nil || !ok {
		t.Fatalf("replica-live's presence: %v %v", ok, err)
	}
	unknown, gone, theirs := leave("", ""), leave("replica-gone", ""), leave("replica-live", "")
	n, err := next.Tasks.Sweep(ctx)
	if !errors.Is(err, lease.ErrRowsLeft) || n != 1 {
		t.Fatalf("sweep: %d, %v; want one task ended, and the stuck one left", n, err)
	}
	if tk := get(gone.ID); tk.Status != client.TaskFailed {
		t.Fatalf("the task of a replica gone, after a sweep: %+v", tk)
	}
	if tk := get(unknown.ID); tk.Status != client.TaskRunning {
		t.Fatalf("the task of no known runner, after a sweep: %+v; want left to a start", tk)
	}
	if tk := get(theirs.ID); tk.Status != client.TaskRunning {
		t.Fatalf("the task of a live replica, after a sweep: %+v", tk)
	}
}
