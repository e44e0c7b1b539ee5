package e2e

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestTaskFromTemplate: a task made from a template runs in the
// template's image (Debian here, where the runtime's is busybox), and
// records the template it came from.
func TestTaskFromTemplate(t *testing.T) {
	testenv.RequireDocker(t, testenv.DefaultImage)
	e := newTaskEnv(t)
	e.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/templates", pc.CreateTemplateRequest{
		Name: "deb", Runtime: &pc.RuntimeConfig{Image: testenv.DefaultImage, MemoryMB: 256},
	})
	b := e.run(t, pc.CreateTasksRequest{Template: "deb", Argv: []string{"cat", "/etc/debian_version"}})
	tk := e.done(t, b.Tasks[0].ID)
	if tk.Status != pc.TaskSucceeded || !regexp.MustCompile(`^\d+`).MatchString(tk.Stdout) {
		t.Fatalf("a task from a Debian template: %+v", tk)
	}
	if tk.Template != "deb" || tk.Image != testenv.DefaultImage || tk.RuntimeID != "" {
		t.Fatalf("the task's source: template %q, image %q, runtime %q", tk.Template, tk.Image, tk.RuntimeID)
	}
	if sb := e.row(t, tk.SandboxID); sb.Image != testenv.DefaultImage || sb.Kind != pc.KindTask || sb.State != pc.SandboxKilled {
		t.Fatalf("the task's ledger row: %+v", sb)
	}
	e.gone(t, tk.SandboxID)
}

// TestTaskFromSnapshot: a task made from a runtime's snapshot sees the
// files the runtime had when the snapshot was taken, not what it wrote
// after; its own writes stay in its sandbox. Another org's admin cannot
// make a task from it (404), and a task whose snapshot was deleted
// before it ran fails, saying so.
func TestTaskFromSnapshot(t *testing.T) {
	e := newTaskEnv(t)
	rt := "/api/v1/org/acme/ws/dev/runtimes/" + e.runtimeID
	e.env.Must(t, 200, "POST", rt+"/start", nil)
	sdk := e.sdk(t)
	write := func(script string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		res, err := sdk.Exec(ctx, "acme", "dev", e.runtimeID, pc.ExecRequest{Argv: []string{"sh", "-c", script}})
		if err != nil || res.Exit == nil || res.Exit.Code != 0 {
			t.Fatalf("exec %q: %v %+v", script, err, res)
		}
	}
	write("mkdir -p /workspace/data && echo forty-two > /workspace/data/answer.txt")
	var snap pc.Snapshot
	e.env.Must(t, 201, "POST", rt+"/snapshots", pc.CreateSnapshotRequest{Name: "ready"}).Decode(t, &snap)
	write("echo later > /workspace/data/answer.txt")

	b := e.run(t, pc.CreateTasksRequest{Snapshot: snap.ID, Count: 2,
		Argv:  []string{"sh", "-c", "cat data/answer.txt && echo mine > data/answer.txt"},
		Score: []string{"sh", "-c", `printf '{"kept": "%s"}' "$(cat data/answer.txt)"`}})
	for _, st := range b.Tasks {
		tk := e.done(t, st.ID)
		if tk.Status != pc.TaskSucceeded || tk.Stdout != "forty-two\n" || string(tk.Score) != `{"kept":"mine"}` {
			t.Fatalf("a task from a snapshot: %+v (score %s)", tk, tk.Score)
		}
		if tk.SnapshotID != snap.ID || tk.Image != snap.Image || tk.RuntimeID != "" {
			t.Fatalf("the task's source: snapshot %q, image %q, runtime %q", tk.SnapshotID, tk.Image, tk.RuntimeID)
		}
		e.gone(t, tk.SandboxID)
	}
	if got := execOut(t, sdk, e.runtimeID, "cat", "/workspace/data/answer.txt"); got != "later\n" {
		t.Fatalf("the runtime's own file after the tasks: %q", got)
	}

	// Another org's admin: the snapshot is not found, and nothing is made.
	key := otherOrgAdmin(t, e)
	r := e.env.DoKey(t, key, "POST", "/api/v1/org/rival/ws/dev/tasks", pc.CreateTasksRequest{Snapshot: snap.ID, Argv: []string{"true"}})
	if r.Status != 404 || r.Code() != "snapshot_not_found" {
		t.Fatalf("a task from another org's snapshot: %d %s", r.Status, r.Body)
	}
	var l pc.List[pc.Task]
	e.env.MustKey(t, key, 200, "GET", "/api/v1/org/rival/ws/dev/tasks", nil).Decode(t, &l)
	if len(l.Items) != 0 {
		t.Fatalf("the other org has tasks: %+v", l.Items)
	}

	// A snapshot deleted before its task's sandbox is filled: the task
	// fails, its sandbox killed. The second task of the batch waits for
	// the first, which runs until it is cancelled.
	late := e.run(t, pc.CreateTasksRequest{Snapshot: snap.ID, Argv: []string{"sleep", "300"}, Count: 2, Concurrency: 1})
	testenv.WaitFor(t, "the first task to run", func() bool { return e.task(t, late.Tasks[0].ID).Status != pc.TaskPending })
	e.env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/snapshots/"+snap.ID, nil)
	if r := e.env.Do(t, "DELETE", tasksPath+"/"+late.Tasks[0].ID, nil); r.Status != 200 && r.Code() != "task_finished" {
		t.Fatalf("cancelling the first task: %d %s", r.Status, r.Body)
	}
	tk := e.done(t, late.Tasks[1].ID)
	if tk.Status != pc.TaskFailed || !strings.Contains(tk.Error, "snapshot") {
		t.Fatalf("a task whose snapshot was deleted: %+v", tk)
	}
	e.gone(t, tk.SandboxID)
}

// sdk is a Go client of the env's API as its admin.
func (e *taskEnv) sdk(t *testing.T) *pc.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := pc.New(e.env.URL, e.env.Key, pc.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// execOut runs argv in the runtime rid and returns its stdout.
func execOut(t *testing.T, c *pc.Client, rid string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := c.Exec(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: argv})
	if err != nil || res.Exit == nil || res.Exit.Code != 0 {
		t.Fatalf("exec %q: %v %+v", argv, err, res)
	}
	return string(res.Stdout)
}

// otherOrgAdmin makes org rival with workspace dev and returns its
// admin's key.
func otherOrgAdmin(t *testing.T, e *taskEnv) string {
	t.Helper()
	e.env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "rival"})
	e.env.Must(t, 201, "POST", "/api/v1/org/rival/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	e.env.Must(t, 201, "POST", "/api/v1/org/rival/members", pc.AddOrgMemberRequest{Member: "rival@example.com", Role: "admin"})
	var k pc.CreatedKey
	e.env.Must(t, 201, "POST", "/api/v1/org/rival/keys", pc.CreateKeyRequest{Member: "rival@example.com", Role: "admin"}).Decode(t, &k)
	return k.Key
}
