package api_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/clientaddr"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestTrustedProxies: forwarded headers name the client, for the
// per-address rate limit and the log, only when the connection comes
// from a configured trusted proxy, and only in the one header it is
// configured to write; otherwise the peer is the client, whatever the
// request claims. An IPv6 client is one client per /64. A refusal
// answered 429 is not logged.
func TestTrustedProxies(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, _, err := auth.Keys{Store: st, Now: time.Now}.CreateInstallation(ctx, "admin", "")
	if err != nil {
		t.Fatal(err)
	}
	// One unauthenticated call per address and hour.
	limits := api.Limits{PerClient: api.Rate{PerSecond: 1.0 / 3600, Burst: 1}}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	serve := func(trusted []netip.Prefix, header string) (string, *testenv.Buffer) {
		var logs testenv.Buffer
		clients, err := clientaddr.New(trusted, header)
		if err != nil {
			t.Fatal(err)
		}
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		h := api.New(api.Config{
			Access: iam.New(iam.Config{Store: st, Logger: logger}), Tenancy: tenancy.New(tenancy.Config{Store: st}),
			Limits: limits, Clients: clients, Logger: logger,
		})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL, &logs
	}
	// call sends GET /api/v1/orgs with header (name: value) and cred;
	// it wants status and, for a refusal, the logged client (a 429 logs
	// nothing).
	call := func(t *testing.T, url string, logs *testenv.Buffer, cred string, header []string, status int, client string) {
		t.Helper()
		before := len(logs.String())
		req, _ := http.NewRequest("GET", url+"/api/v1/orgs", nil)
		for i := 0; i < len(header); i += 2 {
			req.Header.Add(header[i], header[i+1])
		}
		if cred != "" {
			req.Header.Set("Authorization", "Bearer "+cred)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("%v: %d, want %d", header, resp.StatusCode, status)
		}
		logged := logs.String()[before:]
		if status == 429 && logged != "" {
			t.Fatalf("%v: a refusal answered 429 logged %q", header, logged)
		}
		if client == "" {
			return
		}
		if !strings.Contains(logged, "authentication failed") || !strings.Contains(logged, "client="+client+" ") {
			t.Fatalf("%v: logged %q, want client=%s", header, logged, client)
		}
	}

	t.Run("untrusted peer", func(t *testing.T) {
		url, logs := serve(nil, "")
		call(t, url, logs, "", []string{"X-Forwarded-For", "203.0.113.1"}, 401, "127.0.0.1")
		// Every claimed address is the peer's: its bucket is spent.
		for _, h := range [][]string{
			{"X-Forwarded-For", "203.0.113.2"},
			{"Forwarded", "for=203.0.113.3"},
			{"X-Real-IP", "203.0.113.4"},
		} {
			call(t, url, logs, "", h, 429, "")
		}
		// A key is served all the same.
		call(t, url, logs, key, nil, 200, "")
	})

	t.Run("trusted proxy writing X-Forwarded-For", func(t *testing.T) {
		url, logs := serve(loopback, "")
		call(t, url, logs, "", []string{"X-Forwarded-For", "203.0.113.1"}, 401, "203.0.113.1")
		call(t, url, logs, "", []string{"X-Forwarded-For", "203.0.113.2"}, 401, "203.0.113.2")
		call(t, url, logs, "", []string{"X-Forwarded-For", "203.0.113.1"}, 429, "")
		// What the client wrote left of the address the proxy appended
		// is not believed; trusted hops are passed over.
		call(t, url, logs, "", []string{"X-Forwarded-For", "203.0.113.2, 198.51.100.7"}, 401, "198.51.100.7")
		call(t, url, logs, "", []string{"X-Forwarded-For", "198.51.100.8", "X-Forwarded-For", "127.0.0.9"}, 401, "198.51.100.8")
		// An IPv6 client is its /64: another address in it shares its
		// bucket, one in the next /64 does not.
		call(t, url, logs, "", []string{"X-Forwarded-For", "2001:db8:1:2::1"}, 401, "2001:db8:1:2::1")
		call(t, url, logs, "", []string{"X-Forwarded-For", "2001:db8:1:2:ffff::9"}, 429, "")
		call(t, url, logs, "", []string{"X-Forwarded-For", "2001:db8:1:3::1"}, 401, "2001:db8:1:3::1")
		// Headers the proxy does not write are the client's own: the
		// proxy (the peer) is the client.
		call(t, url, logs, "", []string{"Forwarded", `for="[2001:db8::1]:4711";proto=https`}, 401, "127.0.0.1")
		call(t, url, logs, "", []string{"X-Real-IP", "192.0.2.33"}, 429, "")
		// An entry that is no address stops at the proxy: 127.0.0.1's
		// bucket, spent.
		call(t, url, logs, "", []string{"X-Forwarded-For", "unknown"}, 429, "")
		// A key from a spent address is served.
		call(t, url, logs, key, []string{"X-Forwarded-For", "203.0.113.1"}, 200, "")
	})

	t.Run("trusted proxy writing Forwarded", func(t *testing.T) {
		url, logs := serve(loopback, "Forwarded")
		call(t, url, logs, "", []string{"Forwarded", `for="[2001:db8::1]:4711";proto=https`}, 401, "2001:db8::1")
		// The client's own X-Forwarded-For picks nothing: the proxy
		// passed it on as written.
		call(t, url, logs, "", []string{"X-Forwarded-For", "203.0.113.1"}, 401, "127.0.0.1")
		call(t, url, logs, "", []string{"X-Forwarded-For", "203.0.113.5"}, 429, "")
	})

	t.Run("trusted proxy writing X-Real-IP", func(t *testing.T) {
		url, logs := serve(loopback, "X-Real-IP")
		call(t, url, logs, "", []string{"X-Real-IP", "192.0.2.33"}, 401, "192.0.2.33")
		call(t, url, logs, "", []string{"X-Forwarded-For", "203.0.113.1", "X-Real-IP", "192.0.2.33"}, 429, "")
		call(t, url, logs, "", []string{"X-Forwarded-For", "203.0.113.1"}, 401, "127.0.0.1")
	})
}
