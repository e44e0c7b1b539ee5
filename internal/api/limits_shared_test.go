package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestSharedBucketsAcrossReplicas: two API replicas on one PostgreSQL
// database draw from one bucket per credential and per client address:
// the burst is spent across both, and then either answers 429 with
// Retry-After.
func TestSharedBucketsAcrossReplicas(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, testenv.Postgres(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, _, err := auth.Keys{Store: st, Now: time.Now}.CreateInstallation(ctx, "admin", "")
	if err != nil {
		t.Fatal(err)
	}
	// Three calls a key and two an address, an hour.
	limits := api.Limits{PerKey: api.Rate{PerSecond: 1.0 / 3600, Burst: 3}, PerClient: api.Rate{PerSecond: 1.0 / 3600, Burst: 2}}
	replica := func(id string) string {
		h := api.New(api.Config{
			Access: iam.New(iam.Config{Store: st}), Tenancy: tenancy.New(tenancy.Config{Store: st}), Limits: limits,
			LimitState: api.NewSharedLimits(api.SharedLimitsConfig{Store: st, Replica: id}),
		})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a, b := replica("replica-a"), replica("replica-b")
	call := func(t *testing.T, url, path, cred string, status int) {
		t.Helper()
		req, _ := http.NewRequest("GET", url+path, nil)
		if cred != "" {
			req.Header.Set("Authorization", "Bearer "+cred)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("GET %s on %s: %d, want %d", path, url, resp.StatusCode, status)
		}
		// The next token is an hour away, less the time the test took.
		if retry := resp.Header.Get("Retry-After"); status == 429 && (len(retry) != 4 || retry > "3600" || retry < "3000") {
			t.Fatalf("GET %s on %s: Retry-After %q, want about 3600", path, url, retry)
		}
	}
	t.Run("a credential's bucket", func(t *testing.T) {
		for _, url := range []string{a, b, a} {
			call(t, url, "/api/v1/me", key, 200)
		}
		call(t, b, "/api/v1/me", key, 429)
		call(t, a, "/api/v1/me", key, 429)
	})
	t.Run("a client address's bucket", func(t *testing.T) {
		call(t, b, "/api/v1/me", "", 401)
		call(t, a, "/api/v1/me", "", 401)
		call(t, a, "/api/v1/me", "", 429)
		call(t, b, "/api/v1/me", "", 429)
	})
}
