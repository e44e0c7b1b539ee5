package mcp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// bearer adds a bearer credential to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// connectHTTP connects the SDK's client to the server's /mcp with key,
// the query (such as "?org=acme&ws=dev") after it.
func (e *env) connectHTTP(t *testing.T, key, query string) *sdk.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ct := &sdk.StreamableClientTransport{Endpoint: e.URL + "/mcp" + query, HTTPClient: &http.Client{Transport: bearer{key, tr}}, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// initialize is an MCP initialize request.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

// post sends one JSON-RPC message to /mcp with header and decodes an
// error body.
func (e *env) post(t *testing.T, header map[string]string, msg string) (*http.Response, client.Error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", e.URL+"/mcp", strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body client.Error
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp, body
}

// TestHTTPNeedsABearerKey: /mcp answers 401 with the API's error body to
// a request without a credential, with one that is not a key, or with
// only a cookie; with a key it speaks MCP.
func TestHTTPNeedsABearerKey(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
		code   string
	}{
		{"no credential", nil, 401, "missing_api_key"},
		{"a cookie only", map[string]string{"Cookie": "paddock_session=x"}, 401, "missing_api_key"},
		{"not a key", map[string]string{"Authorization": "Bearer pdk_" + strings.Repeat("0", 48)}, 401, ""},
		{"basic", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, 401, "missing_api_key"},
		{"a key", map[string]string{"Authorization": "Bearer " + e.member.Key}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := e.post(t, tc.header, initialize)
			if resp.StatusCode != tc.status || tc.code != "" && body.Code != tc.code {
				t.Fatalf("status %d, code %q; want %d %q", resp.StatusCode, body.Code, tc.status, tc.code)
			}
		})
	}
}

// TestHTTPRateLimited: requests to /mcp spend their key's tokens like any
// API request: past its burst, 429 with Retry-After.
func TestHTTPRateLimited(t *testing.T) {
	// A burst the set-up's calls with the admin key fit in.
	const burst = 30
	e := newEnvWith(t, api.Limits{PerKey: api.Rate{PerSecond: 0.001, Burst: burst}})
	auth := map[string]string{"Authorization": "Bearer " + e.member.Key}
	for i := range burst {
		if resp, body := e.post(t, auth, initialize); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %+v", i+1, resp.StatusCode, body)
		}
	}
	resp, body := e.post(t, auth, initialize)
	if resp.StatusCode != 429 || body.Code != "rate_limited" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("past the burst: %d %+v", resp.StatusCode, body)
	}
}

// TestHTTPTools: over /mcp, the tools act with the connecting key: the
// query's defaults apply, a member runs commands, a foreign key reaches
// nothing of acme's, a viewer cannot exec.
func TestHTTPTools(t *testing.T) {
	e := newEnv(t)
	id := e.startedRuntime(t, "box")
	cs := e.connectHTTP(t, e.member.Key, "?org=acme&ws=dev")
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(res.Tools) != len(allTools) {
		t.Fatalf("tools: %v, %v", res, err)
	}
	var ex mcp.ExecOutput
	call(t, cs, "exec", map[string]any{"runtime": "box", "argv": []string{"echo", "over http"}}, &ex)
	if ex.ExitCode != 0 || ex.Stdout != "over http\n" {
		t.Fatalf("exec = %+v", ex)
	}
	var list mcp.RuntimeList
	call(t, cs, "list_runtimes", nil, &list)
	if len(list.Runtimes) != 1 || list.Runtimes[0].ID != id {
		t.Fatalf("list = %+v", list)
	}
	// The member may not create projects: an admin's.
	wantToolError(t, cs, "create_runtime", map[string]any{"name": "mine"}, "role_too_low")

	foreign := e.connectHTTP(t, e.foreign.Key, "")
	wantToolError(t, foreign, "exec", map[string]any{"org": "acme", "workspace": "dev", "runtime": id, "command": "true"}, "org_not_found")
	wantToolError(t, foreign, "list_runtimes", map[string]any{"org": "acme", "workspace": "dev"}, "org_not_found")
	wantToolError(t, foreign, "list_runtimes", nil, "missing_org")

	viewer := e.connectHTTP(t, e.viewer.Key, "?org=acme&ws=dev")
	wantToolError(t, viewer, "exec", map[string]any{"runtime": id, "command": "true"}, "role_too_low")
}

