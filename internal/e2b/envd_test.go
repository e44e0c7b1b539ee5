package e2b_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

const domain = "e2b.test"

// maxBody is the tests' bound on an upload's body.
const maxBody = 64 << 10

// gw is a server with the E2B surface in front of a real agent (in this
// process), and a running runtime in org acme's workspace dev.
type gw struct {
	env *servertest.Env
	rt  store.Runtime
	// token is the runtime's envd access token, made by the admin key.
	token string
	// agentDown makes the agent unreachable: its server stops, and
	// dialing it fails.
	agentDown func()
}

func newGW(t *testing.T) *gw {
	t.Helper()
	return newGWLimits(t, api.Limits{UploadBodyBytes: maxBody})
}

func newGWLimits(t *testing.T, limits api.Limits) *gw {
	t.Helper()
	dial, stop := serveAgent(t)
	var down atomic.Bool
	agent := func(ctx context.Context, _ string) (net.Conn, error) {
		if down.Load() {
			return nil, errors.New("agent stopped")
		}
		return dial(ctx)
	}
	env := servertest.New(t, servertest.Options{
		Provider: fake.New(fake.Config{Agent: agent}), NoSpecCheck: true,
		E2BDomain: domain, Limits: limits,
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	g := &gw{env: env, agentDown: func() { down.Store(true); stop() }}
	g.rt = g.start(t, "p1")
	g.token = g.tokenFor(t, env.Key, g.rt)
	return g
}

// currentSandbox is the id of the runtime's sandbox now.
func (g *gw) currentSandbox(t *testing.T) string {
	t.Helper()
	rt, err := g.env.Store.GetRuntime(t.Context(), g.rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	return rt.CurrentSandboxID
}

// start makes a project named name and starts its runtime.
func (g *gw) start(t *testing.T, name string) store.Runtime {
	t.Helper()
	var p client.Project
	g.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: name}).Decode(t, &p)
	g.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)
	rt, err := g.env.Store.GetRuntime(t.Context(), p.RuntimeID)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// tokenFor is rt's envd access token made by key's holder, as the REST
// API hands it out.
func (g *gw) tokenFor(t *testing.T, key string, rt store.Runtime) string {
	t.Helper()
	p, err := g.env.Access.Authenticate(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	tok, ok := g.env.Access.IssueEnvdToken(p, rt)
	if !ok {
		t.Fatal("the server issues no envd tokens")
	}
	return tok
}

// req is an envd request to rt routed by header, as the SDK sends it
// with E2B_SANDBOX_URL set; token "" sends none.
func (g *gw) req(t *testing.T, rt store.Runtime, token, method, path string, body io.Reader) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), method, g.env.URL+"/e2b"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("E2b-Sandbox-Id", rt.ID)
	r.Header.Set("E2b-Sandbox-Port", "49983")
	if token != "" {
		r.Header.Set("X-Access-Token", token)
	}
	return r
}

