package runtime

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
)

// TestStartOutOfTime: a start whose provider action outlives the
// provision timeout fails, and its cleanup, which the expired start's
// context could no longer do, still destroys the sandbox and records the
// failure: the runtime in error, its sandbox killed as provision_failed,
// no compute left.
func TestStartOutOfTime(t *testing.T) {
	r := newRig(t, fake.Config{}, Defaults{ProvisionTimeout: 200 * time.Millisecond})
	r.fake.SetGate(fake.OpStart, make(chan struct{})) // never released: the start runs out of time
	p := r.project("p", ConfigRequest{})
	if _, err := r.s.Start(r.ctx, p.ID, nil); err == nil {
		t.Fatal("a start that ran out of time succeeded")
	}
	rt, _ := r.get(p.ID)
	sbs, _, err := r.st.ListSandboxes(r.ctx, store.SandboxFilter{OrgID: rt.OrgID, RuntimeID: rt.ID}, store.Page{Limit: 10})
	r.must(err)
	if rt.Status != store.RuntimeError || len(sbs) != 1 || sbs[0].State != store.SandboxKilled || sbs[0].KillReason != KillProvisionFailed {
		t.Fatalf("runtime %s, sandboxes %+v; want error and one killed as %s", rt.Status, sbs, KillProvisionFailed)
	}
	if live := r.fake.Live(); len(live) != 0 {
		t.Fatalf("compute left after the failed start: %+v", live)
	}
}
