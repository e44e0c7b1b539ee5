package templatebuild

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestSweepFailsBuildsNoServerFinishes: a build left building past the
// time limit and its grace (its server stopped) is failed with
// build_interrupted by the sweep; one within it, which a server may
// still be running, is left building.
func TestSweepFailsBuildsNoServerFinishes(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now().Truncate(time.Microsecond)
	o := store.Org{ID: uuid.NewString(), Name: "o", CreatedAt: now}
	w := store.Workspace{ID: uuid.NewString(), OrgID: o.ID, Name: "w", CreatedAt: now}
	if err := st.CreateOrg(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateWorkspace(ctx, w); err != nil {
		t.Fatal(err)
	}
	build := func(age time.Duration) string {
		b := store.TemplateBuild{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, Template: "t", Image: "i",
			State: store.BuildBuilding, CreatedAt: now.Add(-age), UpdatedAt: now.Add(-age)}
		if err := st.CreateTemplateBuild(ctx, b); err != nil {
			t.Fatal(err)
		}
		return b.ID
	}
	s := New(Config{Store: st, Timeout: 10 * time.Minute, Now: func() time.Time { return now }})
	stale, live := build(10*time.Minute+sweepGrace+time.Second), build(10*time.Minute)
	if n, err := s.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1 build failed", n, err)
	}
	if b, err := st.GetTemplateBuild(ctx, stale); err != nil || b.State != store.BuildFailed || b.ErrorCode != codeInterrupted {
		t.Fatalf("the build past its limit: %+v, %v; want failed %s", b, err, codeInterrupted)
	}
	if b, err := st.GetTemplateBuild(ctx, live); err != nil || b.State != store.BuildBuilding {
		t.Fatalf("the build within its limit: %+v, %v; want building", b, err)
	}
}