// connect is a unary Connect call (JSON) of method with msg.
func (g *gw) connect(t *testing.T, token, method string, msg any) *http.Request {
	t.Helper()
	b, _ := json.Marshal(msg)
	r := g.req(t, g.rt, token, "POST", method, bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	return r
}

type envdAnswer struct {
	status int
	body   string
	header http.Header
}

// code is the body's "code", a number (envd's, E2B's proxy's) or a
// string (Connect's).
func (a envdAnswer) code() any {
	var b struct{ Code any }
	_ = json.Unmarshal([]byte(a.body), &b)
	return b.Code
}

func do(t *testing.T, r *http.Request) envdAnswer {
	t.Helper()
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return envdAnswer{resp.StatusCode, string(b), resp.Header}
}

// want fails unless a has status and, when code is not nil, that code.
func want(t *testing.T, what string, a envdAnswer, status int, code any) {
	t.Helper()
	if a.status != status || code != nil && a.code() != code {
		t.Errorf("%s: %d %s, want %d %v", what, a.status, a.body, status, code)
	}
}

// serveAgent runs a real agent in this process (shimtest's) and
// returns a dialer of it and its stop.
func serveAgent(t *testing.T) (func(context.Context) (net.Conn, error), func()) {
	t.Helper()
	return shimtest.Start(t, shim.Options{})
}

// TestEnvdRouting: envd is reached by the SDK's headers at /e2b, and by
// host <port>-<sandbox id>.<domain>; a request that names no sandbox, a
// malformed one, or a port other than envd's is refused 400.
func TestEnvdRouting(t *testing.T) {
	g := newGW(t)
	want(t, "by header", do(t, g.req(t, g.rt, g.token, "GET", "/health", nil)), 204, nil)

	byHost := func(host, path string) *http.Request {
		r, _ := http.NewRequestWithContext(t.Context(), "GET", g.env.URL+path, nil)
		r.Host = host
		r.Header.Set("X-Access-Token", g.token)
		return r
	}
	want(t, "by host", do(t, byHost("49983-"+g.rt.ID+"."+domain, "/health")), 204, nil)
	want(t, "by host, upper case", do(t, byHost("49983-"+strings.ToUpper(g.rt.ID)+".E2B.test:80", "/health")), 204, nil)
	want(t, "no id by host", do(t, byHost("49983-nope."+domain, "/health")), 400, float64(400))

	r := g.req(t, g.rt, g.token, "GET", "/health", nil)
	r.Header.Del("E2b-Sandbox-Port")
	want(t, "no port header", do(t, r), 400, float64(400))
	r = g.req(t, g.rt, g.token, "GET", "/health", nil)
	r.Header.Set("E2b-Sandbox-Id", "i1a2b3c4d5e6f7g8h9")
	want(t, "an id that is no runtime's", do(t, r), 400, float64(400))
	r = g.req(t, g.rt, g.token, "GET", "/health", nil)
	r.Header.Set("E2b-Sandbox-Port", "0")
	want(t, "port 0", do(t, r), 400, float64(400))
}

// TestEnvdOtherPorts: a sandbox's other ports, by host, are its
// preview: private until marked public (the envd access token opens
// none), then the app's, which sees neither the token nor E2B's routing
// headers nor an API key; by header, under the API's own origin, they
// are refused.
func TestEnvdOtherPorts(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "app %s token=%q id=%q key=%q", r.URL.Path, r.Header.Get("X-Access-Token"), r.Header.Get("E2b-Sandbox-Id"), r.Header.Get("X-Api-Key"))
	}))
	t.Cleanup(app.Close)
	_, port, _ := net.SplitHostPort(app.Listener.Addr().String())
	g := newGW(t)
	byHost := func() *http.Request {
		r, _ := http.NewRequestWithContext(t.Context(), "GET", g.env.URL+"/hello", nil)
		r.Host = port + "-" + g.rt.ID + "." + domain
		r.Header.Set("X-Access-Token", g.token)
		r.Header.Set("X-Api-Key", "pdk_not_the_apps")
		return r
	}
	byHeader := func() *http.Request {
		r := g.req(t, g.rt, g.token, "GET", "/hello", nil)
		r.Header.Set("E2b-Sandbox-Port", port)
		return r
	}
	want(t, "private, by host", do(t, byHost()), 401, "preview_needs_credentials")
	// Under /e2b an app's answer would share the API's and the console's
	// origin: only envd is served there.
	want(t, "by header", do(t, byHeader()), 400, nil)

	g.env.Must(t, 200, "PATCH", "/api/v1/org/acme/ws/dev/runtimes/"+g.rt.ID+"/previews/"+port, client.SetPortRequest{Public: true})
	if a := do(t, byHost()); a.status != 200 || a.body != `app /hello token="" id="" key=""` {
		t.Errorf("public, by host: %d %s", a.status, a.body)
	}
	want(t, "public, by header", do(t, byHeader()), 400, nil)
}

