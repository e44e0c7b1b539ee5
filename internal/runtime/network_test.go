package runtime

import (
	"log/slog"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestRulesNamingInternalAddresses: an allow rule naming an internal
// address is refused at creation and at a change, unless the installation
// opened it. A rule stored before the check existed stays stored (the
// proxy's guard refuses it at dial time) and the runtime's next change
// answers the same 400 until it is removed.
func TestRulesNamingInternalAddresses(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := provider.NewRegistry()
	reg.Register(fake.New(fake.Config{Networks: []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy}}))
	guard := egress.NewGuard(egress.GuardConfig{AllowInternal: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}})
	s := New(Config{Store: st, Providers: reg, Instance: "i", Defaults: Defaults{Image: "paddock/base:1"}, Guard: guard})
	t.Cleanup(func() { s.Close() })
	now := time.Now().UTC()
	org := store.Org{ID: newID(), Name: "acme", CreatedAt: now}
	ws := store.Workspace{ID: newID(), OrgID: org.ID, Name: "dev", CreatedAt: now}
	if err := st.CreateOrg(ctx, org); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if pub, ok := errdefs.Public(err); !ok || pub.Code != egress.CodeInternalAddress {
			t.Fatalf("%s: %v, want %s", what, err, egress.CodeInternalAddress)
		}
	}
	_, _, err = s.CreateProject(ctx, ws, "bad", "", ConfigRequest{Network: store.NetworkConfig{Allow: []string{"127.0.0.0/8"}}})
	refused("create", err)
	_, rt, err := s.CreateProject(ctx, ws, "p", "", ConfigRequest{Network: store.NetworkConfig{Mode: "proxy", Allow: []string{"pypi.org", "10.20.1.0/24"}}})
	if err != nil {
		t.Fatalf("a range the installation opened: %v", err)
	}
	_, _, err = s.Configure(ctx, rt.ID, Patch{Allow: &[]string{"0x7f.1:8080"}})
	refused("configure", err)

	// A rule stored before the check.
	rt, err = st.GetRuntime(ctx, rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	rt.Config.Network.Allow = []string{"pypi.org", "169.254.169.254"}
	if _, err := st.SetRuntimeConfig(ctx, rt.ID, rt.Version, rt.Config, time.Time{}); err != nil {
		t.Fatal(err)
	}
	idle := int64(600)
	_, _, err = s.Configure(ctx, rt.ID, Patch{IdleTimeoutSeconds: &idle})
	refused("a change beside a stored internal rule", err)
	if _, _, err := s.Configure(ctx, rt.ID, Patch{IdleTimeoutSeconds: &idle, Allow: &[]string{"pypi.org"}}); err != nil {
		t.Fatalf("the change that removes it: %v", err)
	}
}
