package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

func testMeta(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, err := s.GetMeta(ctx, "installation_id")
	wantKind(t, err, errdefs.ErrNotFound)

	steps := []struct {
		name, key, value string
		wantErr          error
	}{
		{"set", "installation_id", "abc", nil},
		{"overwrite", "installation_id", "def", nil},
		{"other key", "schema_note", "", nil},
		{"empty key", "", "x", errdefs.ErrInvalidArgument},
	}
	for _, tc := range steps {
		t.Run(tc.name, func(t *testing.T) {
			err := s.SetMeta(ctx, tc.key, tc.value)
			wantKind(t, err, tc.wantErr)
			if tc.wantErr != nil {
				return
			}
			got, err := s.GetMeta(ctx, tc.key)
			must(t, err)
			equal(t, "meta value", got, tc.value)
		})
	}
	t.Run("init once", func(t *testing.T) {
		const n = 8
		got := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				v, err := s.InitMeta(ctx, "egress_key", fmt.Sprintf("value-%d", i))
				must(t, err)
				got[i] = v
			})
		}
		wg.Wait()
		stored, err := s.GetMeta(ctx, "egress_key")
		must(t, err)
		for i, v := range got {
			equal(t, fmt.Sprintf("value InitMeta %d returned", i), v, stored)
		}
		v, err := s.InitMeta(ctx, "installation_id", "ignored")
		must(t, err)
		equal(t, "InitMeta of a key with a value", v, "def")
		_, err = s.InitMeta(ctx, "", "x")
		wantKind(t, err, errdefs.ErrInvalidArgument)
	})
}

func testOrgs(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()

	t.Run("get", func(t *testing.T) {
		got, err := s.GetOrg(ctx, o.ID)
		must(t, err)
		equal(t, "GetOrg", got, normOrg(o))
		got, err = s.GetOrgByName(ctx, o.Name)
		must(t, err)
		equal(t, "GetOrgByName", got, normOrg(o))
	})

	t.Run("not found", func(t *testing.T) {
		_, err := s.GetOrg(ctx, uuid.NewString())
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.GetOrgByName(ctx, "no-such-org")
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.GetOrg(ctx, "")
		wantKind(t, err, errdefs.ErrNotFound)
	})

	creates := []struct {
		name    string
		org     store.Org
		wantErr error
	}{
		{"duplicate id", store.Org{ID: o.ID, Name: "other-name", CreatedAt: base}, errdefs.ErrConflict},
		{"duplicate name", store.Org{ID: uuid.NewString(), Name: o.Name, CreatedAt: base}, errdefs.ErrConflict},
		{"missing id", store.Org{Name: "no-id", CreatedAt: base}, errdefs.ErrInvalidArgument},
		{"missing name", store.Org{ID: uuid.NewString(), CreatedAt: base}, errdefs.ErrInvalidArgument},
		{"zero created at", store.Org{ID: uuid.NewString(), Name: "fresh"}, nil},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			wantKind(t, s.CreateOrg(ctx, tc.org), tc.wantErr)
			if tc.wantErr != nil {
				return
			}
			got, err := s.GetOrg(ctx, tc.org.ID)
			must(t, err)
			if got.CreatedAt.IsZero() {
				t.Fatalf("CreatedAt is zero; the store should have set it")
			}
		})
	}

	t.Run("concurrent creates of one name", func(t *testing.T) {
		name := "contested-" + uuid.NewString()
		errs := race(12, func(int) error {
			return s.CreateOrg(ctx, store.Org{ID: uuid.NewString(), Name: name})
		})
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
				continue
			}
			wantKind(t, err, errdefs.ErrConflict)
		}
		equal(t, "creates that won", won, 1)
	})
}

