package world

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// recorder is the runtime service as a reconciliation uses it: it ends
// members and removes networks, and records the status each world's row
// had in the store when it did. A member of a world in broken cannot be
// inspected (its provider gone). The members' sandbox rows are not
// stored: a member's end is recorded, not done.
type recorder struct {
	Runtimes
	st     *sqlite.Store
	mu     sync.Mutex
	seen   map[string][]string // world id: its status at each teardown call
	broken map[string]bool     // sandbox ids whose provider is gone
	member map[string]string   // sandbox id: its world id
}

func (r *recorder) note(world string) {
	w, err := r.st.GetWorld(context.Background(), world)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.seen[world] = append(r.seen[world], "error: "+err.Error())
		return
	}
	r.seen[world] = append(r.seen[world], w.Status)
}

func (r *recorder) EndWorldSandbox(_ context.Context, id, _ string) (store.Sandbox, error) {
	r.note(r.member[id])
	if r.broken[id] {
		return store.Sandbox{}, errdefs.InvalidArgument("unknown_provider", "provider %q is not offered by this installation", "gone")
	}
	return store.Sandbox{}, errdefs.NotFound("sandbox_not_found", "no row")
}

func (r *recorder) RemoveWorldNetwork(_ context.Context, _, world string) error {
	r.note(world)
	return nil
}

func (r *recorder) WorldNetworks(context.Context) (map[string][]string, error) { return nil, nil }

// replicas is a fixed view of the replicas: self, and those live.
type replicas struct {
	self string
	live []string
	st   *sqlite.Store
}

func (r replicas) Replica() string { return r.self }

func (r replicas) Runners(ctx context.Context) (lease.Runners, error) {
	p := lease.NewPresence(r.st, lease.Config{Replica: r.self, TTL: time.Minute})
	return p.Runners(ctx)
}

// TestReconcileClaimsFirst holds a world reconciliation to its order and
// its reach, on a real SQLite store:
//
//   - nothing of an orphaned world is torn down before the row is claimed
//     (deleting, this replica its runner): a runner that comes back then
//     cannot write its world running;
//   - a world of no known runner ("", an older binary's) is left by a
//     sweep and taken at a start;
//   - a world whose member cannot be ended (its provider gone) is left
//     deleting for the next pass, the others are reconciled, and the
//     error says rows were left; a claim cut short (a claimer that died,
//     its world deleting with its error) is finished failed.
func TestReconcileClaimsFirst(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now().UTC()
	org := store.Org{ID: uuid.NewString(), Name: "acme", CreatedAt: now}
	ws := store.Workspace{ID: uuid.NewString(), OrgID: org.ID, Name: "dev", CreatedAt: now}
	if err := st.CreateOrg(ctx, org); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	// "b" is this replica; "a" is live (its presence held); "gone" is not.
	if _, ok, err := st.AcquireLease(ctx, lease.PresencePrefix+"a", "a", now, time.Hour); err != nil || !ok {
		t.Fatalf("a's presence: %v %v", ok, err)
	}
	rec := &recorder{st: st, seen: map[string][]string{}, broken: map[string]bool{}, member: map[string]string{}}
	s := New(Config{Store: st, Runtimes: rec, Replicas: replicas{self: "b", st: st}, Logger: slog.New(slog.DiscardHandler)})

	put := func(name, status, runner, failure string, broken bool) (store.World, string) {
		t.Helper()
		m := Member{Name: "m", Config: store.RuntimeConfig{Provider: "docker"}, SandboxID: uuid.NewString()}
		spec, _ := json.Marshal(Spec{V: 1, Provider: "docker", Members: []Member{m}, Error: failure})
		w := store.World{ID: uuid.NewString(), OrgID: org.ID, WorkspaceID: ws.ID, Name: name, Status: status,
			Spec: spec, CreatedAt: now, Runner: runner}
		if err := st.CreateWorld(ctx, w); err != nil {
			t.Fatal(err)
		}
		rec.member[m.SandboxID] = w.ID
		rec.broken[m.SandboxID] = broken
		return w, m.SandboxID
	}
	status := func(w store.World) (string, Spec) {
		t.Helper()
		got, err := st.GetWorld(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Decode(got)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status, d.Spec
	}

	orphan, _ := put("orphan", store.WorldStarting, "gone", "", false)
	theirs, _ := put("theirs", store.WorldStarting, "a", "", false)
	unknown, _ := put("unknown", store.WorldStarting, "", "", false)
	stuck, stuckMember := put("stuck", store.WorldStarting, "gone", "", true)
	halfClaimed, _ := put("half-claimed", store.WorldDeleting, "gone", reasonRestarted, false)

	n, err := s.Sweep(ctx)
	if !errors.Is(err, lease.ErrRowsLeft) || n != 2 {
		t.Fatalf("sweep: %d, %v; want 2 torn down and rows left", n, err)
	}
	if got, spec := status(orphan); got != store.WorldFailed || spec.Error != reasonRestarted {
		t.Fatalf("the orphan: %s %+v", got, spec)
	}
	for _, at := range rec.seen[orphan.ID] {
		if at != store.WorldDeleting {
			t.Fatalf("the orphan was torn down while its row read %v; want each after its claim (deleting)", rec.seen[orphan.ID])
		}
	}
	if len(rec.seen[orphan.ID]) != 2 {
		t.Fatalf("the orphan's teardown: %v; want its member and its network", rec.seen[orphan.ID])
	}
	// Its runner comes back: the world it made is no longer starting.
	back := orphan
	back.Status = store.WorldRunning
	if ok, err := st.UpdateWorld(ctx, back, store.WorldStarting); err != nil || ok {
		t.Fatalf("the runner back wrote its world running: %v %v", ok, err)
	}
	if got, _ := status(halfClaimed); got != store.WorldFailed {
		t.Fatalf("the world claimed by a claimer that died: %s; want failed", got)
	}
	if got, spec := status(stuck); got != store.WorldDeleting || spec.Error != reasonRestarted {
		t.Fatalf("the world whose member cannot be ended: %s %+v; want left deleting, claimed", got, spec)
	}
	for _, w := range []store.World{theirs, unknown} {
		if got, _ := status(w); got != store.WorldStarting || len(rec.seen[w.ID]) != 0 {
			t.Fatalf("%s after a sweep: %s, teardown %v; want left alone", w.Name, got, rec.seen[w.ID])
		}
	}

	// At a start, the unknown is taken too; the live replica's is not.
	rec.mu.Lock()
	rec.broken[stuckMember] = false
	rec.mu.Unlock()
	n, err = s.Reconcile(ctx)
	if err != nil || n != 2 {
		t.Fatalf("start-up reconciliation: %d, %v; want the unknown and the stuck one", n, err)
	}
	if got, _ := status(unknown); got != store.WorldFailed {
		t.Fatalf("the unknown at a start: %s", got)
	}
	if got, _ := status(stuck); got != store.WorldFailed {
		t.Fatalf("the stuck one, its provider back: %s", got)
	}
	if got, _ := status(theirs); got != store.WorldStarting {
		t.Fatalf("a live replica's at a start: %s", got)
	}
}
