package e2b_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/e2b"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// world is a server with orgs acme (workspaces default and dev) and other
// (default), and keys: acme's member (org-wide), viewer and member
// narrowed to dev, and other's owner. Its fake provider's sandboxes reach
// a real agent serving in this process.
type world struct {
	env                          *servertest.Env
	member, viewer, dev, foreign string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldOffering(t, shimtest.Serve(t), provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen)
}

// newWorldOffering is newWorld whose provider offers networks, its agent
// reached by dial.
func newWorldOffering(t *testing.T, dial func(context.Context) (net.Conn, error), networks ...provider.NetworkPolicy) *world {
	t.Helper()
	return newWorldWith(t, fake.Config{
		Networks: networks,
		Agent:    func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) },
	})
}

// newWorldWith is newWorld on a fake provider configured by fc.
func newWorldWith(t *testing.T, fc fake.Config) *world {
	t.Helper()
	env := servertest.New(t, servertest.Options{
		NoSpecCheck: true, // the E2B surface is not paddock's API document's
		Provider:    fake.New(fc),
	})
	for _, org := range []string{"acme", "other"} {
		env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: org})
		env.Must(t, 201, "POST", "/api/v1/org/"+org+"/ws", client.CreateWorkspaceRequest{Name: e2b.DefaultWorkspace})
	}
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "bob@example.com", Role: "member"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "vic@example.com", Role: "viewer"})
	for _, m := range []string{"bob@example.com", "vic@example.com"} {
		env.Must(t, 201, "POST", "/api/v1/org/acme/ws/default/members", client.AddMemberRequest{Member: m})
	}
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: "bob@example.com"})
	env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "eve@example.com", Role: "owner"})
	w := &world{env: env}
	w.member = w.key(t, "acme", client.CreateKeyRequest{Member: "bob@example.com"})
	w.viewer = w.key(t, "acme", client.CreateKeyRequest{Member: "vic@example.com"})
	w.dev = w.key(t, "acme", client.CreateKeyRequest{Member: "bob@example.com", Workspace: "dev"})
	w.foreign = w.key(t, "other", client.CreateKeyRequest{Member: "eve@example.com"})
	return w
}

func (w *world) key(t *testing.T, org string, req client.CreateKeyRequest) string {
	t.Helper()
	var k client.CreatedKey
	w.env.Must(t, 201, "POST", "/api/v1/org/"+org+"/keys", req).Decode(t, &k)
	return k.Key
}

// answer is an E2B answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("decode %s: %v", a.body, err)
	}
}

// do sends an E2B request with key in X-API-KEY ("" sends none).
func (w *world) do(t *testing.T, key, method, path string, body any) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, w.env.URL+e2b.Prefix+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// must is do, failing the test unless it answers want.
func (w *world) must(t *testing.T, key string, want int, method, path string, body any) answer {
	t.Helper()
	a := w.do(t, key, method, path, body)
	if a.status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, a.status, a.body, want)
	}
	return a
}

// wantE2BError checks an answer is an E2B error of status: the SDK reads
// {"code": status, "message": "…"}.
func wantE2BError(t *testing.T, a answer, status int) string {
	t.Helper()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(a.body, &e); err != nil || a.status != status || e.Code != status || e.Message == "" {
		t.Fatalf("answer %d %s, want an E2B error %d", a.status, a.body, status)
	}
	return e.Message
}

// sandbox is E2B's Sandbox and SandboxDetail as the tests read them.
type sandbox struct {
	SandboxID       string            `json:"sandboxID"`
	TemplateID      string            `json:"templateID"`
	ClientID        string            `json:"clientID"`
	EnvdVersion     string            `json:"envdVersion"`
	EnvdAccessToken string            `json:"envdAccessToken"`
	Domain          *string           `json:"domain"`
	State           string            `json:"state"`
	StartedAt       time.Time         `json:"startedAt"`
	EndAt           time.Time         `json:"endAt"`
	CPUCount        int               `json:"cpuCount"`
	MemoryMB        int               `json:"memoryMB"`
	Metadata        map[string]string `json:"metadata"`
}

// create makes a sandbox with key through POST /v2/sandboxes.
func (w *world) create(t *testing.T, key string, req map[string]any) sandbox {
	t.Helper()
	var s sandbox
	w.must(t, key, 201, "POST", "/v2/sandboxes", req).decode(t, &s)
	return s
}