func testWorkspaces(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o1, o2 := f.org(), f.org()
	w := f.workspace(o1)

	t.Run("get", func(t *testing.T) {
		got, err := s.GetWorkspace(ctx, w.ID)
		must(t, err)
		equal(t, "GetWorkspace", got, normWorkspace(w))
		got, err = s.GetWorkspaceByName(ctx, o1.ID, w.Name)
		must(t, err)
		equal(t, "GetWorkspaceByName", got, normWorkspace(w))
	})

	t.Run("not found", func(t *testing.T) {
		_, err := s.GetWorkspace(ctx, uuid.NewString())
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.GetWorkspaceByName(ctx, o2.ID, w.Name) // right name, wrong org
		wantKind(t, err, errdefs.ErrNotFound)
	})

	creates := []struct {
		name    string
		ws      store.Workspace
		wantErr error
	}{
		{"same name in another org", store.Workspace{ID: uuid.NewString(), OrgID: o2.ID, Name: w.Name, CreatedAt: base}, nil},
		{"duplicate name in org", store.Workspace{ID: uuid.NewString(), OrgID: o1.ID, Name: w.Name, CreatedAt: base}, errdefs.ErrConflict},
		{"duplicate id", store.Workspace{ID: w.ID, OrgID: o1.ID, Name: "other", CreatedAt: base}, errdefs.ErrConflict},
		{"unknown org", store.Workspace{ID: uuid.NewString(), OrgID: uuid.NewString(), Name: "orphan", CreatedAt: base}, errdefs.ErrFailedPrecondition},
		{"missing org", store.Workspace{ID: uuid.NewString(), Name: "orphan", CreatedAt: base}, errdefs.ErrInvalidArgument},
		{"missing name", store.Workspace{ID: uuid.NewString(), OrgID: o1.ID, CreatedAt: base}, errdefs.ErrInvalidArgument},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			wantKind(t, s.CreateWorkspace(ctx, tc.ws), tc.wantErr)
		})
	}

	t.Run("list is per org", func(t *testing.T) {
		got, next, err := s.ListWorkspaces(ctx, o1.ID, store.Page{})
		must(t, err)
		equal(t, "workspaces of org 1", ids(got, func(w store.Workspace) string { return w.ID }), []string{w.ID})
		equal(t, "next cursor", next, "")
		got, _, err = s.ListWorkspaces(ctx, uuid.NewString(), store.Page{})
		must(t, err)
		equal(t, "workspaces of an unknown org", len(got), 0)
	})
}

func testProjects(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w1, w2 := f.workspace(o), f.workspace(o)
	p := f.project(w1)

	t.Run("get", func(t *testing.T) {
		got, err := s.GetProject(ctx, p.ID)
		must(t, err)
		equal(t, "GetProject", got, normProject(p))
		got, err = s.GetProjectByName(ctx, w1.ID, p.Name)
		must(t, err)
		equal(t, "GetProjectByName", got, normProject(p))
		_, err = s.GetProjectByName(ctx, w2.ID, p.Name)
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.GetProject(ctx, uuid.NewString())
		wantKind(t, err, errdefs.ErrNotFound)
	})

	creates := []struct {
		name    string
		p       store.Project
		wantErr error
	}{
		{"same name in another workspace", store.Project{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w2.ID, Name: p.Name, CreatedAt: base}, nil},
		{"duplicate name in workspace", store.Project{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w1.ID, Name: p.Name, CreatedAt: base}, errdefs.ErrConflict},
		{"duplicate id", store.Project{ID: p.ID, OrgID: o.ID, WorkspaceID: w1.ID, Name: "other", CreatedAt: base}, errdefs.ErrConflict},
		{"unknown workspace", store.Project{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: uuid.NewString(), Name: "orphan", CreatedAt: base}, errdefs.ErrFailedPrecondition},
		{"missing workspace", store.Project{ID: uuid.NewString(), OrgID: o.ID, Name: "orphan", CreatedAt: base}, errdefs.ErrInvalidArgument},
		{"missing name", store.Project{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w1.ID, CreatedAt: base}, errdefs.ErrInvalidArgument},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			wantKind(t, s.CreateProject(ctx, tc.p), tc.wantErr)
		})
	}

	t.Run("delete", func(t *testing.T) {
		r := f.runtime(w1) // a project with a runtime
		err := s.DeleteProject(ctx, r.ProjectID)
		wantKind(t, err, errdefs.ErrFailedPrecondition) // its runtime still refers to it
		must(t, s.DeleteRuntime(ctx, r.ID))
		must(t, s.DeleteProject(ctx, r.ProjectID))
		_, err = s.GetProject(ctx, r.ProjectID)
		wantKind(t, err, errdefs.ErrNotFound)
		wantKind(t, s.DeleteProject(ctx, r.ProjectID), errdefs.ErrNotFound)
		wantKind(t, s.DeleteProject(ctx, uuid.NewString()), errdefs.ErrNotFound)
		// The other project is untouched.
		_, err = s.GetProject(ctx, p.ID)
		must(t, err)
	})
}
