package runtime

import (
	"context"
	"net"
	"testing"

	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
)

// TestStartOpensTheAgentLink: a start leaves the runtime's link to its
// agent open, dialed beside its last step — a cold start's record of
// running, a paused warm sandbox's unpause — so the first command dials
// nothing.
func TestStartOpensTheAgentLink(t *testing.T) {
	dial := shimtest.Serve(t)
	agent := func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }
	for _, c := range []struct {
		name string
		warm []WarmPool
	}{
		{"cold", nil},
		{"paused warm claim", []WarmPool{{Size: 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRigWith(t, rigOptions{Fake: fake.Config{Agent: agent}, WarmPools: c.warm})
			if c.warm != nil {
				if made, err := r.s.FillWarmPools(r.ctx); err != nil || made != 1 {
					t.Fatalf("filled %d, %v; want 1", made, err)
				}
			}
			before := r.fake.Calls(fake.OpDial)
			rt := r.started("p", ConfigRequest{})
			if pv := r.s.Provisions(); len(pv) == 0 || pv[0].Warm != (c.warm != nil) {
				t.Fatalf("provision %+v, want warm=%v", pv, c.warm != nil)
			}
			dialed := r.fake.Calls(fake.OpDial)
			if dialed == before {
				t.Fatal("the start returned with no link to the agent dialed")
			}
			cl, _, err := r.s.Agent(r.ctx, rt.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := cl.Health(r.ctx); err != nil {
				t.Fatal(err)
			}
			if n := r.fake.Calls(fake.OpDial); n != dialed {
				t.Fatalf("the first call dialed %d more times, want none", n-dialed)
			}
		})
	}
}