func (w *world) get(t *testing.T, key, id string) sandbox {
	t.Helper()
	var s sandbox
	w.must(t, key, 200, "GET", "/sandboxes/"+id, nil).decode(t, &s)
	return s
}

// TestAuthentication: a key in X-API-KEY or as a bearer; none, a bad one,
// an installation key, or an org without the default workspace are clear
// refusals in E2B's shape.
func TestAuthentication(t *testing.T) {
	w := newWorld(t)
	wantE2BError(t, w.do(t, "", "GET", "/v2/sandboxes", nil), 401)
	wantE2BError(t, w.do(t, "pdk_notakey", "GET", "/v2/sandboxes", nil), 401)
	wantE2BError(t, w.do(t, "e2b_0123456789abcdef", "GET", "/v2/sandboxes", nil), 401)
	w.must(t, w.member, 200, "GET", "/v2/sandboxes", nil)

	req, _ := http.NewRequest("GET", w.env.URL+e2b.Prefix+"/v2/sandboxes", nil)
	req.Header.Set("Authorization", "Bearer "+w.member)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a bearer key: %d", resp.StatusCode)
	}

	msg := wantE2BError(t, w.do(t, w.env.Key, "GET", "/v2/sandboxes", nil), 403)
	if !strings.Contains(msg, "installation key") {
		t.Fatalf("an installation key's refusal says %q", msg)
	}
	w.env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "bare"})
	w.env.Must(t, 201, "POST", "/api/v1/org/bare/members", client.AddOrgMemberRequest{Member: "eve@example.com", Role: "member"})
	bare := w.key(t, "bare", client.CreateKeyRequest{Member: "eve@example.com"})
	msg = wantE2BError(t, w.do(t, bare, "POST", "/v2/sandboxes", map[string]any{"templateID": "base"}), 422)
	if !strings.Contains(msg, `"default"`) {
		t.Fatalf("an org without a default workspace: %q", msg)
	}
	wantE2BError(t, w.do(t, w.member, "GET", "/templates", nil), 404)
}

