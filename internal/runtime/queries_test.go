package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// wantCode fails unless err is public with code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	pe, ok := errdefs.Public(err)
	if !ok || pe.Code != code {
		t.Fatalf("%s: %v; want %s", what, err, code)
	}
}

// TestRuntimeLookup: a project's runtime id, none for a project without
// one; a workspace's runtimes. (A runtime is found by id on the access
// path: iam.Path.)
func TestRuntimeLookup(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	rt := f.project(t, f.ws, "p")
	id, err := f.svc.RuntimeIDOf(ctx, rt.ProjectID)
	if err != nil || id != rt.ID {
		t.Fatalf("RuntimeIDOf = %q, %v; want %s", id, err, rt.ID)
	}
	if id, err := f.svc.RuntimeIDOf(ctx, newID()); err != nil || id != "" {
		t.Fatalf("RuntimeIDOf a project without one = %q, %v", id, err)
	}
	f.project(t, f.ws, "q")
	f.project(t, f.ws2, "r")
	rts, _, err := f.svc.Runtimes(ctx, f.ws.ID, store.Page{})
	if err != nil || len(rts) != 2 {
		t.Fatalf("Runtimes of a workspace with two = %d, %v", len(rts), err)
	}
}

// TestCurrentSandbox: none before a start; the running row after.
func TestCurrentSandbox(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	rt := f.project(t, f.ws, "p")
	if sb, err := f.svc.CurrentSandbox(ctx, rt); err != nil || sb != nil {
		t.Fatalf("CurrentSandbox before a start = %v, %v; want none", sb, err)
	}
	rt, err := f.svc.Start(ctx, rt.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := f.svc.CurrentSandbox(ctx, rt)
	if err != nil || sb == nil || sb.ID != rt.CurrentSandboxID || sb.State != store.SandboxRunning {
		t.Fatalf("CurrentSandbox after a start = %+v, %v", sb, err)
	}
	rt.CurrentSandboxID = newID() // a row that is not there
	if sb, err := f.svc.CurrentSandbox(ctx, rt); err != nil || sb != nil {
		t.Fatalf("CurrentSandbox of a missing row = %v, %v; want none", sb, err)
	}
}

// TestSandboxLookup: a ledger row is found by our id or the provider's,
// in its org and in a workspace the caller sees only.
func TestSandboxLookup(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	rt, err := f.svc.Start(ctx, f.project(t, f.ws, "p").ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := f.svc.CurrentSandbox(ctx, rt)
	if err != nil || sb == nil {
		t.Fatalf("no sandbox: %v", err)
	}
	all := func(string) bool { return true }
	for _, key := range []string{sb.ID, sb.ProviderSandboxID} {
		got, err := f.svc.Sandbox(ctx, f.org.ID, key, all)
		if err != nil || got.ID != sb.ID {
			t.Fatalf("Sandbox(%q) = %v, %v", key, got.ID, err)
		}
	}
	_, err = f.svc.Sandbox(ctx, f.org.ID, "../etc", all)
	wantCode(t, "neither id", err, CodeInvalidSandboxID)
	_, err = f.svc.Sandbox(ctx, newID(), sb.ID, all)
	wantCode(t, "another org's", err, CodeSandboxNotFound)
	_, err = f.svc.Sandbox(ctx, f.org.ID, sb.ID, func(ws string) bool { return ws == f.ws2.ID })
	wantCode(t, "a workspace not seen", err, CodeSandboxNotFound)
	_, err = f.svc.Sandbox(ctx, f.org.ID, newID(), all)
	wantCode(t, "none", err, CodeSandboxNotFound)

	rows, _, err := f.svc.Sandboxes(ctx, store.SandboxFilter{OrgID: f.org.ID, Workspaces: []string{f.ws2.ID}}, store.Page{})
	if err != nil || len(rows) != 0 {
		t.Fatalf("Sandboxes of a workspace with none = %d, %v", len(rows), err)
	}
	rows, _, err = f.svc.Sandboxes(ctx, store.SandboxFilter{OrgID: f.org.ID, RuntimeID: rt.ID}, store.Page{})
	if err != nil || len(rows) != 1 || rows[0].ID != sb.ID {
		t.Fatalf("Sandboxes of the runtime = %v, %v", rows, err)
	}
}

// TestEgressList: a runtime's decisions, newest first, its own only.
func TestEgressList(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	rt, other := f.project(t, f.ws, "p"), f.project(t, f.ws, "q")
	at := time.Now().UTC().Truncate(time.Microsecond)
	var ds []store.EgressDecision
	for i, r := range []store.Runtime{rt, rt, other} {
		ds = append(ds, store.EgressDecision{
			ID: newID(), OrgID: f.org.ID, WorkspaceID: f.ws.ID, RuntimeID: r.ID, SandboxID: newID(),
			At: at.Add(time.Duration(i) * time.Second), Allowed: true, Reason: "allowed", Method: "CONNECT", Host: "example.com", Port: 443,
		})
	}
	if err := f.st.RecordEgress(ctx, ds); err != nil {
		t.Fatal(err)
	}
	got, _, err := f.svc.Egress(ctx, rt.ID, store.Page{})
	if err != nil || len(got) != 2 || got[0].ID != ds[1].ID || got[1].ID != ds[0].ID {
		t.Fatalf("Egress = %v, %v; want the runtime's two, newest first", got, err)
	}
}

// TestProvisionsSeen: a caller sees the provisions of runtimes in the
// workspaces it sees; seen is asked once per org, and never of a
// provision of no org (a warm sandbox's); a deleted runtime's provisions
// are left out.
func TestProvisionsSeen(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	a, b, c := f.project(t, f.ws, "p"), f.project(t, f.ws2, "q"), f.project(t, f.ws2, "gone")
	for _, rt := range []store.Runtime{a, b, c} {
		if _, err := f.svc.Start(ctx, rt.ID, nil); err != nil {
			t.Fatal(err)
		}
	}
	p, err := f.st.GetProject(ctx, c.ProjectID)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.DeleteProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	f.svc.provisions.begin(Provision{Provider: f.prov.Name(), Kind: "start", Warm: true}, time.Now).end(nil)
	if n := len(f.svc.Provisions()); n != 4 {
		t.Fatalf("%d provisions recorded, want 4 (three runtimes' and a warm sandbox's)", n)
	}
	asked := 0
	got, err := f.svc.ProvisionsSeen(ctx, func(_ context.Context, orgID string) (func(string) bool, error) {
		asked++
		if orgID != f.org.ID {
			t.Errorf("asked about org %q", orgID)
		}
		return func(ws string) bool { return ws == f.ws2.ID }, nil
	})
	if err != nil || asked != 1 || len(got) != 1 || got[0].RuntimeID != b.ID {
		t.Fatalf("ProvisionsSeen = %+v, %v (asked %d); want only %s's, asked once", got, err, asked, b.ID)
	}
	got, err = f.svc.ProvisionsSeen(ctx, func(context.Context, string) (func(string) bool, error) { return nil, nil })
	if err != nil || len(got) != 0 {
		t.Fatalf("ProvisionsSeen of an org not seen = %v, %v", got, err)
	}
}
