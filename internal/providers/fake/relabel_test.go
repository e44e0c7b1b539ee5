package fake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
)

// TestBreakerRelabels: Relabel goes through the breaker to a provider
// that can change its compute's labels (they are set over the compute's
// own); the backend's failures count like any call's; a provider whose
// labels are fixed answers relabel_not_supported, and is never called.
func TestBreakerRelabels(t *testing.T) {
	ctx := context.Background()
	f := fake.New(fake.Config{})
	b := provider.NewBreaker(f, provider.BreakerConfig{Failures: 2})
	t.Cleanup(b.Close)
	s := spec(t)
	h, err := b.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Relabel(ctx, h, map[string]string{provider.LabelRuntime: "rt-1", provider.LabelOrg: "org-1"}); err != nil {
		t.Fatalf("Relabel: %v", err)
	}
	l := f.Live()[0].Labels
	if l[provider.LabelRuntime] != "rt-1" || l[provider.LabelOrg] != "org-1" || l[provider.LabelSandbox] != s.SandboxID || l[provider.LabelInstance] != s.Instance {
		t.Fatalf("labels after Relabel = %v, want the runtime and org over the compute's own", l)
	}
	if err := b.Relabel(ctx, provider.Handle{Provider: "fake", ID: "nope"}, map[string]string{"a": "b"}); !errdefs.IsNotFound(err) {
		t.Fatalf("Relabel of compute that does not exist = %v, want not found", err)
	}

	down := errdefs.Unavailable(provider.CodeProviderUnavailable, "the engine is not reachable")
	f.FailNext(fake.OpRelabel, down)
	f.FailNext(fake.OpRelabel, down)
	for range 2 {
		if err := b.Relabel(ctx, h, map[string]string{"a": "b"}); !errors.Is(err, down) {
			t.Fatalf("Relabel on a failing engine = %v", err)
		}
	}
	if st, _ := b.State(); st != provider.BreakerOpen {
		t.Fatalf("after two backend failures of Relabel the breaker is %v, want open", st)
	}

	// A provider without Relabel (only the lifecycle of the contract).
	fixed := fake.New(fake.Config{Name: "fixed"})
	fb := provider.NewBreaker(struct{ provider.Provider }{fixed}, provider.BreakerConfig{})
	t.Cleanup(fb.Close)
	err = fb.Relabel(ctx, provider.Handle{Provider: "fixed", ID: "x"}, map[string]string{"a": "b"})
	if pe, ok := errdefs.Public(err); !errors.Is(err, errdefs.ErrNotImplemented) || !ok || pe.Code != provider.CodeRelabelNotSupported {
		t.Fatalf("Relabel on a provider that cannot = %v, want not implemented relabel_not_supported", err)
	}
	if n := fixed.Calls(fake.OpRelabel); n != 0 {
		t.Fatalf("the provider was called %d times", n)
	}
}
