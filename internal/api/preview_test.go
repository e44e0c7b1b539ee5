package api_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// previewAnswer is what a preview request answered, less what differs
// from one request to the next (the request id, the date).
type previewAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a previewAnswer) String() string {
	keys := make([]string, 0, len(a.header))
	for k := range a.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", a.status)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %q\n", k, a.header[k])
	}
	b.Write(a.body)
	return b.String()
}

// previewCall sends GET path to env with Host host and the header lines
// in header (name, value, …).
func previewCall(t *testing.T, env *servertest.Env, host, path string, header []string) previewAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", env.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get("X-Request-Id")
	if id == "" {
		t.Fatalf("no request id: %d %s", resp.StatusCode, body)
	}
	resp.Header.Del("X-Request-Id")
	resp.Header.Del("Date")
	return previewAnswer{status: resp.StatusCode, header: resp.Header, body: bytes.ReplaceAll(body, []byte(id), []byte("REQUEST-ID"))}
}

// TestPreviewUnknownAndForeignAlike: a preview host or path URL naming a
// runtime the caller may not see answers byte for byte as one naming a
// runtime that does not exist, whatever the caller presents: nothing, a
// key of another org or narrowed to another workspace, a refused key, a
// preview token of another runtime, a forged token or cookie. No answer
// names the runtime's full id.
func TestPreviewUnknownAndForeignAlike(t *testing.T) {
	env, p, _ := setup(t)
	rid := p.RuntimeID
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "ops"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "nina@example.com", Role: "member"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/ops/members", client.AddMemberRequest{Member: "nina@example.com"})
	var narrowed client.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: "nina@example.com", Workspace: "ops"}).Decode(t, &narrowed)
	// Eve owns another org, with a runtime of her own.
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"})
	env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "eve@example.com", Role: "owner"})
	var eve client.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/org/other/keys", client.CreateKeyRequest{Member: "eve@example.com"}).Decode(t, &eve)
	env.MustKey(t, eve.Key, 201, "POST", "/api/v1/org/other/ws", client.CreateWorkspaceRequest{Name: "evews"})
	var evep client.Project
	env.MustKey(t, eve.Key, 201, "POST", "/api/v1/org/other/ws/evews/projects", client.CreateProjectRequest{Name: "e1"}).Decode(t, &evep)
	var eveTok client.PreviewToken
	env.MustKey(t, eve.Key, 201, "POST", "/api/v1/org/other/ws/evews/runtimes/"+evep.RuntimeID+"/previews/3000/token", nil).Decode(t, &eveTok)

	port := env.URL[strings.LastIndex(env.URL, ":")+1:]
	unknown := uuid.NewString()
	for _, tc := range []struct {
		name             string
		foreign, missing [2]string // host, path
	}{
		{"preview host",
			[2]string{"3000-" + api.ShortID(rid) + ".localhost:" + port, "/"},
			[2]string{"3000-" + api.ShortID(unknown) + ".localhost:" + port, "/"}},
		{"path URL",
			[2]string{"", "/api/v1/org/acme/ws/dev/runtimes/" + rid + "/ports/3000/"},
			[2]string{"", "/api/v1/org/acme/ws/dev/runtimes/" + unknown + "/ports/3000/"}},
		{"path URL under the caller's own org",
			[2]string{"", "/api/v1/org/other/ws/evews/runtimes/" + rid + "/ports/3000/"},
			[2]string{"", "/api/v1/org/other/ws/evews/runtimes/" + unknown + "/ports/3000/"}},
	} {
		for _, cred := range []struct {
			name   string
			header []string
		}{
			{"nothing", nil},
			{"another org's key", []string{"Authorization", "Bearer " + eve.Key}},
			{"another org's key, a browser", []string{"Authorization", "Bearer " + eve.Key, "Accept", "text/html"}},
			{"a key narrowed to another workspace", []string{"Authorization", "Bearer " + narrowed.Key}},
			{"an unknown key", []string{"Authorization", "Bearer " + auth.NewKey()}},
			{"not a key", []string{"Authorization", "Bearer nonsense"}},
			{"another runtime's preview token", []string{"X-Paddock-Preview-Token", eveTok.Token}},
			{"a forged preview token", []string{"X-Paddock-Preview-Token", auth.SessionPrefix + "forged"}},
			{"a forged cookie, a browser", []string{"Cookie", "paddock_preview=" + eveTok.Token, "Accept", "text/html"}},
		} {
			t.Run(tc.name+", "+cred.name, func(t *testing.T) {
				got := previewCall(t, env, tc.foreign[0], tc.foreign[1], cred.header)
				want := previewCall(t, env, tc.missing[0], tc.missing[1], cred.header)
				if got.String() != want.String() {
					t.Errorf("a foreign runtime answers\n%s\nwhere one that does not exist answers\n%s", got, want)
				}
				if got.status < 400 || bytes.Contains(got.body, []byte(rid)) {
					t.Errorf("the answer lets through or names the runtime:\n%s", got)
				}
			})
		}
	}
}

