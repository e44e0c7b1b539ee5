package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
)

// TestFailedStartActsOnNothing: when a start fails, a bad session key
// or the last component to initialise, nothing has acted on the host or
// the ledger: the start-up reconciliation has not run (compute of the
// installation that no row accounts for is still there, the provider was
// never listed) and the settler has not charged a running sandbox,
// though settle intervals passed; what runs in the background starts
// only once every component is initialised.
func TestFailedStartActsOnNothing(t *testing.T) {
	boom := errors.New("the last component fails")
	last := component.Registration{
		Name: "last", Requires: []string{httpName},
		Init: func(context.Context, *component.InitContext) (any, error) {
			time.Sleep(3 * config.Default().SettleInterval)
			synctest.Wait() // what the others set going has gone as far as it can
			return nil, boom
		},
	}
	for _, tc := range []struct {
		name       string
		sessionKey string
		more       []component.Registration
		want       string
	}{
		{"a bad session key", "notbase64", nil, "session"},
		{"the last component", "", []component.Registration{last}, boom.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg, f, ln := failingConfig(t)
				cfg.SessionKey = tc.sessionKey
				org := seedRunning(t, cfg)
				_, err := build(t.Context(), cfg, slog.New(slog.DiscardHandler), io.Discard,
					Overrides{Listener: ln, Providers: []provider.Provider{f}, Pricing: &ledger.DefaultPricing}, tc.more...)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("build = %v, want %q", err, tc.want)
				}
				if n, lists := f.Count(), f.Calls(fake.OpList); n != 1 || lists != 0 {
					t.Fatalf("after the failed start: %d pieces of compute, %d lists; want the orphan and no list", n, lists)
				}
				if n := journalOf(t, cfg, org); n != 1 {
					t.Fatalf("the org's journal after the failed start has %d entries, want its grant alone", n)
				}
			})
		})
	}
}

// failingConfig is the configuration of a start that is to fail: the
// fake provider f, holding compute of the installation that no row
// accounts for, and the API's listener.
func failingConfig(t *testing.T) (config.Config, *fake.Provider, net.Listener) {
	const instance = "test-failed-start"
	f := fake.New(fake.Config{})
	if _, err := f.Create(t.Context(), provider.Spec{SandboxID: "orphan", Instance: instance, Workspace: "ws-orphan", Image: "paddock/debian:bookworm"}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DataDir, cfg.Listen, cfg.SSHListen, cfg.Egress.Disabled = t.TempDir(), ln.Addr().String(), "off", true
	cfg.Provider, cfg.InstanceID = f.Name(), instance
	return cfg, f, ln
}

// openStore opens cfg's store.
func openStore(t *testing.T, cfg config.Config) store.Store {
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(cfg.DataDir, "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// journalOf is how many entries org's credit journal has.
func journalOf(t *testing.T, cfg config.Config, org string) int {
	st := openStore(t, cfg)
	defer st.Close()
	entries, _, err := st.ListJournal(t.Context(), store.JournalFilter{OrgID: org}, store.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// seedRunning stores an org with credits, a workspace and a running
// sandbox in cfg's store, for a settler to charge; it returns the org's
// id.
func seedRunning(t *testing.T, cfg config.Config) string {
	ctx, at := t.Context(), time.Now()
	st := openStore(t, cfg)
	defer st.Close()
	err := st.InTx(ctx, func(q store.Queries) error {
		o := store.Org{ID: "org-1", Name: "acme", CreatedAt: at}
		if err := q.CreateOrg(ctx, o); err != nil {
			return err
		}
		if _, err := q.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant,
			AmountMicros: 1 << 40, IdempotencyKey: "seed", At: at}); err != nil {
			return err
		}
		ws := store.Workspace{ID: "ws-1", OrgID: o.ID, Name: "dev", CreatedAt: at}
		if err := q.CreateWorkspace(ctx, ws); err != nil {
			return err
		}
		return q.CreateSandbox(ctx, store.Sandbox{
			ID: "sb-1", OrgID: o.ID, WorkspaceID: ws.ID, ProjectID: "p-1", RuntimeID: "rt-1",
			Kind: store.KindRuntime, State: store.SandboxRunning, Provider: "fake", CPUMillis: 1000, MemoryMB: 1024,
			StartedAt: at, LastSettledAt: at, RunningSince: at, CreatedAt: at,
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return "org-1"
}
