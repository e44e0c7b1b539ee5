package runtime

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
)

// TestWarmClaimRelabels: the warm sandbox a start claims is made for no
// runtime; once claimed, a provider that can change labels puts the
// runtime's and its org's on it. A relabel that fails fails the start and
// leaves no compute; a provider whose labels are fixed claims as before.
func TestWarmClaimRelabels(t *testing.T) {
	r := newRigWith(t, rigOptions{WarmPools: []WarmPool{{Size: 1}}})
	labelsOf := func(sandboxID string) map[string]string {
		t.Helper()
		for _, c := range r.fake.Live() {
			if c.Labels[provider.LabelSandbox] == sandboxID {
				return c.Labels
			}
		}
		return nil
	}
	fill := func() store.WarmSandbox {
		t.Helper()
		if made, err := r.s.FillWarmPools(r.ctx); err != nil || made != 1 {
			t.Fatalf("filled %d, %v; want 1", made, err)
		}
		all, err := r.st.ListWarmSandboxes(r.ctx)
		r.must(err)
		return all[len(all)-1]
	}

	w := fill()
	if l := labelsOf(w.ID); l == nil || l[provider.LabelRuntime] != "" || l[provider.LabelOrg] != "" || l[LabelWarm] != "true" {
		t.Fatalf("warm compute's labels = %v, want a warm sandbox of no runtime or org", l)
	}
	rt := r.started("p", ConfigRequest{})
	if _, sb := r.get(rt.ID); sb.ID != w.ID {
		t.Fatalf("the start ran sandbox %s, not the warm %s", sb.ID, w.ID)
	}
	if l := labelsOf(w.ID); l[provider.LabelRuntime] != rt.ID || l[provider.LabelOrg] != rt.OrgID || l[provider.LabelInstance] != "i" {
		t.Fatalf("claimed compute's labels = %v, want runtime %s and org %s", l, rt.ID, rt.OrgID)
	}

	w = fill()
	r.fake.FailNext(fake.OpRelabel, errors.New("the API server refused the patch"))
	if _, err := r.s.Start(r.ctx, r.project("q", ConfigRequest{}).ID, nil); err == nil {
		t.Fatal("a start whose claimed sandbox could not be relabelled succeeded")
	}
	if labelsOf(w.ID) != nil {
		t.Fatalf("the claimed sandbox is left after the failed start: %v", labelsOf(w.ID))
	}
}

// TestWarmClaimOnFixedLabels: behind a breaker, a provider that cannot
// relabel answers not implemented, and the claim goes on without it.
func TestWarmClaimOnFixedLabels(t *testing.T) {
	r := newRigWith(t, rigOptions{WarmPools: []WarmPool{{Size: 1}}, Wrap: func(f *fake.Provider) provider.Provider {
		b := provider.NewBreaker(struct{ provider.Provider }{f}, provider.BreakerConfig{})
		t.Cleanup(b.Close)
		return b
	}})
	if _, err := r.s.FillWarmPools(r.ctx); err != nil {
		t.Fatal(err)
	}
	rt := r.started("p", ConfigRequest{})
	if pv := r.s.Provisions(); len(pv) == 0 || !pv[0].Warm {
		t.Fatalf("the start did not claim the warm sandbox: %+v", pv)
	}
	if got, _ := r.get(rt.ID); got.Status != store.RuntimeRunning || r.fake.Calls(fake.OpRelabel) != 0 {
		t.Fatalf("runtime %s after %d relabels, want running with none", got.Status, r.fake.Calls(fake.OpRelabel))
	}
}