// TestPreviewRateLimits: previews draw from the same buckets as the API:
// a credential's own, or the client address's for a request without a
// credential; one key's burst leaves another key from the same address
// alone.
func TestPreviewRateLimits(t *testing.T) {
	env := servertest.New(t, servertest.Options{Limits: api.Limits{PerKey: api.Rate{PerSecond: 1.0 / 3600, Burst: 2}, PerClient: api.Rate{PerSecond: 1.0 / 3600, Burst: 2}}})
	other, _, err := auth.Keys{Store: env.Store, Now: time.Now}.CreateInstallation(t.Context(), "other", "")
	if err != nil {
		t.Fatal(err)
	}
	host := "3000-" + api.ShortID(uuid.NewString()) + ".localhost:" + env.URL[strings.LastIndex(env.URL, ":")+1:]
	status := func(header ...string) int { return previewCall(t, env, host, "/", header).status }
	for range 2 {
		if s := status("Authorization", "Bearer "+env.Key); s != 404 {
			t.Fatalf("a key: %d", s)
		}
	}
	if s := status("Authorization", "Bearer "+env.Key); s != 429 {
		t.Fatalf("a key past its burst: %d", s)
	}
	for range 2 {
		if s := status("Authorization", "Bearer "+other); s != 404 {
			t.Fatalf("another key from the same address: %d", s)
		}
	}
	for range 2 {
		if s := status(); s != 401 {
			t.Fatalf("no credential: %d", s)
		}
	}
	if s := status(); s != 429 {
		t.Fatalf("no credential past the address's burst: %d", s)
	}
	if s := status("X-Paddock-Preview-Token", auth.SessionPrefix+"forged"); s != 429 {
		t.Fatalf("a refused token past the address's burst: %d", s)
	}
}