// TestCreateGetKill: a sandbox is a started runtime in the key's
// workspace, with a writable root, the environment, metadata and the
// timeout as expiry; GET renders it; DELETE deletes its project, after
// which it is not found.
func TestCreateGetKill(t *testing.T) {
	w := newWorld(t)
	before := time.Now()
	s := w.create(t, w.member, map[string]any{
		"templateID": "base", "timeout": 120, "metadata": map[string]string{"user": "alice"},
		"envVars": map[string]string{"GREETING": "hello"}, "secure": true, "autoPause": false,
		"mcp": nil, "network": map[string]any{},
	})
	if s.SandboxID == "" || s.TemplateID != "base" || s.ClientID != "paddock" || s.EnvdVersion != shim.EnvdVersion ||
		s.EnvdAccessToken == "" || s.Domain != nil {
		t.Fatalf("created %+v", s)
	}
	rt, err := w.env.Store.GetRuntime(t.Context(), s.SandboxID)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := w.env.Store.GetWorkspace(t.Context(), rt.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	if rt.Status != store.RuntimeRunning || ws.Name != e2b.DefaultWorkspace || rt.Config.RootFS != store.RootFSWritable ||
		rt.Config.Env["GREETING"] != "hello" || rt.Config.Network.Mode != "open" || rt.Config.IdleTimeoutSeconds != 120 {
		t.Fatalf("the runtime %+v in workspace %q", rt, ws.Name)
	}

	got := w.get(t, w.member, s.SandboxID)
	if got.State != "running" || got.Metadata["user"] != "alice" || got.CPUCount < 1 || got.MemoryMB <= 0 ||
		got.EnvdAccessToken == "" || got.EnvdVersion != shim.EnvdVersion {
		t.Fatalf("got %+v", got)
	}
	if got.EndAt.Before(before.Add(110*time.Second)) || got.EndAt.After(time.Now().Add(121*time.Second)) {
		t.Fatalf("endAt %v, want about 120 s after %v", got.EndAt, before)
	}

	w.must(t, w.member, 204, "DELETE", "/sandboxes/"+s.SandboxID, nil)
	wantE2BError(t, w.do(t, w.member, "GET", "/sandboxes/"+s.SandboxID, nil), 404)
	wantE2BError(t, w.do(t, w.member, "DELETE", "/sandboxes/"+s.SandboxID, nil), 404)
	if _, err := w.env.Store.GetRuntime(t.Context(), s.SandboxID); err == nil {
		t.Fatal("the runtime outlived its kill")
	}
	// The org's ledger keeps the sandbox's row, as any runtime's: billed
	// while it ran, killed as deleted.
	var ledger client.List[client.Sandbox]
	w.env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes", nil).Decode(t, &ledger)
	var row *client.Sandbox
	for i := range ledger.Items {
		if ledger.Items[i].RuntimeID == s.SandboxID {
			row = &ledger.Items[i]
		}
	}
	if row == nil || row.State != "killed" || row.KillReason == "" {
		t.Fatalf("the ledger's row of the killed sandbox: %+v", row)
	}
	wantE2BError(t, w.do(t, w.member, "GET", "/sandboxes/not-a-uuid", nil), 404)

	// The v1 create too, with its 15 s default timeout.
	var v1 sandbox
	w.must(t, w.member, 201, "POST", "/sandboxes", map[string]any{"templateID": "base"}).decode(t, &v1)
	if d := time.Until(w.get(t, w.member, v1.SandboxID).EndAt); d > 16*time.Second {
		t.Fatalf("v1 sandbox expires in %v, want 15 s", d)
	}
}

// TestForeignKeys: another org's key, a key narrowed to another workspace
// and a viewer get nothing of a sandbox they may not act on.
func TestForeignKeys(t *testing.T) {
	w := newWorld(t)
	s := w.create(t, w.member, map[string]any{"templateID": "base"})
	path := "/sandboxes/" + s.SandboxID
	for _, key := range []string{w.foreign, w.dev} {
		wantE2BError(t, w.do(t, key, "GET", path, nil), 404)
		wantE2BError(t, w.do(t, key, "DELETE", path, nil), 404)
		wantE2BError(t, w.do(t, key, "POST", path+"/pause", nil), 404)
		wantE2BError(t, w.do(t, key, "POST", path+"/timeout", map[string]any{"timeout": 10}), 404)
		wantE2BError(t, w.do(t, key, "POST", "/v2"+path+"/connect", map[string]any{"timeout": 10}), 404)
		wantE2BError(t, w.do(t, key, "GET", path+"/metrics", nil), 404)
		var list []sandbox
		w.must(t, key, 200, "GET", "/v2/sandboxes", nil).decode(t, &list)
		if len(list) != 0 {
			t.Fatalf("a foreign key lists %+v", list)
		}
	}
	// A viewer reads, and does nothing else.
	if got := w.get(t, w.viewer, s.SandboxID); got.SandboxID != s.SandboxID {
		t.Fatalf("the viewer got %+v", got)
	}
	wantE2BError(t, w.do(t, w.viewer, "DELETE", path, nil), 403)
	wantE2BError(t, w.do(t, w.viewer, "POST", path+"/pause", nil), 403)
	wantE2BError(t, w.do(t, w.viewer, "POST", path+"/timeout", map[string]any{"timeout": 10}), 403)
	wantE2BError(t, w.do(t, w.viewer, "POST", "/v2"+path+"/connect", nil), 403)
	wantE2BError(t, w.do(t, w.viewer, "POST", "/v2/sandboxes", map[string]any{"templateID": "base"}), 403)
	if got := w.get(t, w.member, s.SandboxID); got.State != "running" {
		t.Fatalf("after the refusals: %+v", got)
	}

	// A runtime made through paddock's own API is no E2B sandbox.
	var p client.Project
	w.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/default/projects", client.CreateProjectRequest{Name: "plain"}).Decode(t, &p)
	wantE2BError(t, w.do(t, w.member, "GET", "/sandboxes/"+p.RuntimeID, nil), 404)
	wantE2BError(t, w.do(t, w.member, "DELETE", "/sandboxes/"+p.RuntimeID, nil), 404)

	// The narrowed key's sandboxes live in its workspace.
	d := w.create(t, w.dev, map[string]any{"templateID": "base"})
	rt, err := w.env.Store.GetRuntime(t.Context(), d.SandboxID)
	if err != nil {
		t.Fatal(err)
	}
	if ws, _ := w.env.Store.GetWorkspace(t.Context(), rt.WorkspaceID); ws.Name != "dev" {
		t.Fatalf("the dev key's sandbox is in %q", ws.Name)
	}
	wantE2BError(t, w.do(t, w.member, "GET", "/sandboxes/"+d.SandboxID, nil), 404)
}

// TestPauseConnectResume: pause, a second pause 409, connect resumes
// (201) or finds it running (200), the deprecated resume refuses a
// running sandbox.
func TestPauseConnectResume(t *testing.T) {
	w := newWorld(t)
	s := w.create(t, w.member, map[string]any{"templateID": "base"})
	path := "/sandboxes/" + s.SandboxID
	w.must(t, w.member, 204, "POST", path+"/pause", map[string]any{})
	if got := w.get(t, w.member, s.SandboxID); got.State != "paused" {
		t.Fatalf("after pause: %+v", got)
	}
	wantE2BError(t, w.do(t, w.member, "POST", path+"/pause", nil), 409)

	var c sandbox
	w.must(t, w.member, 201, "POST", "/v2"+path+"/connect", map[string]any{"timeout": 60}).decode(t, &c)
	if c.SandboxID != s.SandboxID || c.EnvdAccessToken == "" || c.EnvdVersion != shim.EnvdVersion {
		t.Fatalf("connect answered %+v", c)
	}
	got := w.get(t, w.member, s.SandboxID)
	if got.State != "running" || time.Until(got.EndAt) > 61*time.Second {
		t.Fatalf("after connect: %+v", got)
	}
	w.must(t, w.member, 200, "POST", path+"/connect", map[string]any{"timeout": 60})
	wantE2BError(t, w.do(t, w.member, "POST", path+"/resume", map[string]any{"timeout": 60}), 409)
	w.must(t, w.member, 204, "POST", path+"/pause", nil)
	w.must(t, w.member, 201, "POST", path+"/resume", map[string]any{"timeout": 60})
	if got := w.get(t, w.member, s.SandboxID); got.State != "running" {
		t.Fatalf("after resume: %+v", got)
	}
	wantE2BError(t, w.do(t, w.member, "POST", "/v2/sandboxes/"+"00000000-0000-4000-8000-000000000000/connect", nil), 404)
}

// TestTimeout: a timeout sets the expiry to now+timeout, shorter or
// longer; at expiry the sandbox pauses as every paddock runtime does.
func TestTimeout(t *testing.T) {
	w := newWorld(t)
	s := w.create(t, w.member, map[string]any{"templateID": "base", "timeout": 600})
	path := "/sandboxes/" + s.SandboxID
	w.must(t, w.member, 204, "POST", path+"/timeout", map[string]any{"timeout": 30})
	got := w.get(t, w.member, s.SandboxID)
	if d := time.Until(got.EndAt); d > 31*time.Second || d < 20*time.Second {
		t.Fatalf("after a 30 s timeout it expires in %v", d)
	}
	w.must(t, w.member, 204, "POST", path+"/timeout", map[string]any{"timeout": 900})
	if d := time.Until(w.get(t, w.member, s.SandboxID).EndAt); d < 890*time.Second {
		t.Fatalf("after a 900 s timeout it expires in %v", d)
	}
	wantE2BError(t, w.do(t, w.member, "POST", path+"/timeout", map[string]any{}), 400)
	wantE2BError(t, w.do(t, w.member, "POST", path+"/timeout", map[string]any{"timeout": 0}), 400)
	wantE2BError(t, w.do(t, w.member, "POST", path+"/timeout", map[string]any{"timeout": 86401}), 400)
	w.must(t, w.member, 204, "POST", path+"/refreshes", map[string]any{"duration": 60})
	// connect to a running sandbox only ever extends its window, as E2B's.
	w.must(t, w.member, 200, "POST", "/v2"+path+"/connect", map[string]any{"timeout": 10})
	if d := time.Until(w.get(t, w.member, s.SandboxID).EndAt); d < 880*time.Second {
		t.Fatalf("a connect with a shorter timeout cut the window to %v", d)
	}

	w.must(t, w.member, 204, "POST", path+"/timeout", map[string]any{"timeout": 20})
	paused, err := w.env.Runtimes.PauseIfExpired(t.Context(), s.SandboxID, time.Now().Add(5*time.Second))
	if err != nil || paused {
		t.Fatalf("before its expiry: paused %v, %v", paused, err)
	}
	// Past its expiry it pauses, once no operation holds it open (the
	// agent's configuration after the start may, for a moment; a hold
	// moves the expiry past the round's now, so each round is later).
	round := 0
	testenv.WaitFor(t, "the expired sandbox to pause", func() bool {
		round++
		paused, err := w.env.Runtimes.PauseIfExpired(t.Context(), s.SandboxID, time.Now().Add(time.Duration(round)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return paused
	})
	if got := w.get(t, w.member, s.SandboxID); got.State != "paused" {
		t.Fatalf("an expired sandbox: %+v", got)
	}
}

// TestList: pages with X-Next-Token, state and metadata filters as the
// SDK encodes them, the v1 listing of running sandboxes.
func TestList(t *testing.T) {
	w := newWorld(t)
	a := w.create(t, w.member, map[string]any{"templateID": "base", "metadata": map[string]string{"team": "a b&c=d", "n": "1"}})
	b := w.create(t, w.member, map[string]any{"templateID": "base", "metadata": map[string]string{"team": "x"}})
	c := w.create(t, w.member, map[string]any{"templateID": "base"})
	w.must(t, w.member, 204, "POST", "/sandboxes/"+b.SandboxID+"/pause", nil)

	list := func(query string) ([]sandbox, string) {
		t.Helper()
		var out []sandbox
		a := w.must(t, w.viewer, 200, "GET", "/v2/sandboxes"+query, nil)
		a.decode(t, &out)
		return out, a.header.Get("X-Next-Token")
	}
	ids := func(ss []sandbox) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.SandboxID)
		}
		return strings.Join(out, ",")
	}
	// Newest first, as E2B lists; oldest first with order=asc.
	page1, next := list("?limit=2")
	if ids(page1) != c.SandboxID+","+b.SandboxID || next == "" {
		t.Fatalf("page 1: %s, next %q", ids(page1), next)
	}
	wantE2BError(t, w.do(t, w.viewer, "GET", "/v2/sandboxes?order=asc&limit=2&nextToken="+url.QueryEscape(next), nil), 400)
	page2, next := list("?limit=2&nextToken=" + url.QueryEscape(next))
	if ids(page2) != a.SandboxID || next != "" {
		t.Fatalf("page 2: %s, next %q", ids(page2), next)
	}
	page1, next = list("?order=asc&limit=2")
	if ids(page1) != a.SandboxID+","+b.SandboxID || next == "" {
		t.Fatalf("oldest first, page 1: %s, next %q", ids(page1), next)
	}
	page2, _ = list("?order=asc&limit=2&nextToken=" + url.QueryEscape(next))
	if ids(page2) != c.SandboxID {
		t.Fatalf("oldest first, page 2: %s", ids(page2))
	}
	wantE2BError(t, w.do(t, w.viewer, "GET", "/v2/sandboxes?order=sideways", nil), 400)
	if got, _ := list("?state=paused"); ids(got) != b.SandboxID || got[0].State != "paused" {
		t.Fatalf("paused: %+v", got)
	}
	if got, _ := list("?state=running,paused"); len(got) != 3 {
		t.Fatalf("running and paused: %s", ids(got))
	}
	// As the JS SDK encodes {team: "a b&c=d"}: each part escaped, then
	// the query string, then the parameter.
	md := url.Values{url.PathEscape("team"): {url.PathEscape("a b&c=d")}}.Encode()
	if got, _ := list("?metadata=" + url.QueryEscape(md)); ids(got) != a.SandboxID || got[0].Metadata["n"] != "1" {
		t.Fatalf("metadata team=a b&c=d: %s", ids(got))
	}
	if got, _ := list("?metadata=" + url.QueryEscape("team=nobody")); len(got) != 0 {
		t.Fatalf("metadata team=nobody: %s", ids(got))
	}
	// A page holds up to limit of what the filter keeps, however many
	// records before them it passed over; the last page of what it keeps
	// has no next token, whatever records come after.
	if got, next := list("?limit=1&metadata=" + url.QueryEscape("team=x")); ids(got) != b.SandboxID || next != "" {
		t.Fatalf("limit 1, metadata team=x: %s, next %q", ids(got), next)
	}
	var v1 []sandbox
	w.must(t, w.member, 200, "GET", "/sandboxes", nil).decode(t, &v1)
	if ids(v1) != a.SandboxID+","+c.SandboxID {
		t.Fatalf("v1 lists %s", ids(v1))
	}
	wantE2BError(t, w.do(t, w.member, "GET", "/v2/sandboxes?state=gone", nil), 400)
	wantE2BError(t, w.do(t, w.member, "GET", "/v2/sandboxes?limit=0", nil), 400)
	wantE2BError(t, w.do(t, w.member, "GET", "/v2/sandboxes?nextToken=garbage", nil), 400)
}