// TestEnvdAllowList: only envd's own routes reach the agent; paddock's
// agent services (SetEnv above all), other methods, and escaped paths
// are 404, even with a good token.
func TestEnvdAllowList(t *testing.T) {
	g := newGW(t)
	for _, c := range []struct{ method, path string }{
		{"POST", "/paddock.agent.v1.AgentService/SetEnv"},
		{"POST", "/paddock.agent.v1.ProcessService/Exec"},
		{"POST", "/paddock.agent.v1.AgentService/Health"},
		{"GET", "/process.Process/List"},
		{"POST", "/health"},
		{"PUT", "/files"},
		{"POST", "/process.Process/../paddock.agent.v1.AgentService/SetEnv"},
		{"POST", "/%70addock.agent.v1.AgentService/SetEnv"},
		{"POST", "/process.Process/List/x"},
		{"GET", "/"},
	} {
		r := g.req(t, g.rt, g.token, c.method, "", strings.NewReader(`{"env":{"PWNED":"1"}}`))
		r.URL.Opaque = "//" + r.URL.Host + "/e2b" + c.path // sent as written
		r.Header.Set("Content-Type", "application/json")
		a := do(t, r)
		if a.status != 404 {
			t.Errorf("%s %s: %d %s, want 404", c.method, c.path, a.status, a.body)
		}
	}
	// The agent's environment is untouched: a process started through
	// envd does not see what SetEnv would have set.
	a := do(t, g.connect(t, g.token, "/filesystem.Filesystem/Stat", map[string]string{"path": "/"}))
	want(t, "an allowed route", a, 200, nil)
	start, _ := json.Marshal(map[string]any{"process": map[string]any{"cmd": "/bin/sh", "args": []string{"-c", "echo \"[$PWNED]\""}}})
	r := g.req(t, g.rt, g.token, "POST", "/process.Process/Start", bytes.NewReader(envelope(start)))
	r.Header.Set("Content-Type", "application/connect+json")
	a = do(t, r)
	if a.status != 200 || !strings.Contains(a.body, `"stdout":"W10K"`) { // "[]\n"
		t.Errorf("a process sees the environment SetEnv would have set: %d %q", a.status, a.body)
	}
}

// TestEnvdTokens: every request needs the sandbox's envd access token,
// re-checked each time: none, a malformed one, another sandbox's, a
// viewer's, or one whose key was revoked is 401 in envd's shape (or
// Connect's on a Connect method); so is a signed URL, which paddock
// cannot check.
func TestEnvdTokens(t *testing.T) {
	g := newGW(t)
	other := g.start(t, "p2")
	otherToken := g.tokenFor(t, g.env.Key, other)

	want(t, "no token", do(t, g.req(t, g.rt, "", "GET", "/health", nil)), 401, float64(401))
	want(t, "no token, Connect", do(t, g.connect(t, "", "/filesystem.Filesystem/Stat", map[string]string{"path": "/"})), 401, "unauthenticated")
	want(t, "a malformed token", do(t, g.req(t, g.rt, "v4.local.nope", "GET", "/health", nil)), 401, float64(401))
	want(t, "another sandbox's token", do(t, g.req(t, g.rt, otherToken, "GET", "/health", nil)), 401, float64(401))
	want(t, "its own token", do(t, g.req(t, other, otherToken, "GET", "/health", nil)), 204, nil)
	r := g.req(t, g.rt, "", "GET", "/health", nil)
	r.Header.Set("X-API-KEY", g.env.Key)
	r.Header.Set("Authorization", "Bearer "+g.env.Key)
	want(t, "an API key instead", do(t, r), 401, float64(401))
	r = g.req(t, g.rt, "", "GET", "/files?path=/etc/hostname&signature=v1_abc&signature_expiration=9999999999", nil)
	a := do(t, r)
	want(t, "a signed URL", a, 401, float64(401))
	if !strings.Contains(a.body, "signed") {
		t.Errorf("a signed URL's refusal does not say why: %s", a.body)
	}

	g.env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "vera@example.com", Role: "viewer"})
	g.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: "vera@example.com"})
	var vera client.CreatedKey
	g.env.Must(t, 201, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: "vera@example.com", Role: "viewer"}).Decode(t, &vera)
	bob := g.member(t, "bob@example.com")
	want(t, "a viewer's token", do(t, g.req(t, g.rt, g.tokenFor(t, vera.Key, g.rt), "GET", "/health", nil)), 401, float64(401))
	bobs := g.tokenFor(t, bob.Key, g.rt)
	want(t, "a member's token", do(t, g.req(t, g.rt, bobs, "GET", "/health", nil)), 204, nil)
	g.env.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+bob.ID, nil)
	want(t, "a revoked key's token", do(t, g.req(t, g.rt, bobs, "GET", "/health", nil)), 401, float64(401))
}

