// Package storetest is the conformance suite every store.Store dialect
// passes. A dialect's test calls Run with a function that opens a fresh,
// empty store (and registers its own cleanup with t.Cleanup):
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
//	}
//
// The suite checks the contract documented in package store: records
// round-trip, listings paginate in their documented order, errors have the
// documented kinds, optimistic versions serialize concurrent writers, and
// InTx commits or rolls back as a whole.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/store"
)

// Run runs the conformance suite. open must return a fresh, empty store
// for each call.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Meta", testMeta},
		{"Orgs", testOrgs},
		{"Workspaces", testWorkspaces},
		{"Projects", testProjects},
		{"Runtimes", testRuntimes},
		{"RuntimeVerbs", testRuntimeVerbs},
		{"RuntimesByStatus", testRuntimesByStatus},
		{"Sandboxes", testSandboxes},
		{"SandboxVerbs", testSandboxVerbs},
		{"SandboxListing", testSandboxListing},
		{"APIKeys", testAPIKeys},
		{"Pagination", testPagination},
		{"Cursors", testCursors},
		{"Timestamps", testTimestamps},
		{"InTx", testInTx},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"CreditAccounts", testCreditAccounts},
		{"Settlements", testSettlements},
		{"SettleMany", testSettleMany},
		{"Journal", testJournal},
		{"RunningSandboxes", testRunningSandboxes},
		{"CreditRaces", testCreditRaces},
		{"Seats", testSeats},
		{"WarmPool", testWarmPool},
		{"WarmClaimRace", testWarmClaimRace},
		{"Egress", testEgress},
		{"SandboxEgress", testSandboxEgress},
		{"Secrets", testSecrets},
		{"CapabilityVersions", testCapabilityVersions},
		{"Bindings", testBindings},
		{"Sessions", testSessions},
		{"Users", testUsers},
		{"OrgMembers", testOrgMembers},
		{"ScopedAPIKeys", testScopedAPIKeys},
		{"AuthChallenges", testAuthChallenges},
		{"AuthSessions", testAuthSessions},
		{"KeySessions", testKeySessions},
		{"SSHKeys", testSSHKeys},
		{"Invitations", testInvitations},
		{"Leases", testLeases},
		{"LeaseRace", testLeaseRace},
		{"Buckets", testBuckets},
		{"Holds", testHolds},
		{"HoldExpiry", testHoldExpiry},
		{"HoldRace", testHoldRace},
		{"E2BSandboxes", testE2BSandboxes},
		{"Templates", testTemplates},
		{"Tasks", testTasks},
		{"Worlds", testWorlds},
		{"Snapshots", testSnapshots},
		{"Workflows", testWorkflows},
		{"TemplateBuilds", testTemplateBuilds},
		{"SnapshotCharges", testSnapshotCharges},
		{"Hosts", testHosts},
		{"SetSandboxExpiry", testSetSandboxExpiry},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

// base is the suite's reference time: not UTC, with nanoseconds, so every
// round trip checks conversion to UTC and truncation to microseconds.
var base = time.Date(2025, 6, 1, 12, 30, 0, 123456789, time.FixedZone("UTC+2", 2*60*60))

// fixture creates records with unique ids and names and strictly increasing
// creation times.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	s    store.Store
	tick int
}

func newFixture(t *testing.T, s store.Store) *fixture {
	return &fixture{t: t, ctx: t.Context(), s: s}
}

// next returns the next creation time.
func (f *fixture) next() time.Time {
	f.tick++
	return base.Add(time.Duration(f.tick) * time.Second)
}

func (f *fixture) name(prefix string) string {
	return fmt.Sprintf("%s-%d-%s", prefix, f.tick, uuid.NewString()[:8])
}

func (f *fixture) org() store.Org {
	f.t.Helper()
	o := store.Org{ID: uuid.NewString(), CreatedAt: f.next()}
	o.Name = f.name("org")
	must(f.t, f.s.CreateOrg(f.ctx, o))
	return o
}

func (f *fixture) workspace(o store.Org) store.Workspace {
	f.t.Helper()
	w := store.Workspace{ID: uuid.NewString(), OrgID: o.ID, CreatedAt: f.next()}
	w.Name = f.name("ws")
	must(f.t, f.s.CreateWorkspace(f.ctx, w))
	return w
}

