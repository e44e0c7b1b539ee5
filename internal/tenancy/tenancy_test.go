package tenancy_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/tenancy"
)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	pe, ok := errdefs.Public(err)
	if !ok || pe.Code != code {
		t.Fatalf("%s: %v; want %s", what, err, code)
	}
}

// failingOpener refuses every new org.
type failingOpener struct{}

var errRefused = errors.New("refused")

func (failingOpener) OpenOrg(context.Context, store.CreditQueries, string) error { return errRefused }

// TestCreateOrg: a new org gets what the ledger opens for it in the same
// transaction; a taken name is 409 org_exists, a bad one 400; an opener
// that fails leaves no org.
func TestCreateOrg(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	l := ledger.New(ledger.Config{Store: st, NewOrgMicros: 5_000_000})
	svc := tenancy.New(tenancy.Config{Store: st, Opener: l})
	o, err := svc.CreateOrg(ctx, "acme")
	if err != nil || o.Name != "acme" || o.ID == "" || o.CreatedAt.IsZero() {
		t.Fatalf("CreateOrg = %+v, %v", o, err)
	}
	acct, err := l.Account(ctx, o.ID)
	if err != nil || acct.BalanceMicros != 5_000_000 {
		t.Fatalf("new org's account = %+v, %v; want its starting credits", acct, err)
	}
	_, err = svc.CreateOrg(ctx, "acme")
	wantCode(t, "a taken name", err, "org_exists")
	_, err = svc.CreateOrg(ctx, "Acme!")
	wantCode(t, "a bad name", err, "invalid_name")

	refusing := tenancy.New(tenancy.Config{Store: st, Opener: failingOpener{}})
	if _, err := refusing.CreateOrg(ctx, "other"); !errors.Is(err, errRefused) {
		t.Fatalf("CreateOrg with a failing opener = %v", err)
	}
	if _, err := st.GetOrgByName(ctx, "other"); !errdefs.IsNotFound(err) {
		t.Fatalf("an org whose opening failed was kept: %v", err)
	}
}

// TestOrgs: a key sees its org, a user the orgs they are a member of, the
// installation admin every org a page at a time.
func TestOrgs(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	svc := tenancy.New(tenancy.Config{Store: st})
	var orgs []store.Org
	for _, name := range []string{"a", "b", "c"} {
		o, err := svc.CreateOrg(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		orgs = append(orgs, o)
	}
	u := store.User{ID: uuid.NewString(), Email: "u@example.com", CreatedAt: time.Now()}
	if err := st.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	for _, o := range []store.Org{orgs[0], orgs[2]} {
		if err := st.AddOrgMember(ctx, store.OrgMember{ID: uuid.NewString(), OrgID: o.ID, UserID: u.ID, Role: "member", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	idsOf := func(os []store.Org) []string {
		var out []string
		for _, o := range os {
			out = append(out, o.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name string
		v    tenancy.Viewer
		want []string
	}{
		{"key", tenancy.Viewer{OrgID: orgs[1].ID}, []string{"b"}},
		{"user", tenancy.Viewer{UserID: u.ID}, []string{"a", "c"}},
		{"installation", tenancy.Viewer{Installation: true}, []string{"a", "b", "c"}},
	} {
		got, _, err := svc.Orgs(ctx, tc.v, store.Page{})
		if err != nil || !slices.Equal(idsOf(got), tc.want) {
			t.Errorf("%s sees %v, %v; want %v", tc.name, idsOf(got), err, tc.want)
		}
	}
	page, next, err := svc.Orgs(ctx, tenancy.Viewer{Installation: true}, store.Page{Limit: 2})
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("first page of two = %d orgs, next %q, %v", len(page), next, err)
	}
}

// TestWorkspaces: names are unique in an org; a caller kept to some
// workspaces lists those that exist, oldest first.
func TestWorkspaces(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := tenancy.New(tenancy.Config{Store: st, Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	o, err := svc.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var wss []store.Workspace
	for _, name := range []string{"dev", "ops", "qa"} {
		ws, err := svc.CreateWorkspace(ctx, o, name)
		if err != nil {
			t.Fatal(err)
		}
		wss = append(wss, ws)
	}
	_, err = svc.CreateWorkspace(ctx, o, "dev")
	wantCode(t, "a taken name", err, "workspace_exists")
	_, err = svc.CreateWorkspace(ctx, o, "-dev")
	wantCode(t, "a bad name", err, "invalid_name")

	all, _, err := svc.Workspaces(ctx, o.ID, nil, store.Page{})
	if err != nil || len(all) != 3 {
		t.Fatalf("Workspaces = %d, %v", len(all), err)
	}
	only := []string{wss[2].ID, uuid.NewString(), wss[0].ID}
	got, next, err := svc.Workspaces(ctx, o.ID, only, store.Page{Limit: 1})
	if err != nil || next != "" || len(got) != 2 || got[0].ID != wss[0].ID || got[1].ID != wss[2].ID {
		t.Fatalf("Workspaces kept to two = %+v, %q, %v; want dev then qa in one page", got, next, err)
	}
	if got, _, err := svc.Workspaces(ctx, o.ID, []string{}, store.Page{}); err != nil || len(got) != 0 {
		t.Fatalf("Workspaces kept to none = %v, %v", got, err)
	}
}