// TestHTTPRevokedKey: revoking the key that connected ends the call it
// has under way at once, and refuses its next request.
func TestHTTPRevokedKey(t *testing.T) {
	e := newEnv(t)
	id := e.startedRuntime(t, "box")
	cs := e.connectHTTP(t, e.member.Key, "?org=acme&ws=dev")
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		// The client's own last message (the initialized notification) may
		// have its answer before the server lets go of its slot: a call
		// refused for that is made again.
		for {
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"runtime": id, "command": "sleep 600", "timeout_seconds": 900}})
			if err == nil || !strings.Contains(err.Error(), "Too Many Requests") || t.Context().Err() != nil {
				done <- res
				return
			}
		}
	}()
	// Once the command runs, the key is revoked.
	e.running(t, id, "sleep 600")
	e.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+e.member.ID, nil)
	select {
	case res := <-done:
		if res != nil && !res.IsError {
			t.Fatalf("the call of a revoked key ended with %s", textOf(res))
		}
	case <-time.After(testenv.Patience):
		t.Fatal("the call of a revoked key goes on")
	}
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "list_runtimes"}); err == nil {
		t.Fatal("a revoked key called a tool")
	}
}

// TestHTTPRequestsInFlightCapped: one user has at most MCPPerUser
// requests to /mcp in flight; past it a request is 429
// too_many_mcp_requests_per_user, and once one ends the next is served.
func TestHTTPRequestsInFlightCapped(t *testing.T) {
	e := newEnvWith(t, api.Limits{MCPPerUser: 1})
	id := e.startedRuntime(t, "box")
	cs := e.connectHTTP(t, e.member.Key, "?org=acme&ws=dev")
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		// The client's own last message (the initialized notification) may
		// have its answer before the server lets go of its slot: a call
		// refused for that is made again.
		for {
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"runtime": id, "command": "sleep 600", "timeout_seconds": 900}})
			if err == nil || !strings.Contains(err.Error(), "Too Many Requests") || t.Context().Err() != nil {
				done <- res
				return
			}
		}
	}()
	pid := e.running(t, id, "sleep 600")
	resp, body := e.post(t, map[string]string{"Authorization": "Bearer " + e.member.Key}, initialize)
	if resp.StatusCode != http.StatusTooManyRequests || body.Code != "too_many_mcp_requests_per_user" {
		t.Fatalf("a second request in flight: %d %+v", resp.StatusCode, body)
	}
	// Another user is not held back by this one's.
	if resp, body := e.post(t, map[string]string{"Authorization": "Bearer " + e.viewer.Key}, initialize); resp.StatusCode != http.StatusOK {
		t.Fatalf("another user's request: %d %+v", resp.StatusCode, body)
	}
	e.Must(t, 204, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+id+"/processes/"+pid+"/signal", client.SignalRequest{Signal: "KILL"})
	select {
	case <-done:
	case <-time.After(testenv.Patience):
		t.Fatal("the exec did not end")
	}
	testenv.Eventually(t, func() error {
		if resp, body := e.post(t, map[string]string{"Authorization": "Bearer " + e.member.Key}, initialize); resp.StatusCode != http.StatusOK {
			return fmt.Errorf("after the first ended: %d %+v", resp.StatusCode, body)
		}
		return nil
	})
}

// running waits until a process of runtime id whose command line holds
// cmd runs, and returns its id.
func (e *env) running(t *testing.T, id, cmd string) string {
	t.Helper()
	var pid string
	testenv.Eventually(t, func() error {
		var ps client.List[client.Process]
		e.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+id+"/processes", nil).Decode(t, &ps)
		for _, p := range ps.Items {
			if p.Running && strings.Contains(strings.Join(p.Argv, " "), cmd) {
				pid = p.ID
				return nil
			}
		}
		return errors.New("the command does not run yet")
	})
	return pid
}
