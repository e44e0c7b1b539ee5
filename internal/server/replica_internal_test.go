package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
)

// TestReplicaID: a configured replica id is kept; without one a server
// is the same replica at every start with the same data directory and
// address, two addresses are two replicas, and an ephemeral port is a new
// replica each time, <hostname>-<pid>-<random>.
func TestReplicaID(t *testing.T) {
	if got := replicaID("replica-a", "/d", "127.0.0.1:8080"); got != "replica-a" {
		t.Fatalf("configured replica id became %q", got)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	a, b := replicaID("", "/d", "127.0.0.1:8080"), replicaID("", "/d", "127.0.0.1:8081")
	if a != replicaID("", "/d", "127.0.0.1:8080") || a == b || !strings.HasPrefix(a, host+"-") {
		t.Fatalf("replica ids %q and %q; want stable per data dir and address, and apart", a, b)
	}
	if replicaID("", "/e", "127.0.0.1:8080") == a {
		t.Fatalf("another data directory kept replica id %q", a)
	}
	re := regexp.MustCompile(fmt.Sprintf(`^%s-%d-[0-9a-f]{8}$`, regexp.QuoteMeta(host), os.Getpid()))
	c, d := replicaID("", "/d", "127.0.0.1:0"), replicaID("", "/d", "127.0.0.1:0")
	if !re.MatchString(c) || !re.MatchString(d) || c == d {
		t.Fatalf("replica ids on port 0 %q and %q; want two different <hostname>-<pid>-<random>", c, d)
	}
}

// TestOnlyTheSettleHolderCharges runs two replicas' components on one
// store, on synctest's clock: the first, which prices compute at nothing,
// starts first and takes the settle lease; the second prices it and would
// charge the running sandbox at its first tick, but charges nothing while
// the first holds the lease. Once the first stops, the second takes the
// lease and charges.
func TestOnlyTheSettleHolderCharges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, f, ln := failingConfig(t)
		cfg.LeaseTTL = 4 * time.Second
		org := seedRunning(t, cfg)
		stackA, stopA := startReplica(t, cfg, "replica-a", f, ln, ledger.Free)
		synctest.Wait()
		if !stackA.http.in.leases.Holds(leaseSettle) {
			t.Fatal("the first replica does not hold the settle lease")
		}

		cfgB := cfg
		cfgB.DataDir, cfgB.Store = t.TempDir(), "sqlite:"+filepath.Join(cfg.DataDir, "paddock.db")
		lnB, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		stackB, _ := startReplica(t, cfgB, "replica-b", fake.New(fake.Config{}), lnB, ledger.DefaultPricing)
		time.Sleep(5 * cfg.SettleInterval)
		synctest.Wait()
		if n := journalOf(t, cfg, org); n != 1 {
			t.Fatalf("while the free replica holds the settle lease, the org's journal has %d entries; want its grant alone", n)
		}

		stopA()
		time.Sleep(cfg.LeaseTTL/4 + 2*cfg.SettleInterval)
		synctest.Wait()
		if !stackB.http.in.leases.Holds(leaseSettle) {
			t.Fatal("the second replica did not take the settle lease")
		}
		if n := journalOf(t, cfg, org); n < 2 {
			t.Fatalf("once the pricing replica holds the settle lease, the org's journal has %d entries; want its charges", n)
		}
	})
}

// startReplica builds and starts the server's components as replica id,
// with f and pricing, serving nothing (its door is only an address); stop
// closes them, and the test's end does if it did not.
func startReplica(t *testing.T, cfg config.Config, id string, f *fake.Provider, ln net.Listener, pricing ledger.Pricing) (*Stack, func()) {
	t.Helper()
	cfg.ReplicaID = id
	s, err := Build(t.Context(), cfg, slog.New(slog.DiscardHandler), io.Discard, Overrides{
		Listener: ln, Serve: func(*http.Server) {}, Providers: []provider.Provider{f}, Pricing: &pricing,
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("close %s: %v", id, err)
		}
	})
	t.Cleanup(stop)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s, stop
}