// envelope frames msg as one Connect streaming message.
func envelope(msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// nextMessage reads a Connect stream's next message; end says it is the
// end-of-stream one.
func nextMessage(r io.Reader) (msg string, end bool, err error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return "", false, err
	}
	b := make([]byte, binary.BigEndian.Uint32(head[1:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return "", false, err
	}
	return string(b), head[0]&2 != 0, nil
}

// watch opens a WatchDir stream of dir through the gateway with token,
// and reads its start event.
func (g *gw) watch(t *testing.T, token, dir string) io.ReadCloser {
	t.Helper()
	msg, _ := json.Marshal(map[string]any{"path": dir})
	r := g.req(t, g.rt, token, "POST", "/filesystem.Filesystem/WatchDir", bytes.NewReader(envelope(msg)))
	r.Header.Set("Content-Type", "application/connect+json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("watch: %d %s", resp.StatusCode, b)
	}
	if m, _, err := nextMessage(resp.Body); err != nil || !strings.Contains(m, "start") {
		t.Fatalf("watch: first message %q, %v", m, err)
	}
	return resp.Body
}

// TestEnvdForwarding: a unary Connect call, an upload and a download,
// and a server stream go through to the agent and back, the stream's
// messages as they come.
func TestEnvdForwarding(t *testing.T) {
	g := newGW(t)
	dir := t.TempDir()
	a := do(t, g.connect(t, g.token, "/filesystem.Filesystem/Stat", map[string]string{"path": dir}))
	want(t, "unary", a, 200, nil)
	if !strings.Contains(a.body, `"type":"FILE_TYPE_DIRECTORY"`) {
		t.Errorf("stat: %s", a.body)
	}

	up := g.req(t, g.rt, g.token, "POST", "/files?path="+dir+"/up.txt", strings.NewReader("uploaded"))
	up.Header.Set("Content-Type", "application/octet-stream")
	want(t, "upload", do(t, up), 200, nil)
	a = do(t, g.req(t, g.rt, g.token, "GET", "/files?path="+dir+"/up.txt", nil))
	if a.status != 200 || a.body != "uploaded" {
		t.Errorf("download: %d %q", a.status, a.body)
	}
	big := g.req(t, g.rt, g.token, "POST", "/files?path="+dir+"/big", io.MultiReader(bytes.NewReader(make([]byte, maxBody+1))))
	big.Header.Set("Content-Type", "application/octet-stream")
	want(t, "an upload over the bound", do(t, big), 413, float64(413))
	// The agent removes what the cut upload wrote once its call ends,
	// which may be just after the 413.
	testenv.WaitFor(t, "the cut upload's file to be removed", func() bool {
		_, err := os.Stat(dir + "/big")
		return errors.Is(err, os.ErrNotExist)
	})

	events := g.watch(t, g.token, dir)
	if err := os.WriteFile(dir+"/new.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		m, end, err := nextMessage(events)
		if err != nil || end {
			t.Fatalf("the stream ended before the event: %q %v", m, err)
		}
		if strings.Contains(m, "new.txt") {
			break
		}
	}
}

// TestEnvdProcess: process.Process's server stream Start reaches the
// client message by message: the command's first output arrives while it
// still runs (it waits for a file the test writes after reading it), and
// the stream ends with the end event.
func TestEnvdProcess(t *testing.T) {
	g := newGW(t)
	gate := filepath.Join(t.TempDir(), "gate")
	start, _ := json.Marshal(map[string]any{"process": map[string]any{"cmd": "/bin/sh",
		"args": []string{"-c", "echo first; while [ ! -e " + gate + " ]; do sleep 0.05; done; echo second"}}})
	r := g.req(t, g.rt, g.token, "POST", "/process.Process/Start", bytes.NewReader(envelope(start)))
	r.Header.Set("Content-Type", "application/connect+json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("start: %d %s", resp.StatusCode, b)
	}
	// until reads messages until one contains s.
	until := func(s string) {
		t.Helper()
		for {
			m, end, err := nextMessage(resp.Body)
			if err != nil || end {
				t.Fatalf("the stream ended before %q: %q %v", s, m, err)
			}
			if strings.Contains(m, s) {
				return
			}
		}
	}
	until(`"stdout":"Zmlyc3QK"`) // "first\n"
	a := do(t, g.connect(t, g.token, "/process.Process/List", map[string]any{}))
	if a.status != 200 || !strings.Contains(a.body, gate) {
		t.Errorf("list while it runs: %d %s", a.status, a.body)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	until(`"stdout":"c2Vjb25kCg=="`) // "second\n"
	until(`"end"`)
}

// TestEnvdRateLimit: a token's requests spend its maker's rate limit;
// past it they envdAnswer 429 with Retry-After, in envd's shape or
// Connect's.
func TestEnvdRateLimit(t *testing.T) {
	g := newGWLimits(t, api.Limits{PerKey: api.Rate{PerSecond: 0.001, Burst: 20}})
	bob := g.member(t, "bob@example.com")
	token := g.tokenFor(t, bob.Key, g.rt)
	for i := range 20 {
		if a := do(t, g.req(t, g.rt, token, "GET", "/health", nil)); a.status != 204 {
			t.Fatalf("request %d: %d %s", i, a.status, a.body)
		}
	}
	a := do(t, g.req(t, g.rt, token, "GET", "/health", nil))
	want(t, "over the limit", a, 429, float64(429))
	if a.header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	want(t, "over the limit, Connect", do(t, g.connect(t, token, "/filesystem.Filesystem/Stat", map[string]string{"path": "/"})), 429, "resource_exhausted")
	// Another credential's token has its own.
	want(t, "another maker", do(t, g.req(t, g.rt, g.token, "GET", "/health", nil)), 204, nil)
}

// member adds name to acme and its workspace dev as a member, and makes
// them a key.
func (g *gw) member(t *testing.T, name string) client.CreatedKey {
	t.Helper()
	g.env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: name, Role: "member"})
	g.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: name})
	var k client.CreatedKey
	g.env.Must(t, 201, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: name, Role: "member"}).Decode(t, &k)
	return k
}

