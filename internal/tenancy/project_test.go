package tenancy_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// tree is an org with two workspaces and a project (with its runtime) in
// the first.
type tree struct {
	svc     *tenancy.Service
	st      store.Store
	org     store.Org
	ws, ws2 store.Workspace
	p       store.Project
	rt      store.Runtime
}

func newTree(t *testing.T) tree {
	t.Helper()
	ctx := t.Context()
	st := openStore(t)
	tr := tree{st: st, svc: tenancy.New(tenancy.Config{Store: st})}
	var err error
	if tr.org, err = tr.svc.CreateOrg(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if tr.ws, err = tr.svc.CreateWorkspace(ctx, tr.org, "dev"); err != nil {
		t.Fatal(err)
	}
	if tr.ws2, err = tr.svc.CreateWorkspace(ctx, tr.org, "ops"); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	tr.p = store.Project{ID: uuid.NewString(), OrgID: tr.org.ID, WorkspaceID: tr.ws.ID, Name: "web", CreatedAt: now}
	if err := st.CreateProject(ctx, tr.p); err != nil {
		t.Fatal(err)
	}
	tr.rt = store.Runtime{ID: uuid.NewString(), OrgID: tr.org.ID, WorkspaceID: tr.ws.ID, ProjectID: tr.p.ID, Status: store.RuntimeIdle, CreatedAt: now}
	if err := st.CreateRuntime(ctx, tr.rt); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestProject: a project is found by id or name in its workspace only.
func TestProject(t *testing.T) {
	ctx := t.Context()
	tr := newTree(t)
	for _, key := range []string{tr.p.ID, tr.p.Name} {
		got, err := tr.svc.Project(ctx, tr.ws, key)
		if err != nil || got.ID != tr.p.ID {
			t.Fatalf("Project(%q) = %v, %v", key, got.ID, err)
		}
	}
	for _, tc := range []struct {
		what string
		ws   store.Workspace
		key  string
		code string
	}{
		{"neither an id nor a name", tr.ws, "Web!", "invalid_project"},
		{"another workspace's, by id", tr.ws2, tr.p.ID, "project_not_found"},
		{"another workspace's, by name", tr.ws2, tr.p.Name, "project_not_found"},
		{"none", tr.ws, uuid.NewString(), "project_not_found"},
	} {
		_, err := tr.svc.Project(ctx, tc.ws, tc.key)
		wantCode(t, tc.what, err, tc.code)
	}
	ps, _, err := tr.svc.Projects(ctx, tr.ws.ID, store.Page{})
	if err != nil || len(ps) != 1 || ps[0].ID != tr.p.ID {
		t.Fatalf("Projects = %v, %v", ps, err)
	}
	if ps, _, err := tr.svc.Projects(ctx, tr.ws2.ID, store.Page{}); err != nil || len(ps) != 0 {
		t.Fatalf("Projects of an empty workspace = %v, %v", ps, err)
	}
}

// TestNames: each thing by the name people know; something gone has
// none.
func TestNames(t *testing.T) {
	ctx := t.Context()
	tr := newTree(t)
	n := tr.svc.Names()
	for _, tc := range []struct {
		what, got, want string
	}{
		{"project", n.Project(ctx, tr.p.ID), "web"},
		{"no project", n.Project(ctx, ""), ""},
		{"a missing project", n.Project(ctx, uuid.NewString()), ""},
		{"runtime", n.Runtime(ctx, tr.rt.ID), "web"},
		{"a missing runtime", n.Runtime(ctx, uuid.NewString()), ""},
		{"usage by runtime", n.UsageKey(ctx, store.UsageByRuntime, tr.rt.ID), "web"},
		{"usage by project", n.UsageKey(ctx, store.UsageByProject, tr.p.ID), "web"},
		{"usage by workspace", n.UsageKey(ctx, store.UsageByWorkspace, tr.ws2.ID), "ops"},
		{"usage by org", n.UsageKey(ctx, store.UsageByOrg, tr.org.ID), "acme"},
		{"usage by sandbox", n.UsageKey(ctx, store.UsageBySandbox, uuid.NewString()), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("name of %s = %q; want %q", tc.what, tc.got, tc.want)
		}
	}
	if err := tr.svc.Check(ctx); err != nil {
		t.Fatalf("Check on an open store = %v", err)
	}
	tr.st.Close()
	if err := tr.svc.Check(ctx); err == nil {
		t.Fatal("Check on a closed store passed")
	}
}