// TestPreviewTokenBucket: requests with a preview token draw from the
// token's own bucket, not its maker's: a flood through a shared link is
// answered 429 while the maker's own API calls are still served.
func TestPreviewTokenBucket(t *testing.T) {
	env := servertest.New(t, servertest.Options{Limits: api.Limits{PerKey: api.Rate{PerSecond: 1.0 / 3600, Burst: 4}}})
	maker, _, err := auth.Keys{Store: env.Store, Now: time.Now}.CreateInstallation(t.Context(), "maker", "")
	if err != nil {
		t.Fatal(err)
	}
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	var tok client.PreviewToken
	env.MustKey(t, maker, 201, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/previews/3000/token", nil).Decode(t, &tok)

	host := "3000-" + api.ShortID(p.RuntimeID) + ".localhost:" + env.URL[strings.LastIndex(env.URL, ":")+1:]
	limited := false
	for i := 0; i < 10 && !limited; i++ {
		// The fake provider has no agent: what is not 429 fails later,
		// past the limits.
		limited = previewCall(t, env, host, "/", []string{"X-Paddock-Preview-Token", tok.Token}).status == 429
	}
	if !limited {
		t.Fatal("a flood of one preview token was never limited")
	}
	env.MustKey(t, maker, 200, "GET", "/api/v1/orgs", nil)
	env.MustKey(t, maker, 200, "GET", "/api/v1/orgs", nil)
}

// TestRefusalFloodLogsBounded: a refused credential is logged only when
// its address still had a token: a flood of refused keys, tokens and
// missing credentials, to the API and to previews, writes as many lines
// as the address's burst, however long it lasts.
func TestRefusalFloodLogsBounded(t *testing.T) {
	var logs testenv.Buffer
	env := servertest.New(t, servertest.Options{
		Limits: api.Limits{PerClient: api.Rate{PerSecond: 1.0 / 3600, Burst: 3}},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	host := "3000-" + api.ShortID(uuid.NewString()) + ".localhost:" + env.URL[strings.LastIndex(env.URL, ":")+1:]
	unknown := auth.NewKey()
	for range 10 {
		env.DoKey(t, unknown, "GET", "/api/v1/orgs", nil)
		req, err := http.NewRequestWithContext(t.Context(), "GET", env.URL+"/api/v1/orgs", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		previewCall(t, env, host, "/", []string{"Authorization", "Bearer " + unknown})
		previewCall(t, env, host, "/", []string{"X-Paddock-Preview-Token", auth.SessionPrefix + "forged"})
	}
	if n := strings.Count(logs.String(), "authentication failed"); n != 3 {
		t.Fatalf("40 refusals from an address with a burst of 3 logged %d lines:\n%s", n, logs.String())
	}
}

// TestPreviewAnonymousPaysFirst: a preview request that presents no
// credential at all spends its address's token before the store is
// asked anything: with the store closed, which any query would answer
// with an error, a flood past the burst is still answered 429.
func TestPreviewAnonymousPaysFirst(t *testing.T) {
	env := servertest.New(t, servertest.Options{Limits: api.Limits{PerClient: api.Rate{PerSecond: 1.0 / 3600, Burst: 1}}})
	host := "3000-" + api.ShortID(uuid.NewString()) + ".localhost:" + env.URL[strings.LastIndex(env.URL, ":")+1:]
	path := "/api/v1/org/acme/ws/dev/runtimes/" + uuid.NewString() + "/ports/3000/"
	if s := previewCall(t, env, host, "/", nil).status; s != 401 {
		t.Fatalf("no credential: %d", s)
	}
	if err := env.Store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{host, "/"}, {"", path}, {host, "/?x=1"}} {
		if s := previewCall(t, env, c[0], c[1], []string{"Cookie", "app=1"}).status; s != 429 {
			t.Fatalf("%s%s, no credential, past the burst: %d", c[0], c[1], s)
		}
	}
}

// TestSetPortRoute: PATCH …/previews/{port} marks a port public, which
// the runtime's ports then list, and private again; a port out of range
// is 400 invalid_port and a runtime not in the workspace 404.
func TestSetPortRoute(t *testing.T) {
	env, _, rtPath := setup(t)
	publicPorts := func() []int {
		t.Helper()
		var l client.PortList
		env.Must(t, 200, "GET", rtPath+"/previews", nil).Decode(t, &l)
		var out []int
		for _, p := range l.Items {
			if p.Public {
				out = append(out, p.Port)
			}
		}
		return out
	}
	var p client.Port
	env.Must(t, 200, "PATCH", rtPath+"/previews/8080", client.SetPortRequest{Public: true}).Decode(t, &p)
	if p.Port != 8080 || !p.Public || p.URL == "" || p.PathURL != rtPath+"/ports/8080/" {
		t.Fatalf("a port marked public: %+v", p)
	}
	env.Must(t, 200, "PATCH", rtPath+"/previews/3000", client.SetPortRequest{Public: true})
	if got := publicPorts(); !slices.Equal(got, []int{3000, 8080}) {
		t.Fatalf("public ports %v, want [3000 8080]", got)
	}
	env.Must(t, 200, "PATCH", rtPath+"/previews/8080", client.SetPortRequest{Public: false}).Decode(t, &p)
	if p.Port != 8080 || p.Public {
		t.Fatalf("a port marked private: %+v", p)
	}
	if got := publicPorts(); !slices.Equal(got, []int{3000}) {
		t.Fatalf("public ports %v, want [3000]", got)
	}
	for _, port := range []string{"0", "65536", "http", "-1"} {
		wantError(t, env.Do(t, "PATCH", rtPath+"/previews/"+port, client.SetPortRequest{Public: true}), 400, "invalid_port")
	}
	unknown := "/api/v1/org/acme/ws/dev/runtimes/" + uuid.NewString()
	wantError(t, env.Do(t, "PATCH", unknown+"/previews/8080", client.SetPortRequest{Public: true}), 404, "runtime_not_found")
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "other"})
	other := strings.Replace(rtPath, "/ws/dev/", "/ws/other/", 1)
	wantError(t, env.Do(t, "PATCH", other+"/previews/8080", client.SetPortRequest{Public: true}), 404, "runtime_not_found")
}