// TestEnvdRevokedStream: revoking the key whose token opened a stream
// ends the stream.
func TestEnvdRevokedStream(t *testing.T) {
	g := newGW(t)
	bob := g.member(t, "bob@example.com")
	events := g.watch(t, g.tokenFor(t, bob.Key, g.rt), t.TempDir())
	g.env.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+bob.ID, nil)
	for {
		if _, end, err := nextMessage(events); err != nil || end {
			return
		}
	}
}

// TestEnvdNotRunning: a paused sandbox answers 502 as E2B's proxy does
// (the SDK's isRunning() is false) and is not woken; resumed, it answers
// again; a deleted one answers 502 to its token's holder (and 401 to
// anyone else); an agent that does not envdAnswer is 502 too.
func TestEnvdNotRunning(t *testing.T) {
	g := newGW(t)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + g.rt.ID
	g.env.Must(t, 200, "POST", rtPath+"/pause", nil)
	a := do(t, g.req(t, g.rt, g.token, "GET", "/health", nil))
	want(t, "paused", a, 502, float64(502))
	if !strings.Contains(a.body, "The sandbox was not found") || !strings.Contains(a.body, g.rt.ID) {
		t.Errorf("paused: %s", a.body)
	}
	want(t, "paused, Connect", do(t, g.connect(t, g.token, "/filesystem.Filesystem/Stat", map[string]string{"path": "/"})), 502, nil)
	if rt, _ := g.env.Store.GetRuntime(t.Context(), g.rt.ID); rt.Status != store.RuntimePaused {
		t.Errorf("envd woke a paused runtime: %s", rt.Status)
	}
	g.env.Must(t, 200, "POST", rtPath+"/resume", nil)
	want(t, "resumed", do(t, g.req(t, g.rt, g.token, "GET", "/health", nil)), 204, nil)

	other := g.start(t, "p2")
	otherToken := g.tokenFor(t, g.env.Key, other)
	g.env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/p2", nil)
	want(t, "deleted, to its token's holder", do(t, g.req(t, other, otherToken, "GET", "/health", nil)), 502, float64(502))
	want(t, "deleted, to anyone else", do(t, g.req(t, other, g.token, "GET", "/health", nil)), 401, float64(401))

	// /health is no activity: it moves no expiry, not even one near. The
	// expiry round may still bring the row up to the activity before it
	// (the row follows the server's record of activity lazily), so what
	// must not happen is the expiry moving to /health's own time plus the
	// idle timeout.
	sbID := g.currentSandbox(t)
	if _, err := g.env.Store.SetSandboxExpiry(t.Context(), sbID, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	rt, err := g.env.Store.GetRuntime(t.Context(), g.rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	asked := time.Now()
	want(t, "health", do(t, g.req(t, g.rt, g.token, "GET", "/health", nil)), 204, nil)
	byHealth := asked.Add(time.Duration(rt.Config.IdleTimeoutSeconds) * time.Second)
	if after, err := g.env.Store.GetSandbox(t.Context(), sbID); err != nil || !after.ExpiresAt.Before(byHealth) {
		t.Errorf("/health moved the expiry to %v, as activity at %v would (%v)", after.ExpiresAt, asked, err)
	}

	g.agentDown()
	a = do(t, g.req(t, g.rt, g.token, "GET", "/files?path=/", nil))
	want(t, "agent unreachable", a, 502, float64(502))
	if !strings.Contains(a.body, "port is not open") {
		t.Errorf("agent unreachable: %s", a.body)
	}
}

// TestEnvdStreamsCapped: envd's server streams count among the exec
// streams of the caller and of the runtime, as paddock's own do: past the
// cap a stream is refused (resource_exhausted), a unary call is not, and
// once one ends another may open.
func TestEnvdStreamsCapped(t *testing.T) {
	g := newGWLimits(t, api.Limits{UploadBodyBytes: maxBody, ExecPerUser: 1})
	dir := t.TempDir()
	first := g.watch(t, g.token, dir)
	msg, _ := json.Marshal(map[string]any{"path": dir})
	r := g.req(t, g.rt, g.token, "POST", "/filesystem.Filesystem/WatchDir", bytes.NewReader(envelope(msg)))
	r.Header.Set("Content-Type", "application/connect+json")
	a := do(t, r)
	if a.status != http.StatusTooManyRequests || a.code() != "resource_exhausted" {
		t.Fatalf("a second stream past the cap: %d %s", a.status, a.body)
	}
	want(t, "a unary call", do(t, g.connect(t, g.token, "/filesystem.Filesystem/Stat", map[string]string{"path": dir})), 200, nil)
	first.Close()
	testenv.Eventually(t, func() error {
		r := g.req(t, g.rt, g.token, "POST", "/filesystem.Filesystem/WatchDir", bytes.NewReader(envelope(msg)))
		r.Header.Set("Content-Type", "application/connect+json")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if m, _, err := nextMessage(resp.Body); err != nil || !strings.Contains(m, "start") {
			return fmt.Errorf("a stream after the first ended: %q %v", m, err)
		}
		return nil
	})
}
