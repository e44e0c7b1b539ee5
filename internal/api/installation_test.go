package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// orgOwnerKey makes org acme with workspace dev and project p1, and a
// key of an owner of acme: the highest role in an org, still not the
// installation admin.
func orgOwnerKey(t *testing.T, env *servertest.Env) (string, client.Project) {
	t.Helper()
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "owner@example.com", Role: "owner"})
	var k client.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: "owner@example.com", Role: "owner"}).Decode(t, &k)
	return k.Key, p
}

// TestProvidersShowTheirBreakers: GET /api/v1/providers lists every
// provider, the default first, with its capability matrix and its
// circuit breaker; a breaker the backend's failures open shows open, with
// the failure, until it closes again. An org's owner is refused.
func TestProvidersShowTheirBreakers(t *testing.T) {
	f := fake.New(fake.Config{Name: "zz-main"})
	b := provider.NewBreaker(f, provider.BreakerConfig{Failures: 1, Cooldown: time.Hour})
	t.Cleanup(b.Close)
	env := servertest.New(t, servertest.Options{Provider: b, MoreProviders: []provider.Provider{fake.New(fake.Config{Name: "aa-other", NoPause: true})}})
	ownerKey, p := orgOwnerKey(t, env)

	list := func() []client.ProviderStatus {
		t.Helper()
		var l client.List[client.ProviderStatus]
		env.Must(t, 200, "GET", "/api/v1/providers", nil).Decode(t, &l)
		return l.Items
	}
	got := list()
	if len(got) != 2 || got[0].Name != "zz-main" || !got[0].Default || got[1].Name != "aa-other" || got[1].Default {
		t.Fatalf("providers: %+v, want zz-main (the default) then aa-other", got)
	}
	if got[0].Breaker.State != "closed" || got[0].Breaker.Error != "" || got[1].Breaker.State != "none" {
		t.Errorf("breakers: %+v and %+v, want closed and none", got[0].Breaker, got[1].Breaker)
	}
	if !got[0].Capabilities.Pause || got[1].Capabilities.Pause {
		t.Errorf("capabilities: %+v and %+v, want pause on the first only", got[0].Capabilities, got[1].Capabilities)
	}

	// The engine is down: the start fails and the breaker opens.
	f.FailNext(fake.OpCreate, errdefs.Unavailable(provider.CodeProviderUnavailable, "the engine is not reachable"))
	if r := env.Do(t, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil); r.Status < 500 {
		t.Fatalf("start on a failing engine: %d %s", r.Status, r.Body)
	}
	got = list()
	if br := got[0].Breaker; br.State != "open" || !strings.Contains(br.Error, provider.CodeProviderUnavailable) {
		t.Errorf("after the engine failed, the breaker is %+v, want open with provider_unavailable", br)
	}

	wantError(t, env.DoKey(t, ownerKey, "GET", "/api/v1/providers", nil), 403, "installation_admin_only")
}

// TestWarmPoolShowsItsSandboxes: GET /api/v1/warm-pool shows each pool's
// size and the warm sandboxes it holds: none before the filler ran, the
// pool's size after, one fewer once a start claimed one; a template no
// longer configured shows while it has some. An org's owner is refused.
func TestWarmPoolShowsItsSandboxes(t *testing.T) {
	env := servertest.New(t, servertest.Options{WarmPools: []runtime.WarmPool{{Size: 2}}})
	ownerKey, p := orgOwnerKey(t, env)
	pool := func() client.WarmPoolInfo {
		t.Helper()
		var s client.WarmPoolStatus
		env.Must(t, 200, "GET", "/api/v1/warm-pool", nil).Decode(t, &s)
		if len(s.Pools) != 1 {
			t.Fatalf("pools: %+v, want one", s.Pools)
		}
		return s.Pools[0]
	}
	if got := pool(); got.Size != 2 || !got.Configured || got.Provider != env.Provider.Name() || got.Image == "" || len(got.Sandboxes) != 0 || got.Ready != 0 {
		t.Fatalf("before the filler: %+v, want size 2, configured, no sandboxes", got)
	}
	if n, err := env.Runtimes.FillWarmPools(t.Context()); err != nil || n != 2 {
		t.Fatalf("fill: %d, %v", n, err)
	}
	got := pool()
	if got.Ready != 2 || got.Creating != 0 || len(got.Sandboxes) != 2 {
		t.Fatalf("after the filler: %+v, want two ready", got)
	}
	for _, s := range got.Sandboxes {
		if s.State != "ready" || s.ProviderSandboxID == "" || s.Provider != env.Provider.Name() {
			t.Errorf("warm sandbox %+v", s)
		}
	}
	var rt client.Runtime
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil).Decode(t, &rt)
	after := pool()
	if after.Ready != 1 || len(after.Sandboxes) != 1 {
		t.Fatalf("after a start: %+v, want one left", after)
	}
	if claimed := rt.CurrentSandboxID; claimed == after.Sandboxes[0].ID || (claimed != got.Sandboxes[0].ID && claimed != got.Sandboxes[1].ID) {
		t.Errorf("the start's sandbox %s is not the claimed warm one (had %s, %s; left %s)", claimed, got.Sandboxes[0].ID, got.Sandboxes[1].ID, after.Sandboxes[0].ID)
	}

	// A template no longer configured still shows while it has warm
	// sandboxes, after the configured pools, with size 0.
	old := store.WarmSandbox{ID: uuid.NewString(), Template: "fake|old:1", State: store.WarmCreating, Provider: env.Provider.Name(), Image: "old:1", WorkspaceVolume: "old-volume", CreatedAt: time.Now()}
	if err := env.Store.CreateWarmSandbox(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	var s client.WarmPoolStatus
	env.Must(t, 200, "GET", "/api/v1/warm-pool", nil).Decode(t, &s)
	if len(s.Pools) != 2 || !s.Pools[0].Configured || s.Pools[1].Configured || s.Pools[1].Template != old.Template ||
		s.Pools[1].Size != 0 || s.Pools[1].Creating != 1 || s.Pools[1].Image != "old:1" || len(s.Pools[1].Sandboxes) != 1 {
		t.Errorf("with a template no longer configured: %+v", s.Pools)
	}

	wantError(t, env.DoKey(t, ownerKey, "GET", "/api/v1/warm-pool", nil), 403, "installation_admin_only")
}