// TestBadInput: bad bodies and settings are 400s that leave nothing
// behind; a start that fails removes what the create made.
func TestBadInput(t *testing.T) {
	w := newWorld(t)
	for _, body := range []any{
		"{not json",
		map[string]any{"templateID": "base", "timeout": 0},
		map[string]any{"templateID": "base", "timeout": 86401},
		map[string]any{"templateID": "base", "metadata": map[string]any{"n": 1}},
		map[string]any{"templateID": "base", "envVars": map[string]string{"1BAD": "x"}},
		map[string]any{"templateID": "base", "volumeMounts": []map[string]string{{"name": "v", "path": "/v"}}},
		map[string]any{"templateID": "no-such-template"},
		map[string]any{"templateID": "base", "network": map[string]any{"allowOut": []string{"not a rule!"}}},
	} {
		a := w.do(t, w.member, "POST", "/v2/sandboxes", body)
		if a.status != 400 {
			t.Fatalf("create %v: %d %s, want 400", body, a.status, a.body)
		}
		wantE2BError(t, a, 400)
	}
	w.env.Fake.FailNext(fake.OpStart, errStart)
	a := w.do(t, w.member, "POST", "/v2/sandboxes", map[string]any{"templateID": "base"})
	if a.status < 500 {
		t.Fatalf("a failed start answered %d %s", a.status, a.body)
	}
	var projects client.List[client.Project]
	w.env.Must(t, 200, "GET", "/api/v1/org/acme/ws/default/projects", nil).Decode(t, &projects)
	if len(projects.Items) != 0 {
		t.Fatalf("left behind: %+v", projects.Items)
	}
	var list []sandbox
	w.must(t, w.member, 200, "GET", "/v2/sandboxes", nil).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("listed after failures: %+v", list)
	}
}

