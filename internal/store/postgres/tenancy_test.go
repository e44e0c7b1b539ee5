package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
)

// TestDeleteProjectInUse: a project a runtime still refers to is not
// deleted (project_in_use); once the runtime is gone it is, once. The
// runtime row is written with plain SQL so the test holds the tenancy
// queries alone.
func TestDeleteProjectInUse(t *testing.T) {
	s := openTest(t).(*postgres.Store)
	ctx := t.Context()
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	o := store.Org{ID: uuid.NewString(), Name: "acme", CreatedAt: at}
	w := store.Workspace{ID: uuid.NewString(), OrgID: o.ID, Name: "main", CreatedAt: at}
	p := store.Project{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, Name: "p", CreatedAt: at}
	for _, err := range []error{s.CreateOrg(ctx, o), s.CreateWorkspace(ctx, w), s.CreateProject(ctx, p)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	runtimeID := uuid.NewString()
	if _, err := s.Pool().Exec(ctx, `INSERT INTO runtimes (id, org_id, workspace_id, project_id, status, config, version, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 'idle', '{}', 1, now(), now())`, runtimeID, o.ID, w.ID, p.ID); err != nil {
		t.Fatal(err)
	}

	wantCode(t, "delete of a project in use", s.DeleteProject(ctx, p.ID), errdefs.ErrFailedPrecondition, "project_in_use")
	if _, err := s.Pool().Exec(ctx, "DELETE FROM runtimes WHERE id = $1", runtimeID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteProject(ctx, p.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := s.GetProject(ctx, p.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("get after delete: got %v, want not found", err)
	}
	wantCode(t, "second delete", s.DeleteProject(ctx, p.ID), errdefs.ErrNotFound, "project_not_found")
}

// wantCode fails the test unless err is of kind with the public code.
func wantCode(t *testing.T, what string, err, kind error, code string) {
	t.Helper()
	e, ok := errdefs.Public(err)
	if !errors.Is(err, kind) || !ok || e.Code != code {
		t.Fatalf("%s: got %v, want %v with code %s", what, err, kind, code)
	}
}
