package server_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// leaseNames are the leases of the server's background loops.
var leaseNames = []string{"lifecycle", "settle", "tasks", "warm-pool", "workflows", "worlds"}

// readiness is what url's /readyz answers.
func readiness(t *testing.T, url string) client.Readiness {
	t.Helper()
	_, b := call(t, url, "", "GET", "/readyz", "")
	var r client.Readiness
	mustJSON(t, b, &r)
	return r
}

// holding reports an error unless url's replica runs every loop's lease
// and holds exactly those of held (with a token above min).
func holding(t *testing.T, url string, held bool, min int64) error {
	r := readiness(t, url)
	var names []string
	for _, l := range r.Leases {
		names = append(names, l.Name)
		if l.Held != held || (held && (l.Token <= min || l.ExpiresAt == nil)) {
			return fmt.Errorf("%s: lease %+v, want held %v with a token above %d", r.Replica, l, held, min)
		}
	}
	if strings.Join(names, ",") != strings.Join(leaseNames, ",") {
		return fmt.Errorf("%s runs leases %v, want %v", r.Replica, names, leaseNames)
	}
	return nil
}

// TestReplicasShareTheLoops runs two servers on one store. The first takes
// every loop's lease at start, as a single server does; the second runs
// none while the first lives, and /readyz and /metrics of each name it and
// say what it holds. The second holds the runtime the first runs for a
// start-up reconciliation, and serves it once it finds the first, live,
// holding the lifecycle lease. Once the first stops (it releases its
// leases), the second takes them all, with larger tokens.
func TestReplicasShareTheLoops(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "paddock.db")
	key := "pdk_" + strings.Repeat("0b", 24)
	replica := func(id string) (string, func()) {
		cfg := testConfig(t, filepath.Join(t.TempDir(), id), "127.0.0.1:0")
		cfg.Store, cfg.ReplicaID, cfg.LeaseTTL = db, id, 2*time.Second
		cfg.BootstrapKey = key
		url, _, stop := serve(t, cfg)
		return url, stop
	}
	urlA, stopA := replica("replica-a")
	testenv.Eventually(t, func() error { return holding(t, urlA, true, 0) })
	metrics := string(mustCall(t, urlA, "", "GET", "/metrics", "", 200))
	for _, want := range []string{`paddock_replica_info{replica="replica-a"} 1`, `paddock_lease_held{lease="settle"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("replica a's /metrics lacks %s:\n%s", want, metrics)
		}
	}

	mustCall(t, urlA, key, "POST", "/api/v1/orgs", `{"name":"acme"}`, 201)
	mustCall(t, urlA, key, "POST", "/api/v1/org/acme/ws", `{"name":"dev"}`, 201)
	var p client.Project
	mustJSON(t, mustCall(t, urlA, key, "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"x"}`, 201), &p)
	mustCall(t, urlA, key, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", "", 200)

	urlB, _ := replica("replica-b")
	testenv.Eventually(t, func() error { return holding(t, urlB, false, 0) })
	testenv.Eventually(t, func() error {
		if r := readiness(t, urlB); r.Replica != "replica-b" || r.Status != "ready" {
			return fmt.Errorf("replica b's readiness = %+v, want ready, replica-b", r)
		}
		return nil
	})
	if err := holding(t, urlA, true, 0); err != nil {
		t.Fatalf("once b runs: %v", err)
	}
	metrics = string(mustCall(t, urlB, "", "GET", "/metrics", "", 200))
	for _, want := range []string{`paddock_replica_info{replica="replica-b"} 1`, `paddock_lease_held{lease="settle"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("replica b's /metrics lacks %s:\n%s", want, metrics)
		}
	}

	stopA()
	testenv.Eventually(t, func() error { return holding(t, urlB, true, 1) })
}