var errStart = errorString("the engine refused to start the container")

type errorString string

func (e errorString) Error() string { return string(e) }

// TestMetrics: a running sandbox's cgroup, read by its agent, is one
// sample; a paused one has none; a viewer reads none.
func TestMetrics(t *testing.T) {
	w := newWorld(t)
	s := w.create(t, w.member, map[string]any{"templateID": "base"})
	path := "/sandboxes/" + s.SandboxID + "/metrics"
	var ms []struct {
		CPUCount   int     `json:"cpuCount"`
		CPUUsedPct float64 `json:"cpuUsedPct"`
		MemUsed    int64   `json:"memUsed"`
		MemTotal   int64   `json:"memTotal"`
		Timestamp  string  `json:"timestamp"`
	}
	// Reading the cgroup is activity (it keeps the sandbox from expiring),
	// which a viewer may not cause.
	wantE2BError(t, w.do(t, w.viewer, "GET", path, nil), 403)
	wantE2BError(t, w.do(t, w.viewer, "GET", "/sandboxes/metrics?sandbox_ids="+s.SandboxID, nil), 403)
	w.must(t, w.member, 200, "GET", path, nil).decode(t, &ms)
	// The fake's agent serves in this process: its cgroup is the test's.
	if len(ms) != 1 || ms[0].CPUCount < 1 || ms[0].MemUsed <= 0 || ms[0].MemTotal <= 0 || ms[0].CPUUsedPct < 0 || ms[0].Timestamp == "" {
		t.Fatalf("metrics %+v", ms)
	}
	var many struct {
		Sandboxes map[string]json.RawMessage `json:"sandboxes"`
	}
	w.must(t, w.member, 200, "GET", "/sandboxes/metrics?sandbox_ids="+s.SandboxID+",00000000-0000-4000-8000-000000000000", nil).decode(t, &many)
	if len(many.Sandboxes) != 1 || many.Sandboxes[s.SandboxID] == nil {
		t.Fatalf("metrics of many: %+v", many)
	}
	w.must(t, w.member, 204, "POST", "/sandboxes/"+s.SandboxID+"/pause", nil)
	w.must(t, w.member, 200, "GET", path, nil).decode(t, &ms)
	if len(ms) != 0 {
		t.Fatalf("a paused sandbox's metrics %+v", ms)
	}
	wantE2BError(t, w.do(t, w.member, "GET", "/sandboxes/metrics", nil), 400)
	wantE2BError(t, w.do(t, w.member, "GET", path+"?start=x", nil), 400)
}