func (f *fixture) project(w store.Workspace) store.Project {
	f.t.Helper()
	p := store.Project{ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, CreatedAt: f.next()}
	p.Name = f.name("proj")
	p.Description = "about " + p.Name
	must(f.t, f.s.CreateProject(f.ctx, p))
	return p
}

// runtimeFor builds (without storing) a runtime for p.
func (f *fixture) runtimeFor(p store.Project) store.Runtime {
	at := f.next()
	return store.Runtime{
		ID:          uuid.NewString(),
		OrgID:       p.OrgID,
		WorkspaceID: p.WorkspaceID,
		ProjectID:   p.ID,
		Status:      store.RuntimeIdle,
		Config: store.RuntimeConfig{
			Image: "paddock/base:1", Provider: "fake", CPUMillis: 1000, MemoryMB: 512,
			PidsLimit: 256, Network: store.NetworkConfig{Mode: "none"}, IdleTimeoutSeconds: 300,
		},
		WorkspaceVolume: "paddock-ws-" + p.ID,
		CreatedAt:       at,
		UpdatedAt:       at,
	}
}

// runtime stores a new runtime in a new project of w.
func (f *fixture) runtime(w store.Workspace) store.Runtime {
	f.t.Helper()
	r := f.runtimeFor(f.project(w))
	must(f.t, f.s.CreateRuntime(f.ctx, r))
	r.Version = 1
	return r
}

// sandboxFor builds (without storing) a minimal ledger row of o.
func (f *fixture) sandboxFor(o store.Org) store.Sandbox {
	at := f.next()
	return store.Sandbox{
		ID:        uuid.NewString(),
		OrgID:     o.ID,
		Kind:      store.KindTask,
		State:     store.SandboxStarting,
		Provider:  "fake",
		CreatedAt: at,
		UpdatedAt: at,
	}
}

// sandbox stores a row of o after edit (if any) changed it.
func (f *fixture) sandbox(o store.Org, edit func(*store.Sandbox)) store.Sandbox {
	f.t.Helper()
	s := f.sandboxFor(o)
	if edit != nil {
		edit(&s)
	}
	must(f.t, f.s.CreateSandbox(f.ctx, s))
	s.Version, s.BillingVersion = 1, 1
	return s
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// wantKind fails the test unless err is of kind (nil kind: no error).
func wantKind(t *testing.T, err, kind error) {
	t.Helper()
	switch {
	case kind == nil && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case kind != nil && !errors.Is(err, kind):
		t.Fatalf("error = %v, want kind %v", err, kind)
	}
}

// ts normalizes a time the way the store keeps it.
func ts(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Truncate(time.Microsecond).UTC()
}

func normOrg(o store.Org) store.Org {
	o.CreatedAt = ts(o.CreatedAt)
	return o
}

func normWorkspace(w store.Workspace) store.Workspace {
	w.CreatedAt = ts(w.CreatedAt)
	return w
}

func normProject(p store.Project) store.Project {
	p.CreatedAt = ts(p.CreatedAt)
	return p
}

func normRuntime(r store.Runtime) store.Runtime {
	r.CreatedAt, r.UpdatedAt = ts(r.CreatedAt), ts(r.UpdatedAt)
	return r
}

func normSandbox(s store.Sandbox) store.Sandbox {
	for _, p := range []*time.Time{&s.CreatedAt, &s.StartedAt, &s.PausedAt, &s.KilledAt, &s.ExpiresAt, &s.LastSettledAt, &s.RunningSince, &s.UpdatedAt} {
		*p = ts(*p)
	}
	if len(s.ProviderState) == 0 {
		s.ProviderState = nil
	}
	return s
}

func normAPIKey(k store.APIKey) store.APIKey {
	k.CreatedAt, k.ExpiresAt, k.RevokedAt = ts(k.CreatedAt), ts(k.ExpiresAt), ts(k.RevokedAt)
	return k
}

// equal fails the test unless got equals want.
func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// ids returns the ids of records, for comparing listings.
func ids[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	return out
}

// race runs fn in n goroutines released at once and returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return errs
}
