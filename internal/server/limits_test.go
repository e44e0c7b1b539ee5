package server_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestReplicasShareTheLimits runs two servers on one PostgreSQL database:
// they keep the limits' live state in it. A runtime's exec streams are
// counted across the fleet: with its cap held by streams another replica
// serves, an exec on either answers 429 with the code one server gives,
// and once one ends either serves it. A key's requests draw from one
// bucket: its burst is spent across both, and then either answers 429 with
// Retry-After.
func TestReplicasShareTheLimits(t *testing.T) {
	db := testenv.Postgres(t)
	key := "pdk_" + strings.Repeat("0c", 24)
	const burst = 8
	replica := func(id string) string {
		cfg := testConfig(t, filepath.Join(t.TempDir(), id), "127.0.0.1:0")
		cfg.Store, cfg.ReplicaID, cfg.BootstrapKey = db, id, key
		cfg.Limits.RatePerKey, cfg.Limits.BurstPerKey = 1.0/3600, burst
		cfg.Limits.ExecStreamsPerRuntime = 2
		url, _, _ := serve(t, cfg)
		return url
	}
	a, b := replica("replica-a"), replica("replica-b")
	mustCall(t, a, key, "POST", "/api/v1/orgs", `{"name":"acme"}`, 201)
	mustCall(t, b, key, "POST", "/api/v1/org/acme/ws", `{"name":"dev"}`, 201)
	var p client.Project
	mustJSON(t, mustCall(t, a, key, "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"x"}`, 201), &p)
	exec := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID + "/exec"

	// A third replica serves two streams of the runtime: its cap.
	st, err := store.Open(t.Context(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	third := api.NewSharedLimits(api.SharedLimitsConfig{Store: st, Replica: "replica-c"})
	var releases []func()
	for range 2 {
		release, err := third.Hold(context.Background(), []api.Cap{{Kind: "exec_streams_per_runtime", Key: p.RuntimeID, Max: 2}})
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	for _, url := range []string{a, b} {
		status, body := call(t, url, key, "POST", exec, `{"argv":["true"]}`)
		if status != 429 || !strings.Contains(string(body), `"too_many_exec_streams_per_runtime"`) {
			t.Fatalf("an exec over the fleet's cap on %s: %d %s, want 429 too_many_exec_streams_per_runtime", url, status, body)
		}
	}
	releases[0]()
	// The runtime has no sandbox: past the cap, the exec is refused for
	// that.
	if status, body := call(t, b, key, "POST", exec, `{"argv":["true"]}`); status == 429 {
		t.Fatalf("an exec under the cap: %d %s", status, body)
	}

	// 6 requests drawn so far; the burst's last two, one on each.
	mustCall(t, a, key, "GET", "/api/v1/orgs", "", 200)
	mustCall(t, b, key, "GET", "/api/v1/orgs", "", 200)
	for _, url := range []string{a, b} {
		req, _ := http.NewRequest("GET", url+"/api/v1/orgs", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("over the key's burst on %s: %d, Retry-After %q; want 429 with Retry-After", url, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}

// TestReplicasShareExecStreams: two servers on one PostgreSQL database
// serve exec streams into one runtime (one provider's compute, whose agent
// is a real one in this process). A runtime's cap of N streams counts the
// streams of both: with N open across them, one more is refused on either
// with the code one server gives, and once one ends either serves another.
func TestReplicasShareExecStreams(t *testing.T) {
	db := testenv.Postgres(t)
	dial := shimtest.Serve(t)
	prov := fake.New(fake.Config{Agent: func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }})
	opts := servertest.Options{Provider: prov, Store: db, Limits: api.Limits{ExecPerRuntime: 2, ExecPerUser: 10}}
	a, b := servertest.New(t, opts), servertest.New(t, opts)
	a.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	b.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	a.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "x"}).Decode(t, &p)
	a.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)

	open := func(env *servertest.Env) (*client.ExecStream, error) {
		sdk, err := client.New(env.URL, env.Key)
		if err != nil {
			t.Fatal(err)
		}
		return sdk.ExecStream(t.Context(), "acme", "dev", p.RuntimeID, client.ExecRequest{Argv: []string{"sleep", "300"}})
	}
	var streams []*client.ExecStream
	for _, env := range []*servertest.Env{a, b} {
		s, err := open(env)
		if err != nil {
			t.Fatalf("a stream under the cap: %v", err)
		}
		streams = append(streams, s)
	}
	for _, env := range []*servertest.Env{a, b} {
		_, err := open(env)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.StatusCode != 429 || ce.Code != "too_many_exec_streams_per_runtime" {
			t.Fatalf("a third stream across the replicas: %v, want 429 too_many_exec_streams_per_runtime", err)
		}
	}
	streams[0].Close()
	// Once the server that served it sees it end.
	testenv.WaitFor(t, "room after a stream ended", func() bool {
		s, err := open(b)
		if err != nil {
			return false
		}
		streams = append(streams, s)
		return true
	})
	for _, s := range streams {
		s.Close()
	}
}