// TestNetwork: no internet is network none, rules are the egress
// proxy's, E2B's default is open, or the installation's default where the
// provider does not offer open; internet asked for there is refused.
func TestNetwork(t *testing.T) {
	dial := shimtest.Serve(t)
	w := newWorldOffering(t, dial, provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen)
	mode := func(w *world, s sandbox) store.NetworkConfig {
		t.Helper()
		rt, err := w.env.Store.GetRuntime(t.Context(), s.SandboxID)
		if err != nil {
			t.Fatal(err)
		}
		return rt.Config.Network
	}
	if n := mode(w, w.create(t, w.member, map[string]any{"templateID": "base", "allow_internet_access": false})); n.Mode != "none" {
		t.Fatalf("no internet: %+v", n)
	}
	n := mode(w, w.create(t, w.member, map[string]any{"templateID": "base", "network": map[string]any{"allowOut": []string{"example.com"}}}))
	if n.Mode != "proxy" || len(n.Allow) != 1 || n.Allow[0] != "example.com" {
		t.Fatalf("allowOut: %+v", n)
	}

	closed := newWorldOffering(t, dial, provider.NetworkNone)
	if n := mode(closed, closed.create(t, closed.member, map[string]any{"templateID": "base"})); n.Mode != "none" {
		t.Fatalf("E2B's default where open is not offered: %+v", n)
	}
	wantE2BError(t, closed.do(t, closed.member, "POST", "/v2/sandboxes", map[string]any{"templateID": "base", "allow_internet_access": true}), 422)
}

