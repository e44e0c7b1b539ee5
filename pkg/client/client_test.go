package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/pkg/client"
)

// recorded is what the canned server saw.
type recorded struct {
	method      string
	uri         string // escaped path and query, as sent
	auth        string
	userAgent   string
	contentType string
	body        string
}

// canned starts a server that records each request and answers status and
// body with a JSON content type.
func canned(t *testing.T, status int, body string) (*client.Client, *recorded) {
	t.Helper()
	rec := &recorded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*rec = recorded{
			method:      r.Method,
			uri:         r.RequestURI,
			auth:        r.Header.Get("Authorization"),
			userAgent:   r.Header.Get("User-Agent"),
			contentType: r.Header.Get("Content-Type"),
			body:        string(b),
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "pdk_test", client.WithUserAgent("sdk-test/1"))
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

const (
	rtID  = "0b9f6a3e-2a44-4a43-9d8e-5d2b0c1f7a10"
	sbID  = "5c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e"
	stamp = "2026-01-02T03:04:05Z"
)

func TestRoutes(t *testing.T) {
	ctx := context.Background()
	runtimeJSON := `{"id":"` + rtID + `","status":"running","config":{"image":"img"},"created_at":"` + stamp + `","updated_at":"` + stamp + `"}`
	sandboxJSON := `{"id":"` + sbID + `","kind":"runtime","state":"killed","provider":"docker","billed_credits":1.5,"created_at":"` + stamp + `","updated_at":"` + stamp + `"}`
	tests := []struct {
		name     string
		status   int
		answer   string
		call     func(c *client.Client) (any, error)
		method   string
		uri      string
		body     string // "" means no body and no Content-Type
		want     any
		needAuth bool
	}{
		{
			name: "health", status: 200, answer: `{"status":"ok","version":"1.2.3"}`,
			call:   func(c *client.Client) (any, error) { return c.Health(ctx) },
			method: "GET", uri: "/health",
			want: client.Health{Status: "ok", Version: "1.2.3"},
		},
		{
			name: "capabilities", status: 200, answer: `{"version":"1","default_provider":"docker","providers":{"docker":{"isolation":"container","pause":true,"agent":true,"networks":["none"],"snapshot":false}}}`,
			call:   func(c *client.Client) (any, error) { return c.Capabilities(ctx) },
			method: "GET", uri: "/api/capabilities",
			want: client.Capabilities{Version: "1", DefaultProvider: "docker", Providers: map[string]client.ProviderCapability{
				"docker": {Isolation: "container", Pause: true, Agent: true, Networks: []string{"none"}},
			}},
		},
		{
			name: "create org", status: 201, answer: `{"id":"o1","name":"acme","created_at":"` + stamp + `"}`,
			call:   func(c *client.Client) (any, error) { return c.CreateOrg(ctx, client.CreateOrgRequest{Name: "acme"}) },
			method: "POST", uri: "/api/v1/orgs", body: `{"name":"acme"}`,
			want: client.Org{ID: "o1", Name: "acme", CreatedAt: mustTime(stamp)},
		},
		{
			name: "list orgs", status: 200, answer: `{"items":[{"id":"o1","name":"acme"}],"next_cursor":"c2"}`,
			call: func(c *client.Client) (any, error) {
				return c.ListOrgs(ctx, client.ListOptions{Cursor: "c1", Limit: 5})
			},
			method: "GET", uri: "/api/v1/orgs?cursor=c1&limit=5",
			want: client.List[client.Org]{Items: []client.Org{{ID: "o1", Name: "acme"}}, NextCursor: "c2"},
		},
		{
			name: "get org escapes its name", status: 200, answer: `{"id":"o1","name":"acme"}`,
			call:   func(c *client.Client) (any, error) { return c.GetOrg(ctx, "a/b c?d") },
			method: "GET", uri: "/api/v1/org/a%2Fb%20c%3Fd",
			want: client.Org{ID: "o1", Name: "acme"},
		},
		{
			name: "create workspace", status: 201, answer: `{"id":"w1","org_id":"o1","name":"dev"}`,
			call: func(c *client.Client) (any, error) {
				return c.CreateWorkspace(ctx, "acme", client.CreateWorkspaceRequest{Name: "dev"})
			},
			method: "POST", uri: "/api/v1/org/acme/ws", body: `{"name":"dev"}`,
			want: client.Workspace{ID: "w1", OrgID: "o1", Name: "dev"},
		},
		{
			name: "list workspaces", status: 200, answer: `{"items":[]}`,
			call:   func(c *client.Client) (any, error) { return c.ListWorkspaces(ctx, "acme", client.ListOptions{}) },
			method: "GET", uri: "/api/v1/org/acme/ws",
			want: client.List[client.Workspace]{Items: []client.Workspace{}},
		},
		{
			name: "get workspace", status: 200, answer: `{"id":"w1","name":"dev"}`,
			call:   func(c *client.Client) (any, error) { return c.GetWorkspace(ctx, "acme", "dev") },
			method: "GET", uri: "/api/v1/org/acme/ws/dev",
			want: client.Workspace{ID: "w1", Name: "dev"},
		},
		{
			name: "create project", status: 201, answer: `{"id":"p1","name":"agent","runtime_id":"` + rtID + `"}`,
			call: func(c *client.Client) (any, error) {
				return c.CreateProject(ctx, "acme", "dev", client.CreateProjectRequest{
					Name: "agent", Runtime: &client.RuntimeConfig{Image: "img", CPUMillis: 500, MemoryMB: 256, IdleTimeoutSeconds: 60},
				})
			},
			method: "POST", uri: "/api/v1/org/acme/ws/dev/projects",
			body: `{"name":"agent","runtime":{"image":"img","cpu_millis":500,"memory_mb":256,"idle_timeout_seconds":60}}`,
			want: client.Project{ID: "p1", Name: "agent", RuntimeID: rtID},
		},
		{
			name: "list projects", status: 200, answer: `{"items":[{"id":"p1"}]}`,
			call: func(c *client.Client) (any, error) {
				return c.ListProjects(ctx, "acme", "dev", client.ListOptions{Limit: 2})
			},
			method: "GET", uri: "/api/v1/org/acme/ws/dev/projects?limit=2",
			want: client.List[client.Project]{Items: []client.Project{{ID: "p1"}}},
		},
		{
			name: "get project", status: 200, answer: `{"id":"p1"}`,
			call:   func(c *client.Client) (any, error) { return c.GetProject(ctx, "acme", "dev", "agent") },
			method: "GET", uri: "/api/v1/org/acme/ws/dev/projects/agent",
			want: client.Project{ID: "p1"},
		},
		{
			name: "delete project", status: 204, answer: ``,
			call: func(c *client.Client) (any, error) {
				return nil, c.DeleteProject(ctx, "acme", "dev", "agent")
			},
			method: "DELETE", uri: "/api/v1/org/acme/ws/dev/projects/agent",
		},
		{
			name: "list runtimes", status: 200, answer: `{"items":[` + runtimeJSON + `]}`,
			call:   func(c *client.Client) (any, error) { return c.ListRuntimes(ctx, "acme", "dev", client.ListOptions{}) },
			method: "GET", uri: "/api/v1/org/acme/ws/dev/runtimes",
			want: client.List[client.Runtime]{Items: []client.Runtime{wantRuntime()}},
		},
		{
			name: "get runtime", status: 200, answer: runtimeJSON,
			call:   func(c *client.Client) (any, error) { return c.GetRuntime(ctx, "acme", "dev", rtID) },
			method: "GET", uri: "/api/v1/org/acme/ws/dev/runtimes/" + rtID,
			want: wantRuntime(),
		},
		{
			name: "start runtime", status: 200, answer: runtimeJSON,
			call: func(c *client.Client) (any, error) {
				return c.StartRuntime(ctx, "acme", "dev", rtID, client.StartRuntimeRequest{SecretIDs: []string{"gh", "npm"}})
			},
			method: "POST", uri: "/api/v1/org/acme/ws/dev/runtimes/" + rtID + "/start", body: `{"secret_ids":["gh","npm"]}`,
			want: wantRuntime(),
		},
		{
			name: "start runtime without secrets", status: 200, answer: runtimeJSON,
			call: func(c *client.Client) (any, error) {
				return c.StartRuntime(ctx, "acme", "dev", rtID, client.StartRuntimeRequest{})
			},
			method: "POST", uri: "/api/v1/org/acme/ws/dev/runtimes/" + rtID + "/start", body: `{}`,
			want: wantRuntime(),
		},
		{
			name: "pause runtime", status: 200, answer: runtimeJSON,
			call:   func(c *client.Client) (any, error) { return c.PauseRuntime(ctx, "acme", "dev", rtID) },
			method: "POST", uri: "/api/v1/org/acme/ws/dev/runtimes/" + rtID + "/pause",
			want: wantRuntime(),
		},
		{
			name: "resume runtime", status: 200, answer: runtimeJSON,
			call:   func(c *client.Client) (any, error) { return c.ResumeRuntime(ctx, "acme", "dev", rtID) },
			method: "POST", uri: "/api/v1/org/acme/ws/dev/runtimes/" + rtID + "/resume",
			want: wantRuntime(),
		},
		{
			name: "reset runtime", status: 200, answer: runtimeJSON,
			call: func(c *client.Client) (any, error) {
				return c.ResetRuntime(ctx, "acme", "dev", rtID, client.ResetRequest{WipeWorkspace: true})
			},
			method: "POST", uri: "/api/v1/org/acme/ws/dev/runtimes/" + rtID + "/reset", body: `{"wipe_workspace":true}`,
			want: wantRuntime(),
		},
		{
			name: "keepalive runtime", status: 200, answer: runtimeJSON,
			call: func(c *client.Client) (any, error) {
				return c.KeepaliveRuntime(ctx, "acme", "dev", rtID, client.KeepaliveRequest{DurationSeconds: 600})
			},
			method: "POST", uri: "/api/v1/org/acme/ws/dev/runtimes/" + rtID + "/keepalive", body: `{"duration_seconds":600}`,
			want: wantRuntime(),
		},
		{
			name: "list sandboxes with a filter", status: 200, answer: `{"items":[` + sandboxJSON + `],"next_cursor":"n"}`,
			call: func(c *client.Client) (any, error) {
				return c.ListSandboxes(ctx, "acme", client.SandboxFilter{
					Kind: "runtime", State: "killed", Provider: "docker", RuntimeID: rtID, Cursor: "x y", Limit: 3,
				})
			},
			method: "GET", uri: "/api/v1/org/acme/sandboxes?cursor=x+y&kind=runtime&limit=3&provider=docker&runtime_id=" + rtID + "&state=killed",
			want: client.List[client.Sandbox]{Items: []client.Sandbox{wantSandbox()}, NextCursor: "n"},
		},
		{
			name: "list sandboxes unfiltered", status: 200, answer: `{"items":[]}`,
			call:   func(c *client.Client) (any, error) { return c.ListSandboxes(ctx, "acme", client.SandboxFilter{}) },
			method: "GET", uri: "/api/v1/org/acme/sandboxes",
			want: client.List[client.Sandbox]{Items: []client.Sandbox{}},
		},
		{
			name: "get sandbox by provider id", status: 200, answer: sandboxJSON,
			call:   func(c *client.Client) (any, error) { return c.GetSandbox(ctx, "acme", "3f2a9c1b7d6e") },
			method: "GET", uri: "/api/v1/org/acme/sandboxes/3f2a9c1b7d6e",
			want: wantSandbox(),
		},
		{
			name: "kill sandbox", status: 200, answer: sandboxJSON,
			call:   func(c *client.Client) (any, error) { return c.KillSandbox(ctx, "acme", sbID) },
			method: "DELETE", uri: "/api/v1/org/acme/sandboxes/" + sbID,
			want: wantSandbox(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec := canned(t, tt.status, tt.answer)
			got, err := tt.call(c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if rec.method != tt.method || rec.uri != tt.uri {
				t.Errorf("request = %s %s, want %s %s", rec.method, rec.uri, tt.method, tt.uri)
			}
			if rec.auth != "Bearer pdk_test" {
				t.Errorf("Authorization = %q", rec.auth)
			}
			if rec.userAgent != "sdk-test/1" {
				t.Errorf("User-Agent = %q", rec.userAgent)
			}
			if tt.body == "" {
				if rec.body != "" || rec.contentType != "" {
					t.Errorf("sent body %q (Content-Type %q), want none", rec.body, rec.contentType)
				}
			} else {
				if rec.contentType != "application/json" {
					t.Errorf("Content-Type = %q", rec.contentType)
				}
				if !jsonEqual(t, rec.body, tt.body) {
					t.Errorf("body = %s, want %s", rec.body, tt.body)
				}
			}
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func wantRuntime() client.Runtime {
	return client.Runtime{
		ID: rtID, Status: "running", Config: client.RuntimeConfig{Image: "img"},
		CreatedAt: mustTime(stamp), UpdatedAt: mustTime(stamp),
	}
}

func wantSandbox() client.Sandbox {
	return client.Sandbox{
		ID: sbID, Kind: "runtime", State: "killed", Provider: "docker", BilledCredits: 1.5,
		CreatedAt: mustTime(stamp), UpdatedAt: mustTime(stamp),
	}
}

func mustTime(s string) time.Time {
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return ts
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("bad JSON %q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("bad JSON %q: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestBadSegmentsSendNothing(t *testing.T) {
	ctx := context.Background()
	c, rec := canned(t, 200, `{}`)
	calls := map[string]func() error{
		"empty org":       func() error { _, err := c.GetOrg(ctx, ""); return err },
		"dot workspace":   func() error { _, err := c.GetWorkspace(ctx, "acme", "."); return err },
		"dotdot project":  func() error { return c.DeleteProject(ctx, "acme", "dev", "..") },
		"empty runtime":   func() error { _, err := c.PauseRuntime(ctx, "acme", "dev", ""); return err },
		"empty sandbox":   func() error { _, err := c.KillSandbox(ctx, "acme", ""); return err },
		"empty workspace": func() error { _, err := c.ListProjects(ctx, "acme", "", client.ListOptions{}); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, client.ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument", err)
			}
			if rec.method != "" {
				t.Fatalf("a request was sent: %s %s", rec.method, rec.uri)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		url     string
		key     string
		base    string
		wantErr bool
	}{
		{url: "http://127.0.0.1:8080", base: "http://127.0.0.1:8080"},
		{url: "https://example.com/", base: "https://example.com"},
		{url: " https://example.com/paddock/ ", base: "https://example.com/paddock"},
		{url: "https://example.com/a%20b", base: "https://example.com/a%20b"},
		{url: "", wantErr: true},
		{url: "127.0.0.1:8080", wantErr: true},
		{url: "ftp://example.com", wantErr: true},
		{url: "http://", wantErr: true},
		{url: "http://user:pw@example.com", wantErr: true},
		{url: "http://example.com/?x=1", wantErr: true},
		{url: "http://example.com", key: "pdk_a\r\nX-Evil: 1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			c, err := client.New(tt.url, tt.key)
			if tt.wantErr {
				if !errors.Is(err, client.ErrInvalidArgument) {
					t.Fatalf("err = %v, want ErrInvalidArgument", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.BaseURL(); got != tt.base {
				t.Fatalf("BaseURL = %q, want %q", got, tt.base)
			}
		})
	}
}

func TestBasePathPrefix(t *testing.T) {
	var uri string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri = r.RequestURI
		_, _ = io.WriteString(w, `{"id":"o1"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL+"/paddock/", "pdk_x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetOrg(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	if uri != "/paddock/api/v1/org/acme" {
		t.Fatalf("uri = %q", uri)
	}
}

func TestNoKeyNoHeader(t *testing.T) {
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Values("Authorization")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(auth) != 0 {
		t.Fatalf("Authorization sent: %q", auth)
	}
}

func TestMalformedSuccessBody(t *testing.T) {
	c, _ := canned(t, 200, `{"id":`)
	_, err := c.GetOrg(context.Background(), "acme")
	if err == nil {
		t.Fatal("no error for a truncated body")
	}
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		t.Fatalf("a decoding failure is not an API error: %v", err)
	}
}

func TestTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := client.New(url, "pdk_x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListOrgs(context.Background(), client.ListOptions{})
	if err == nil || strings.Contains(err.Error(), "pdk_x") {
		t.Fatalf("err = %v", err)
	}
}
