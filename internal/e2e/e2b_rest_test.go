package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// e2bCall sends a request to a live server's E2B REST API with key, to
// host when it is not "" (the e2b_domain's api.<domain>), and decodes a
// JSON answer into out (nil: none).
func e2bCall(t *testing.T, url, host, key string, want int, method, path string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	prefix := "/e2b"
	if host != "" {
		prefix = ""
	}
	req, err := http.NewRequest(method, url+prefix+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("X-API-KEY", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
	}
}

// TestE2BRESTOnDocker: an E2B sandbox on a live `paddock serve` with real
// Docker, configured with an e2b_domain: created from the base template
// with environment variables every process sees and a writable root,
// read, paused (its container paused), connected (running again) and
// killed (its container gone); the REST API answers at api.<domain> too.
func TestE2BRESTOnDocker(t *testing.T) {
	srv := testenv.Serve(t, testenv.ServeOptions{Image: testenv.DefaultImage,
		Args: []string{"--writable-root-unbounded"}, Env: []string{"PADDOCK_E2B_DOMAIN=e2b.test"}})
	admin, key := e2bKey(t, srv)
	ctx := t.Context()
	var s struct {
		SandboxID, TemplateID, EnvdVersion, EnvdAccessToken string
		Domain                                              *string
	}
	e2bCall(t, srv.URL, "", key, 201, "POST", "/v2/sandboxes", map[string]any{
		"templateID": "base", "timeout": 300, "metadata": map[string]string{"suite": "e2e"},
		"envVars": map[string]string{"GREETING": "hello from e2b"}, "allow_internet_access": false,
	}, &s)
	if s.SandboxID == "" || s.EnvdAccessToken == "" || s.Domain == nil || *s.Domain != "e2b.test" {
		t.Fatalf("created %+v", s)
	}
	res, err := admin.Exec(ctx, "acme", "default", s.SandboxID, pc.ExecRequest{
		Argv: []string{"sh", "-c", `echo "$GREETING"; id -un`}})
	if err != nil {
		t.Fatal(err)
	}
	if out := string(res.Stdout); res.Exit == nil || res.Exit.Code != 0 || out != "hello from e2b\nuser\n" {
		t.Fatalf("in the sandbox: %q, exit %+v", out, res.Exit)
	}
	res, err = admin.Exec(ctx, "acme", "default", s.SandboxID, pc.ExecRequest{User: "root",
		Argv: []string{"sh", "-c", `touch /etc/e2b-was-here && echo writable`}})
	if err != nil || res.Exit == nil || res.Exit.Code != 0 || string(res.Stdout) != "writable\n" {
		t.Fatalf("the root filesystem: %v %+v", err, res)
	}

	var d struct {
		State    string
		Metadata map[string]string
	}
	path := "/sandboxes/" + s.SandboxID
	e2bCall(t, srv.URL, "api.e2b.test", key, 200, "GET", path, nil, &d)
	if d.State != "running" || d.Metadata["suite"] != "e2e" {
		t.Fatalf("got %+v", d)
	}
	var ms []struct{ MemUsed, MemTotal int64 }
	e2bCall(t, srv.URL, "", key, 200, "GET", path+"/metrics", nil, &ms)
	if len(ms) != 1 || ms[0].MemUsed <= 0 || ms[0].MemTotal != 1<<30 {
		t.Fatalf("metrics %+v", ms)
	}

	e2bCall(t, srv.URL, "", key, 204, "POST", path+"/pause", nil, nil)
	e2bCall(t, srv.URL, "", key, 200, "GET", path, nil, &d)
	if d.State != "paused" {
		t.Fatalf("after pause: %+v", d)
	}
	e2bCall(t, srv.URL, "", key, 409, "POST", path+"/pause", nil, nil)
	e2bCall(t, srv.URL, "", key, 201, "POST", "/v2"+path+"/connect", map[string]any{"timeout": 120}, &s)
	res, err = admin.Exec(ctx, "acme", "default", s.SandboxID, pc.ExecRequest{Argv: []string{"cat", "/proc/1/status"}})
	if err != nil || res.Exit == nil || res.Exit.Code != 0 || !strings.Contains(string(res.Stdout), "State:") {
		t.Fatalf("after connect: %v %+v", err, res)
	}

	e2bCall(t, srv.URL, "", key, 204, "DELETE", path, nil, nil)
	e2bCall(t, srv.URL, "", key, 404, "GET", path, nil, nil)
	testenv.WaitFor(t, "the sandbox's container to go", func() bool {
		return len(containersOf(t, testenv.DockerClient(t), s.SandboxID)) == 0
	})
}

// e2bKey makes org acme with its workspace default on a live server, and
// a member's key there; it returns the installation admin's client too.
func e2bKey(t *testing.T, srv *testenv.Served) (*pc.Client, string) {
	t.Helper()
	admin, err := pc.New(srv.URL, srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := admin.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "default"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AddOrgMember(ctx, "acme", pc.AddOrgMemberRequest{Member: "ops@example.com", Role: "member"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AddMember(ctx, "acme", "default", pc.AddMemberRequest{Member: "ops@example.com"}); err != nil {
		t.Fatal(err)
	}
	key, err := admin.CreateKey(ctx, "acme", pc.CreateKeyRequest{Member: "ops@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return admin, key.Key
}