// TestRateLimited: the surface spends the key's tokens of the API's rate
// limiter; over it, a 429 in E2B's shape with Retry-After, which the SDK
// turns into its RateLimitError.
func TestRateLimited(t *testing.T) {
	clock := testenv.NewClock(time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC))
	env := servertest.New(t, servertest.Options{NoSpecCheck: true, Now: clock.Now,
		Limits: api.Limits{PerKey: api.Rate{PerSecond: 1, Burst: 2}, PerClient: api.Rate{PerSecond: 1, Burst: 100}}})
	w := &world{env: env}
	for range 2 {
		wantE2BError(t, w.do(t, env.Key, "GET", "/v2/sandboxes", nil), 403) // an installation key: admitted, then refused
	}
	a := w.do(t, env.Key, "GET", "/v2/sandboxes", nil)
	wantE2BError(t, a, 429)
	if a.header.Get("Retry-After") == "" {
		t.Fatalf("a 429 without Retry-After: %v", a.header)
	}
}

// TestReadOnlyRootFallback: where the provider cannot bound a writable
// root, a sandbox is still made, its root read-only.
func TestReadOnlyRootFallback(t *testing.T) {
	dial := shimtest.Serve(t)
	w := newWorldWith(t, fake.Config{
		NoWritableRoot: true, Networks: []provider.NetworkPolicy{provider.NetworkOpen},
		Agent: func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) },
	})
	s := w.create(t, w.member, map[string]any{"templateID": "base"})
	rt, err := w.env.Store.GetRuntime(t.Context(), s.SandboxID)
	if err != nil {
		t.Fatal(err)
	}
	if rt.Config.RootFS == store.RootFSWritable || rt.Status != store.RuntimeRunning {
		t.Fatalf("the runtime %+v", rt)
	}
}
