package client_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/pkg/client"
)

// TestCapabilityRoutes checks what each capability and session method
// sends and how it reads the answer.
func TestCapabilityRoutes(t *testing.T) {
	ctx := context.Background()
	const rt = "/api/v1/org/acme/ws/dev/runtimes/" + rtID
	version := `{"source":"catalog","name":"git","version":"1.0.0","description":"git tools","digest":"sha256:ab","size_bytes":10,"contents":{"agents":[],"skills":["commit"],"tools":[],"mcp_servers":[],"workers":[],"setup":[],"checks":["git"],"flags":[{"name":"push","description":"may push","default":false}]}}`
	wantVersion := client.CapabilityVersion{
		Source: "catalog", Name: "git", Version: "1.0.0", Description: "git tools", Digest: "sha256:ab", SizeBytes: 10,
		Contents: client.CapabilityContents{
			Agents: []string{}, Skills: []string{"commit"}, Tools: []string{}, MCPServers: []string{}, Workers: []string{},
			Setup: []string{}, Checks: []string{"git"}, Flags: []client.CapabilityFlag{{Name: "push", Description: "may push"}},
		},
	}
	binding := `{"id":"b1","runtime_id":"` + rtID + `","source":"inventory","name":"git","version":"1.0.0","enabled":false,"config":{"flags":{"push":true}},"created_at":"` + stamp + `","updated_at":"` + stamp + `"}`
	wantBinding := client.CapabilityBinding{
		ID: "b1", RuntimeID: rtID, Source: "inventory", Name: "git", Version: "1.0.0",
		Config: client.BindingConfig{Flags: map[string]bool{"push": true}}, CreatedAt: mustTime(stamp), UpdatedAt: mustTime(stamp),
	}
	session := `{"id":"s1","runtime_id":"` + rtID + `","kind":"prompt","harness":"claude","status":"completed","title":"hi","turns":1,"created_at":"` + stamp + `","updated_at":"` + stamp + `"}`
	wantSession := client.Session{ID: "s1", RuntimeID: rtID, Kind: "prompt", Harness: "claude", Status: "completed", Title: "hi", Turns: 1, CreatedAt: mustTime(stamp), UpdatedAt: mustTime(stamp)}
	no := false
	tests := []struct {
		name   string
		answer string
		call   func(c *client.Client) (any, error)
		method string
		uri    string
		body   string // "" means none
		want   any
	}{
		{
			name: "catalog", answer: `{"items":[` + version + `]}`,
			call:   func(c *client.Client) (any, error) { return c.Catalog(ctx) },
			method: "GET", uri: "/api/v1/catalog",
			want: []client.CapabilityVersion{wantVersion},
		},
		{
			name: "inventory of one name", answer: `{"items":[]}`,
			call:   func(c *client.Client) (any, error) { return c.ListInventory(ctx, "acme", "git") },
			method: "GET", uri: "/api/v1/org/acme/capabilities?name=git",
			want: []client.CapabilityVersion{},
		},
		{
			name: "whole inventory", answer: `{"items":[]}`,
			call:   func(c *client.Client) (any, error) { return c.ListInventory(ctx, "acme", "") },
			method: "GET", uri: "/api/v1/org/acme/capabilities",
		},
		{
			name: "delete a version", answer: ``,
			call: func(c *client.Client) (any, error) {
				return nil, c.DeleteCapabilityVersion(ctx, "acme", "git", "1.0.0")
			},
			method: "DELETE", uri: "/api/v1/org/acme/capabilities/git/1.0.0",
		},
		{
			name: "list bindings", answer: `{"items":[` + binding + `]}`,
			call:   func(c *client.Client) (any, error) { return c.ListBindings(ctx, "acme", "dev", rtID) },
			method: "GET", uri: rt + "/capabilities",
			want: []client.CapabilityBinding{wantBinding},
		},
		{
			name: "install", answer: binding,
			call: func(c *client.Client) (any, error) {
				return c.InstallCapability(ctx, "acme", "dev", rtID, client.InstallCapabilityRequest{
					Name: "git", Source: client.SourceInventory, Enabled: &no,
					Config: &client.BindingConfig{Flags: map[string]bool{"push": true}},
				})
			},
			method: "POST", uri: rt + "/capabilities",
			body: `{"name":"git","source":"inventory","enabled":false,"config":{"flags":{"push":true}}}`,
			want: wantBinding,
		},
		{
			name: "resolved", answer: `{"runtime_id":"` + rtID + `","path":"/opt/paddock/capabilities","bindings":[],"agents":[],"skills":[{"name":"commit","capability":"git","path":"/opt/paddock/capabilities/git/skills/commit"}],"tools":[],"mcp_servers":[],"workers":[],"setup":[],"checks":[],"conflicts":[{"kind":"skill","name":"commit","capabilities":["git","vcs"]}]}`,
			call:   func(c *client.Client) (any, error) { return c.ResolvedCapabilities(ctx, "acme", "dev", rtID) },
			method: "GET", uri: rt + "/capabilities/resolved",
		},
		{
			name: "update a binding", answer: binding,
			call: func(c *client.Client) (any, error) {
				return c.UpdateBinding(ctx, "acme", "dev", rtID, "b1", client.UpdateBindingRequest{Enabled: &no, Version: "1.1.0"})
			},
			method: "PATCH", uri: rt + "/capabilities/b1",
			body: `{"enabled":false,"version":"1.1.0"}`,
			want: wantBinding,
		},
		{
			name: "uninstall", answer: ``,
			call: func(c *client.Client) (any, error) {
				return nil, c.UninstallCapability(ctx, "acme", "dev", rtID, "b1")
			},
			method: "DELETE", uri: rt + "/capabilities/b1",
		},
		{
			name: "prompt", answer: `{"session":` + session + `,"result":"hello","events":[]}`,
			call: func(c *client.Client) (any, error) {
				return c.Prompt(ctx, "acme", "dev", rtID, client.PromptRequest{Prompt: "hi", SessionID: "s1", TimeoutSeconds: 30})
			},
			method: "POST", uri: rt + "/prompt",
			body: `{"prompt":"hi","session_id":"s1","timeout_seconds":30}`,
			want: client.PromptResult{Session: wantSession, Result: "hello", Events: []client.SessionEvent{}},
		},
		{
			name: "task", answer: `{"session":` + session + `,"result":"","error":"boom","events":[]}`,
			call: func(c *client.Client) (any, error) {
				return c.Task(ctx, "acme", "dev", rtID, client.PromptRequest{Prompt: "go", Harness: "codex", Model: "m"})
			},
			method: "POST", uri: rt + "/task",
			body: `{"prompt":"go","harness":"codex","model":"m"}`,
		},
		{
			name: "list sessions", answer: `{"items":[` + session + `],"next_cursor":"c2"}`,
			call: func(c *client.Client) (any, error) {
				return c.ListSessions(ctx, "acme", "dev", rtID, client.ListOptions{Cursor: "c1", Limit: 2})
			},
			method: "GET", uri: rt + "/sessions?cursor=c1&limit=2",
			want: client.List[client.Session]{Items: []client.Session{wantSession}, NextCursor: "c2"},
		},
		{
			name: "get a session", answer: `{"id":"s1","runtime_id":"` + rtID + `","kind":"task","harness":"claude","status":"failed","title":"t","turns":1,"created_at":"` + stamp + `","updated_at":"` + stamp + `","events":[{"seq":1,"turn":1,"time":"` + stamp + `","type":"message","role":"user","text":"go"}]}`,
			call:   func(c *client.Client) (any, error) { return c.GetSession(ctx, "acme", "dev", rtID, "s1") },
			method: "GET", uri: rt + "/sessions/s1",
			want: client.SessionTranscript{
				Session: client.Session{ID: "s1", RuntimeID: rtID, Kind: "task", Harness: "claude", Status: "failed", Title: "t", Turns: 1, CreatedAt: mustTime(stamp), UpdatedAt: mustTime(stamp)},
				Events:  []client.SessionEvent{{Seq: 1, Turn: 1, Time: mustTime(stamp), Type: "message", Role: "user", Text: "go"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := http.StatusOK
			if tt.answer == "" {
				status = http.StatusNoContent
			}
			c, rec := canned(t, status, tt.answer)
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
			switch {
			case tt.body == "" && (rec.body != "" || rec.contentType != ""):
				t.Errorf("sent body %q (Content-Type %q), want none", rec.body, rec.contentType)
			case tt.body != "" && (rec.contentType != "application/json" || !jsonEqual(t, rec.body, tt.body)):
				t.Errorf("sent %s (Content-Type %q), want %s", rec.body, rec.contentType, tt.body)
			}
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestPushCapability sends the bundle as it is, as application/gzip, and
// maps the server's refusals to their kinds.
func TestPushCapability(t *testing.T) {
	c, rec := canned(t, http.StatusCreated, `{"id":"v1","source":"inventory","name":"git","version":"1.0.0","description":"","digest":"sha256:cd","size_bytes":4,"contents":{"agents":[],"skills":[],"tools":[],"mcp_servers":[],"workers":[],"setup":[],"checks":[],"flags":[]},"created_at":"`+stamp+`"}`)
	v, err := c.PushCapability(t.Context(), "acme", strings.NewReader("\x1f\x8b.."))
	if err != nil || v.ID != "v1" || v.Digest != "sha256:cd" || v.CreatedAt == nil || !v.CreatedAt.Equal(mustTime(stamp)) {
		t.Fatalf("push: %+v %v", v, err)
	}
	if rec.method != "POST" || rec.uri != "/api/v1/org/acme/capabilities" || rec.contentType != "application/gzip" || rec.body != "\x1f\x8b.." {
		t.Fatalf("sent %+v", rec)
	}

	tests := []struct {
		status int
		code   string
		kind   error
	}{
		{http.StatusBadRequest, "invalid_capability", client.ErrInvalidArgument},
		{http.StatusConflict, "capability_version_exists", client.ErrConflict},
		{http.StatusRequestEntityTooLarge, "body_too_large", client.ErrResourceExhausted},
	}
	for _, tt := range tests {
		c, _ := canned(t, tt.status, `{"code":"`+tt.code+`","message":"no"}`)
		_, err := c.PushCapability(t.Context(), "acme", strings.NewReader("x"))
		if !client.IsCode(err, tt.code) || !errors.Is(err, tt.kind) {
			t.Errorf("%d: err %v, want %s", tt.status, err, tt.code)
		}
	}
}
